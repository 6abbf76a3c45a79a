"""The API token and the registry of live instances in the data dir, and stop-all across them.

Every process that serves the API writes `<data dir>/instances/<pid>.json`
(`{"pid", "port", "started_at"}`) and removes it on exit; an entry whose process
is gone is stale, ignored and removed by whoever lists the instances. aiohttp is
imported only inside `stop_all_instances`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from desktop_agent.core.errors import ConfigError
from desktop_agent.core.models import utcnow
from desktop_agent.store.process import process_identity

log = logging.getLogger(__name__)

TOKEN_FILE = "api-token"
INSTANCES_DIR = "instances"
MIN_TOKEN_CHARS = 16
STOP_ALL_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class Instance:
    """One live process serving the API on this data dir."""

    pid: int
    port: int
    started_at: str
    path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


# ── the token ────────────────────────────────────────────────────────────────


def read_token(data_dir: Path) -> str | None:
    """The data dir's API token; None when there is none (or the file holds no usable token)."""
    path = Path(data_dir) / TOKEN_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        log.warning("cannot read the API token %s: %s", path, _reason(error))
        return None
    token = text.strip()
    if len(token) < MIN_TOKEN_CHARS or any(char.isspace() for char in token):
        return None
    return token


def ensure_token(data_dir: Path) -> str:
    """The data dir's API token, made (mode 0600, at once complete) when there is none yet.

    Race-safe between processes: each candidate is written to a private temporary
    file and hard-linked into place, which fails when another process won; then
    everybody reads the winner's token.
    """
    data_dir = Path(data_dir)
    path = data_dir / TOKEN_FILE
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        for _ in range(3):
            token = read_token(data_dir)
            if token is not None:
                _restrict(path)
                return token
            _write_token(path, replace=path.exists())
    except OSError as error:
        raise ConfigError(f"cannot write the API token {path}: {_reason(error)}") from None
    raise ConfigError(f"cannot make a usable API token in {path}")


def _write_token(path: Path, *, replace: bool) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(secrets.token_urlsafe(32) + "\n")
            file.flush()
            os.fsync(file.fileno())
        if replace:
            log.warning("the API token %s held no usable token; made a new one", path)
            os.replace(temporary, path)
            return
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process made it first: its token wins
        except OSError:
            # No hard links on this file system: the exclusive create still picks one winner.
            _create_exclusive(path, temporary.read_text(encoding="utf-8"))
    finally:
        temporary.unlink(missing_ok=True)


def _create_exclusive(path: Path, text: str) -> None:
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)


def _restrict(path: Path) -> None:
    """Keep the token readable by its owner only."""
    if sys.platform == "win32":
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("the API token %s was readable by others (%o); made it 0600", path, mode)
        path.chmod(0o600)


# ── the instance registry ────────────────────────────────────────────────────


def register_instance(data_dir: Path, port: int, *, pid: int | None = None) -> Path:
    """Write `instances/<pid>.json` for a process serving the API on `port`; its path."""
    pid = os.getpid() if pid is None else pid
    folder = Path(data_dir) / INSTANCES_DIR
    path = folder / f"{pid}.json"
    body = {"pid": pid, "port": port, "started_at": utcnow().isoformat()}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{pid}.{secrets.token_hex(4)}.tmp"
        temporary.write_text(json.dumps(body), encoding="utf-8")
        os.replace(temporary, path)
    except OSError as error:
        raise ConfigError(f"cannot register this instance in {folder}: {_reason(error)}") from None
    return path


def unregister_instance(path: Path, port: int) -> None:
    """Remove an instance file, unless it now describes another server."""
    instance = _parse(path)
    if instance is not None and instance.port != port:
        return
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        log.warning("cannot remove the instance file %s: %s", path, _reason(error))


def live_instances(data_dir: Path) -> list[Instance]:
    """The instances whose process lives, by pid; stale or unreadable entries are removed."""
    folder = Path(data_dir) / INSTANCES_DIR
    if not folder.is_dir():
        return []
    live = []
    for path in sorted(folder.glob("*.json")):
        instance = _parse(path)
        if instance is None:
            log.info("removing the unreadable instance file %s", path)
        elif process_identity(instance.pid) is None:
            log.info("removing the stale instance file %s (pid %d is gone)", path, instance.pid)
        else:
            live.append(instance)
            continue
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            log.warning("cannot remove %s: %s", path, _reason(error))
    return sorted(live, key=lambda instance: instance.pid)


def _parse(path: Path) -> Instance | None:
    try:
        body: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict):
        return None
    pid, port, started_at = body.get("pid"), body.get("port"), body.get("started_at")
    if not (_is_int(pid) and _is_int(port)) or pid <= 0 or not 0 < port < 65536:
        return None
    return Instance(pid=pid, port=port, started_at=str(started_at or ""), path=path)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# ── stop-all ─────────────────────────────────────────────────────────────────


async def stop_all_instances(
    data_dir: Path, *, exclude_pid: int | None = None, timeout_s: float = STOP_ALL_TIMEOUT_S
) -> int:
    """Ask every live instance to stop all its runs; the total number of runs stopped.

    An instance that does not answer (or answers with an error) is skipped with a log line.
    """
    instances = [i for i in live_instances(data_dir) if i.pid != exclude_pid]
    if not instances:
        return 0
    token = read_token(data_dir)
    if token is None:
        log.warning("%d instance(s) registered but no API token in %s", len(instances), data_dir)
        return 0
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=timeout_s)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        counts = await asyncio.gather(
            *(_stop_instance(session, instance, token) for instance in instances)
        )
    return sum(counts)


async def _stop_instance(session: Any, instance: Instance, token: str) -> int:
    import aiohttp

    url = f"{instance.url}/api/tasks/stop-all"
    try:
        async with session.post(url, headers={"Authorization": f"Bearer {token}"}) as response:
            if response.status != 200:
                log.warning(
                    "instance pid %d on port %d answered stop-all with HTTP %d",
                    instance.pid,
                    instance.port,
                    response.status,
                )
                return 0
            body = await response.json()
    except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as error:
        log.warning(
            "instance pid %d on port %d did not answer stop-all: %s",
            instance.pid,
            instance.port,
            _reason(error),
        )
        return 0
    stopped = body.get("stopped") if isinstance(body, dict) else None
    return stopped if _is_int(stopped) else 0


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__
