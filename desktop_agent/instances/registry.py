"""The API token and the registry of live instances in the data dir, and stop-all across them.

Every process that serves the API writes `<data dir>/instances/<pid>.json`
(`{"pid", "port", "started_at", "process_started", "face"}`; face: app, run, serve or mcp)
and removes it on exit; an entry whose process is gone (or whose pid now belongs to a later
process) is stale, ignored and removed by whoever lists the instances. The token never goes
to another instance: the listener on a listed port must first prove it holds it
(`identity_proof`), handing out a fresh challenge with the proof, and the request that
follows (stop-all, an approval for the app) carries a proof bound to that challenge, its
port and the request (`request_proof`) instead of the token — so a stranger who takes the
port after the proof (the instance ended in between) learns nothing it can use.
stop-all's client, the proofs and the constants they share are in stop_all.py (standard
library only: `desktop-agent stop-all` runs it before anything else); aiohttp is imported only
inside `ask_app_instance`.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import re
import secrets
import stat
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_agent.core.errors import ConfigError
from desktop_agent.instances import stop_all

# the names instances.py has always offered, now made in stop_all.py (stdlib only)
from desktop_agent.instances.stop_all import IDENTITY_PATH as IDENTITY_PATH
from desktop_agent.instances.stop_all import INSTANCES_DIR as INSTANCES_DIR
from desktop_agent.instances.stop_all import MIN_TOKEN_CHARS as MIN_TOKEN_CHARS
from desktop_agent.instances.stop_all import NONCE_HEX_CHARS as NONCE_HEX_CHARS
from desktop_agent.instances.stop_all import PROOF_MAX_BYTES as PROOF_MAX_BYTES
from desktop_agent.instances.stop_all import PROOF_SCHEME as PROOF_SCHEME
from desktop_agent.instances.stop_all import STOP_ALL_PATH as STOP_ALL_PATH
from desktop_agent.instances.stop_all import STOP_ALL_TIMEOUT_S as STOP_ALL_TIMEOUT_S
from desktop_agent.instances.stop_all import TOKEN_FILE as TOKEN_FILE
from desktop_agent.instances.stop_all import (
    Notice,
    challenge_of,
    instance_file_names,
    mac,
    mark_stop_all,
    new_nonce,
    parse_instance,
    reason,
    stop_everywhere,
)
from desktop_agent.instances.stop_all import identity_proof as identity_proof
from desktop_agent.instances.stop_all import request_proof as request_proof
from desktop_agent.instances.stop_all import signed_headers as signed_headers
from desktop_agent.store.private_files import (
    exclusive_lock,
    make_private_dir,
    remove_file,
    replace_file,
)
from desktop_agent.store.process import ProcessIdentity, is_alive, process_identity

if TYPE_CHECKING:
    from desktop_agent.core.models import ApprovalDecision, ApprovalRequest

log = logging.getLogger(__name__)

TOKEN_LOCK_FILE = "api-token.lock"
#: held while an instance file is written or a stale one removed (in INSTANCES_DIR)
REGISTRY_LOCK_FILE = ".lock"
#: how long a challenge from the identity route may be used (once)
CHALLENGE_TTL_S = 10.0


@dataclass(frozen=True, slots=True)
class Instance:
    """One live process serving the API on this data dir."""

    pid: int
    port: int
    started_at: str
    path: Path
    #: the OS start time of the process (ProcessIdentity.started); "" in files of older versions
    process_started: str = ""
    #: what the process is: "app" (a window with approval dialogs), "run", "serve", "mcp";
    #: "" in files of older versions
    face: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


# ── the token ────────────────────────────────────────────────────────────────


def read_token(data_dir: Path) -> str | None:
    """The data dir's API token; None when there is none (or the file holds no usable token)."""
    token, problem = stop_all.read_token(str(data_dir))
    if problem:
        log.warning("%s", problem)
    return token


def ensure_token(data_dir: Path) -> str:
    """The data dir's API token, made (mode 0600, at once complete) when there is none yet.

    Race-safe between processes: the check and the making happen under a lock on
    `api-token.lock`, and a new token is written to a private temporary file and
    renamed into place, so a reader without the lock sees the old file or the new one
    whole, never part of one.
    """
    data_dir = Path(data_dir)
    path = data_dir / TOKEN_FILE
    try:
        make_private_dir(data_dir)
        token = read_token(data_dir)  # the common case, no lock needed
        if token is None:
            with exclusive_lock(data_dir / TOKEN_LOCK_FILE):
                token = read_token(data_dir)  # another process may have made it meanwhile
                if token is None:
                    token = _write_token(path, replace=path.exists())
        _restrict(path)
    except OSError as error:
        raise ConfigError(f"cannot write the API token {path}: {reason(error)}") from None
    return token


def _write_token(path: Path, *, replace: bool) -> str:
    token = secrets.token_urlsafe(32)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(token + "\n")
            file.flush()
            os.fsync(file.fileno())
        if replace:
            log.warning("the API token %s held no usable token; made a new one", path)
        replace_file(temporary, path)  # a reader may hold it open (Windows)
    finally:
        temporary.unlink(missing_ok=True)
    return token


def _restrict(path: Path) -> None:
    """Keep the token readable by its owner only."""
    if sys.platform == "win32":
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("the API token %s was readable by others (%o); made it 0600", path, mode)
        path.chmod(0o600)


# ── the instance registry ────────────────────────────────────────────────────


def register_instance(data_dir: Path, port: int, *, pid: int | None = None, face: str = "") -> Path:
    """Write `instances/<pid>.json` for a process serving the API on `port`; its path."""
    pid = os.getpid() if pid is None else pid
    folder = Path(data_dir) / INSTANCES_DIR
    path = folder / f"{pid}.json"
    from desktop_agent.core.models import utcnow

    identity = process_identity(pid)
    body = {
        "pid": pid,
        "port": port,
        "started_at": utcnow().isoformat(),
        "process_started": identity.started if identity is not None else "",
        "face": face,
    }
    try:
        make_private_dir(folder)
        temporary = folder / f".{pid}.{secrets.token_hex(4)}.tmp"
        temporary.write_text(json.dumps(body), encoding="utf-8")
        with exclusive_lock(folder / REGISTRY_LOCK_FILE):
            replace_file(temporary, path)  # a lister may hold it open (Windows)
    except OSError as error:
        raise ConfigError(f"cannot register this instance in {folder}: {reason(error)}") from None
    return path


def unregister_instance(path: Path, port: int) -> None:
    """Remove an instance file, unless it now describes another server."""
    instance = _parse(path)
    if instance is not None and instance.port != port:
        return
    try:
        remove_file(path)
    except OSError as error:
        log.warning("cannot remove the instance file %s: %s", path, reason(error))


def live_instances(data_dir: Path) -> list[Instance]:
    """The instances whose process lives (pid and start time); stale or unreadable entries
    are removed.

    A removal happens under the registry lock and only after the file, read again, is
    still stale: a process of a reused pid may have just written its own file there, and
    stop-all must not lose it.
    """
    folder = Path(data_dir) / INSTANCES_DIR
    if not folder.is_dir():
        return []
    live = []
    for path in (folder / name for name in instance_file_names(str(folder))):
        instance = _live(path)
        if instance is None:
            try:
                with exclusive_lock(folder / REGISTRY_LOCK_FILE):
                    instance = _live(path, remove=True)
            except OSError as error:
                log.warning("cannot remove %s: %s", path, reason(error))
        if instance is not None:
            live.append(instance)
    return sorted(live, key=lambda instance: instance.pid)


def _live(path: Path, *, remove: bool = False) -> Instance | None:
    """The instance of `path` if its process lives; else None, and with `remove` the
    file is removed with a log line."""
    instance = _parse(path)
    if instance is not None and is_alive(ProcessIdentity(instance.pid, instance.process_started)):
        return instance
    if remove and path.exists():
        if instance is None:
            log.info("removing the unreadable instance file %s", path)
        else:
            log.info("removing the stale instance file %s (pid %d is gone)", path, instance.pid)
        remove_file(path)
    return None


def _parse(path: Path) -> Instance | None:
    try:
        fields = parse_instance(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return None if fields is None else Instance(path=path, **fields)


# ── proving a listener is ours ───────────────────────────────────────────────


def is_nonce(text: str) -> bool:
    """A client's nonce: exactly NONCE_HEX_CHARS lowercase hex digits."""
    return len(text) == NONCE_HEX_CHARS and all(char in "0123456789abcdef" for char in text)


def _challenge_mac(token: str, port: int, stamp: str, nonce: str) -> str:
    return mac(token, f"desktop-agent challenge\n{port}\n{stamp}\n{nonce}")


class Challenges:
    """The server's side of signed requests: challenges it issued (stateless: a time, a
    random part and a MAC under the token) and those used already (each works once,
    within CHALLENGE_TTL_S)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._used: dict[str, float] = {}

    def issue(self, token: str, port: int) -> str:
        stamp = str(int(self._clock() * 1000))
        nonce = secrets.token_hex(16)
        return f"{stamp}.{nonce}.{_challenge_mac(token, port, stamp, nonce)}"

    def accept(self, token: str, port: int, credentials: str, method: str, path: str) -> bool:
        """Does `credentials` ("<challenge> <proof>") sign this request with a challenge
        this server issued, not expired and not used before? Uses it up when it does."""
        challenge, _, proof = credentials.strip().partition(" ")
        stamp, _, rest = challenge.partition(".")
        nonce, _, mac = rest.partition(".")
        if not (stamp.isdigit() and nonce and mac) or not token:
            return False
        expected = _challenge_mac(token, port, stamp, nonce)
        if not hmac.compare_digest(mac.encode("utf-8", "replace"), expected.encode("ascii")):
            return False
        now = self._clock()
        if not 0 <= now - int(stamp) / 1000 <= CHALLENGE_TTL_S:
            return False
        self._used = {used: at for used, at in self._used.items() if now - at <= CHALLENGE_TTL_S}
        if challenge in self._used:
            return False
        signed = request_proof(token, port, challenge, method, path)
        if not hmac.compare_digest(proof.strip().encode("utf-8", "replace"), signed.encode()):
            return False
        self._used[challenge] = now
        return True


# ── stop-all ─────────────────────────────────────────────────────────────────


async def stop_all_instances(
    data_dir: Path,
    *,
    exclude_pid: int | None = None,
    timeout_s: float = STOP_ALL_TIMEOUT_S,
    marked: bool = False,
) -> int:
    """`stop_all_blocking` off the event loop (it blocks on sockets)."""
    import asyncio

    return await asyncio.to_thread(
        stop_all_blocking, data_dir, exclude_pid=exclude_pid, timeout_s=timeout_s, marked=marked
    )


def stop_all_blocking(
    data_dir: Path,
    *,
    exclude_pid: int | None = None,
    timeout_s: float = STOP_ALL_TIMEOUT_S,
    marked: bool = False,
) -> int:
    """Ask every live instance to stop all its runs, all at once; the total number of runs
    stopped, within `timeout_s` overall.

    Only a listener that first proved it holds the token (an HMAC of a fresh nonce and its
    port) is asked, with a proof bound to its challenge and the request, never the token
    itself; redirects are never followed. An instance that does not answer, answers with an
    error or fails the proof is skipped with a log line (stop_all.stop_everywhere: the
    standard library, one thread per instance). `marked`: the caller marked this stop-all
    already (host.py `Host.stop_everything`); else it is marked here first.
    """
    if not marked:
        mark_stop_all(str(data_dir))  # before the registry is read: see STOP_MARK_FILE
    listeners = [(i.pid, i.port) for i in live_instances(data_dir) if i.pid != exclude_pid]
    if not listeners:
        return 0
    token = read_token(data_dir)
    if token is None:
        log.warning("%d instance(s) registered but no API token in %s", len(listeners), data_dir)
        return 0
    stopped, notices = stop_everywhere(listeners, token, timeout_s)
    log_notices(notices)
    return stopped


def log_notices(notices: Iterable[Notice]) -> None:
    """stop_all.py's notices, as this module's log lines."""
    for level, line in notices:
        log.log(level, "%s", line)


# ── asking the app's user ────────────────────────────────────────────────────

#: the route of the app's API that shows another process's approval in the app's dialog
ASK_PATH = "/api/approvals/ask"
#: beyond the approval's own timeout, how long the app may take to answer
ASK_GRACE_S = 5.0
#: the requests one instance sends another: signed with a challenge, never the token
SIGNED_ROUTES = frozenset({("POST", STOP_ALL_PATH), ("POST", ASK_PATH)})
#: and a stop, pause or resume of one run, forwarded to the instance that runs it
_CONTROL_PATH = re.compile(r"/api/tasks/[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}/(stop|pause|resume)")


def is_signed_route(method: str, path: str) -> bool:
    """May a request from another instance (signed with a challenge) go to this route?"""
    if (method, path) in SIGNED_ROUTES:
        return True
    return method == "POST" and _CONTROL_PATH.fullmatch(path) is not None


async def control_elsewhere(
    data_dir: Path,
    run_id: str,
    action: str,
    *,
    exclude_pid: int,
    timeout_s: float = STOP_ALL_TIMEOUT_S,
) -> int | None:
    """`control_elsewhere_blocking` off the event loop (it blocks on sockets)."""
    import asyncio

    return await asyncio.to_thread(
        control_elsewhere_blocking,
        data_dir,
        run_id,
        action,
        exclude_pid=exclude_pid,
        timeout_s=timeout_s,
    )


def control_elsewhere_blocking(
    data_dir: Path,
    run_id: str,
    action: str,
    *,
    exclude_pid: int,
    timeout_s: float = STOP_ALL_TIMEOUT_S,
) -> int | None:
    """Ask the other live instances, all at once, to `action` (stop, pause, resume) the run
    `run_id`, which this one does not run: the pid of the instance that did, None when none
    did (none runs it, or one did not prove itself or answer within `timeout_s`: logged).

    As stop-all: only a listener that proved it holds the token is asked, with a request
    signed with its challenge (never the token); an instance asked so does not forward it
    again (api/routes.py)."""
    from desktop_agent.instances.stop_all import exchange, proven_challenge

    others = [i for i in live_instances(data_dir) if i.pid != exclude_pid]
    token = read_token(data_dir) if others else None
    if token is None:
        return None
    path = f"/api/tasks/{run_id}/{action}"
    deadline = time.monotonic() + timeout_s

    def ask(instance: Instance) -> int | None:
        try:
            challenge = proven_challenge(instance.port, token, deadline)
            if challenge is None:
                log.warning("the listener on port %d did not prove it is ours", instance.port)
                return None
            headers = signed_headers(token, instance.port, challenge, "POST", path)
            status, _ = exchange(instance.port, "POST", path, headers, deadline)
        except (OSError, ValueError) as error:
            log.warning("instance pid %d was not asked to %s run %s: %s",
                        instance.pid, action, run_id, reason(error))  # fmt: skip
            return None
        return instance.pid if status == 200 else None

    # at once: one instance that does not answer must not keep the one that runs it waiting
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(others), thread_name_prefix=f"{action} elsewhere") as pool:
        taken = [pid for pid in pool.map(ask, others) if pid is not None]
    return taken[0] if taken else None


async def ask_app_instance(
    data_dir: Path, approval: ApprovalRequest, *, exclude_pid: int | None = -1
) -> ApprovalDecision | None:
    """Ask the user of the desktop app running on `data_dir` (its approval dialog); the answer,
    or None when no app runs there or it could not be asked (the caller asks elsewhere).

    Like stop-all, only a listener that proved it holds the token is asked, with a request
    signed with its challenge (never the token).
    `exclude_pid`: this process by default (-1).
    """
    from desktop_agent.core.models import ApprovalDecision

    own = os.getpid() if exclude_pid == -1 else exclude_pid
    apps = [i for i in live_instances(data_dir) if i.face == "app" and i.pid != own]
    token = read_token(data_dir) if apps else None
    if not apps or token is None:
        return None
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=approval.timeout_s + ASK_GRACE_S)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        for instance in apps:
            try:
                proven = await _proves_identity(session, instance, token)
                if proven is None:
                    log.warning("the app on port %d did not prove it is ours", instance.port)
                    continue
                async with session.post(
                    f"{instance.url}{ASK_PATH}",
                    json=approval.to_json(),
                    headers=signed_headers(token, instance.port, proven, "POST", ASK_PATH),
                    allow_redirects=False,
                ) as response:
                    body = await _small_json(response) if response.status == 200 else None
            except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as error:
                log.warning("the app on port %d was not reached: %s", instance.port, reason(error))
                continue
            decision = body.get("decision") if isinstance(body, dict) else None
            if decision in {d.value for d in ApprovalDecision}:
                return ApprovalDecision(decision)
            log.warning("the app on port %d gave no answer to an approval", instance.port)
    return None


async def _proves_identity(session: Any, instance: Instance, token: str) -> str | None:
    """`stop_all.proven_challenge` over an aiohttp session (the app's approval question)."""
    nonce = new_nonce()
    url = f"{instance.url}{IDENTITY_PATH}"
    async with session.get(url, params={"nonce": nonce}, allow_redirects=False) as response:
        if response.status != 200:
            return None
        body = await _small_json(response)
    return challenge_of(body, token, nonce, instance.port)


async def _small_json(response: Any) -> Any:
    """The JSON of an aiohttp answer of at most PROOF_MAX_BYTES; None when it is bigger (a
    stranger on the port may answer with anything, of any size: never read more)."""
    data = b""
    while len(data) <= PROOF_MAX_BYTES:
        chunk = await response.content.read(PROOF_MAX_BYTES + 1 - len(data))
        if not chunk:
            break
        data += chunk
    return None if len(data) > PROOF_MAX_BYTES else json.loads(data)
