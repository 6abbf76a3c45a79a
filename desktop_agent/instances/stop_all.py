"""stop-all across the live instances of a data dir, with the standard library alone.

`desktop-agent stop-all` runs this from a fresh process before anything else of the package
(desktop_agent/__main__.py): it imports os, json, the interpreter's own SHA-256 and _socket
(threading when there are several instances) and store.liveness; not argparse, logging,
pathlib, dataclasses, typing, secrets or http.client, which took half of the command's time,
nor hmac, hashlib (OpenSSL) or socket.py (benchmarks/README.md).
instances.py (the registry, the token, the server's challenges) builds on what is here, so
the app's stop-everything and the command speak to the instances with one client.

The exchange with each instance, both requests on loopback at once for all instances:

    GET IDENTITY_PATH?nonce=<fresh>    → 200 {"proof": HMAC(token, port, nonce), "challenge": c}
    POST STOP_ALL_PATH                 → 200 {"stopped": n}
        Authorization: Proof <c> <HMAC(token, port, "POST " + STOP_ALL_PATH, c)>

The token is never sent: a listener that cannot prove it holds it is never asked, and what
it is sent then is good once, on its port, for that request only (docs/architecture.md,
"Stop-all reaches only our own instances"). Redirects are never followed; an answer is read
to PROOF_MAX_BYTES of body at most, whoever sends it.

What goes wrong is said as notices (level, line), which the caller logs: this module
imports no logging, so the command pays for it only when there is something to log.
"""

from __future__ import annotations

import _socket  # socket.py's own base; socket.py adds enums whose making is ~3 ms of a start
import json
import os
import time
from _operator import _compare_digest as compare_digest  # what hmac.compare_digest is

try:  # the interpreter's own SHA-256: hashlib's and hmac's load OpenSSL (~2 ms of a start)
    from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12 and later
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[no-redef,unused-ignore]  # 3.11
    except ImportError:  # an interpreter built without it
        from hashlib import sha256  # type: ignore[assignment,unused-ignore]

# not typing's (`import typing` alone is a few ms of the command's start); mypy and ruff
# take the name as typing.TYPE_CHECKING
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeGuard

TOKEN_FILE = "api-token"
INSTANCES_DIR = "instances"
MIN_TOKEN_CHARS = 16
STOP_ALL_TIMEOUT_S = 3.0
#: the one route answered without the token: proves the listener holds it (see docs/api.md)
IDENTITY_PATH = "/api/instance/identity"
NONCE_HEX_CHARS = 64
PROOF_MAX_BYTES = 4096
#: the status line and headers of an answer, at most
HEAD_MAX_BYTES = 16 * 1024
STOP_ALL_PATH = "/api/tasks/stop-all"
#: `Authorization: Proof <challenge> <request proof>`: a request signed, not the token
PROOF_SCHEME = "Proof"
#: logging's levels, for the notices
INFO, WARNING = 20, 30

#: (level, line)
Notice = tuple[int, str]


# ── proofs ───────────────────────────────────────────────────────────────────


def identity_proof(token: str, nonce: str, port: int) -> str:
    """HMAC-SHA256 under the token of a client's nonce and the port the server listens on.

    Only a holder of the token can compute it, and it names the port: a stranger on
    another port who relays the nonce to a real instance gets a proof for the real
    instance's port, which the client (who asked on the stranger's port) rejects.
    """
    return mac(token, f"desktop-agent instance identity\n{port}\n{nonce}")


def request_proof(token: str, port: int, challenge: str, method: str, path: str) -> str:
    """HMAC-SHA256 under the token of one request (method and path) to the listener on
    `port`, bound to a challenge that listener issued: what stop-all sends in place of the
    token. A stranger who gets it can use it for nothing else, nowhere else, and not twice."""
    return mac(token, f"desktop-agent request\n{port}\n{method} {path}\n{challenge}")


def signed_headers(token: str, port: int, challenge: str, method: str, path: str) -> dict[str, str]:
    """The Authorization header of a request to a listener that proved itself and gave
    `challenge`; the bearer token only for an older version that gave none."""
    if not challenge:
        return {"Authorization": f"Bearer {token}"}
    proof = request_proof(token, port, challenge, method, path)
    return {"Authorization": f"{PROOF_SCHEME} {challenge} {proof}"}


def mac(token: str, message: str) -> str:
    """HMAC-SHA256 (RFC 2104) of `message` under `token`, in hex: what
    `hmac.new(key, message, hashlib.sha256).hexdigest()` gives, computed as Lib/hmac.py does
    where OpenSSL does not (`HMAC._init_old`: the key padded to the block, XORed with 0x36 for
    the inner hash and 0x5C for the outer), so stop-all need not load OpenSSL.
    tests/unit/api/test_stop_all_client.py compares the two."""
    key = token.encode("utf-8")
    if len(key) > _SHA256_BLOCK:
        key = sha256(key).digest()
    key = key.ljust(_SHA256_BLOCK, b"\0")
    inner = sha256(key.translate(_INNER_PAD) + message.encode("utf-8")).digest()
    return str(sha256(key.translate(_OUTER_PAD) + inner).hexdigest())


_SHA256_BLOCK = 64
_INNER_PAD = bytes(byte ^ 0x36 for byte in range(256))
_OUTER_PAD = bytes(byte ^ 0x5C for byte in range(256))


def challenge_of(body: Any, token: str, nonce: str, port: int) -> str | None:
    """The challenge of an identity answer whose proof is ours; None when it is not."""
    proof = body.get("proof") if isinstance(body, dict) else None
    if not isinstance(proof, str):
        return None
    expected = identity_proof(token, nonce, port)
    if not compare_digest(proof.encode("utf-8", "replace"), expected.encode("ascii")):
        return None
    challenge = body.get("challenge", "")
    return challenge if isinstance(challenge, str) and challenge.isprintable() else ""


def new_nonce() -> str:
    """NONCE_HEX_CHARS lowercase hex digits from the OS's random source (as secrets does)."""
    return os.urandom(NONCE_HEX_CHARS // 2).hex()


# ── the registry, read ───────────────────────────────────────────────────────

#: in INSTANCES_DIR: one byte appended by every stop-all before it reads the registry. An
#: instance that is starting (its run admitted, its API not registered yet) reads its size
#: before and after it registers, and stops its runs when it grew (host.py
#: `Host.serve_api`): a stop-all that did not find it had marked this before it looked.
#: (An append is ~15 us here; a fresh file written and renamed into place was ~1.4 ms.)
STOP_MARK_FILE = "stop-all"


def mark_stop_all(data_dir: str) -> None:
    """Say that a stop-all is under way (see STOP_MARK_FILE); done before the registry is
    read. A mark that cannot be written is skipped: the instances found are told anyway."""
    folder = os.path.join(data_dir, INSTANCES_DIR)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        path = os.path.join(folder, STOP_MARK_FILE)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(descriptor, b".")
        finally:
            os.close(descriptor)
    except OSError:
        return


def read_stop_mark(data_dir: str) -> str:
    """Where the stop-alls' marks stand ("" when none was made, or it cannot be read)."""
    try:
        info = os.stat(os.path.join(data_dir, INSTANCES_DIR, STOP_MARK_FILE))
    except OSError:
        return ""
    return f"{info.st_ino}:{info.st_size}"


def one_mark_later(before: str, after: str) -> bool:
    """Is `after` the mark `before` plus one stop-all's byte (the same file, or the first)?"""
    inode, _, size = before.partition(":")
    later_inode, _, later_size = after.partition(":")
    if not later_size.isdigit():
        return False
    if not before:
        return later_size == "1"
    return later_inode == inode and size.isdigit() and int(later_size) == int(size) + 1


def parse_instance(text: str) -> dict[str, Any] | None:
    """The fields of an instance file (pid, port, started_at, process_started, face) checked
    and defaulted; None when it is not one."""
    try:
        body = json.loads(text)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    pid, port, started_at = body.get("pid"), body.get("port"), body.get("started_at")
    if not (is_int(pid) and is_int(port)) or pid <= 0 or not 0 < port < 65536:
        return None
    process_started, face = body.get("process_started"), body.get("face")
    return {
        "pid": pid,
        "port": port,
        "started_at": str(started_at or ""),
        "process_started": process_started if isinstance(process_started, str) else "",
        "face": face if isinstance(face, str) else "",
    }


def instance_file_names(folder: str) -> list[str]:
    """The instance files of `folder` (`*.json`, as glob finds them: not hidden), sorted."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(n for n in names if n.endswith(".json") and not n.startswith("."))


def read_token(data_dir: str) -> tuple[str | None, str]:
    """The data dir's API token (None when there is none, or the file holds no usable
    token) and why it could not be read ("" when that is not the reason)."""
    path = os.path.join(data_dir, TOKEN_FILE)
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError:
        return None, ""
    except (OSError, UnicodeDecodeError) as error:
        return None, f"cannot read the API token {path}: {reason(error)}"
    token = text.strip()
    if len(token) < MIN_TOKEN_CHARS or any(char.isspace() for char in token):
        return None, ""
    return token, ""


# ── asking the instances ─────────────────────────────────────────────────────


def stop_everywhere(
    listeners: Sequence[tuple[int, int]], token: str, timeout_s: float = STOP_ALL_TIMEOUT_S
) -> tuple[int, list[Notice]]:
    """Ask every listener (pid of its instance file, port) to stop all its runs, all at
    once: the total number of runs stopped within `timeout_s` overall, and the notices of
    those that did not prove themselves or answer."""
    deadline = time.monotonic() + timeout_s
    results: list[tuple[int, Notice | None]] = [(0, None)] * len(listeners)

    def stop(index: int) -> None:
        pid, port = listeners[index]
        results[index] = stop_instance(pid, port, token, deadline)

    if len(listeners) == 1:
        stop(0)  # no thread to start: the one answer is all there is to wait for
    else:
        import threading

        threads = [
            threading.Thread(target=stop, args=(index,), name=f"stop-all {pid}", daemon=True)
            for index, (pid, _) in enumerate(listeners)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()) + 0.5)
    notices = [notice for _, notice in results if notice is not None]
    return sum(count for count, _ in results), notices


def stop_instance(pid: int, port: int, token: str, deadline: float) -> tuple[int, Notice | None]:
    """Prove the listener on `port` holds the token, then send it a signed stop-all: the
    runs it stopped, and a notice when it was not asked or did not answer."""
    try:
        challenge = proven_challenge(port, token, deadline)
        if challenge is None:
            return 0, (
                WARNING,
                f"the listener on port {port} (instance file of pid {pid}) did not prove it "
                "is ours; the token was not sent to it",
            )
        headers = signed_headers(token, port, challenge, "POST", STOP_ALL_PATH)
        status, body = _signed_post(port, STOP_ALL_PATH, headers, deadline)
    except (OSError, ValueError) as error:
        return 0, (
            WARNING,
            f"instance pid {pid} on port {port} did not answer stop-all: {reason(error)}",
        )
    if status != 200:
        return 0, (
            WARNING,
            f"instance pid {pid} on port {port} answered stop-all with HTTP {status}",
        )
    stopped = body.get("stopped") if isinstance(body, dict) else None
    return (stopped if is_int(stopped) else 0), None


def proven_challenge(port: int, token: str, deadline: float) -> str | None:
    """Does the listener on `port` answer a fresh nonce with our proof? Its challenge for
    signing the next request when it does ("" from an older version that issues none);
    None when it does not."""
    nonce = new_nonce()
    status, body = exchange(port, "GET", f"{IDENTITY_PATH}?nonce={nonce}", {}, deadline)
    return challenge_of(body, token, nonce, port) if status == 200 else None


def _signed_post(port: int, path: str, headers: dict[str, str], deadline: float) -> tuple[int, Any]:
    """The signed request after the proof (a test makes the port change hands before it)."""
    return exchange(port, "POST", path, headers, deadline)


def exchange(
    port: int, method: str, target: str, headers: dict[str, str], deadline: float
) -> tuple[int, Any]:
    """One HTTP/1.1 request without a body to 127.0.0.1:`port` on its own connection: (the
    status, the answer's small JSON body when it is 200, else None). TimeoutError past the
    deadline, OSError when the connection fails, ValueError for what is not an HTTP answer
    or not JSON. A body over PROOF_MAX_BYTES, or framed otherwise than by a Content-Length
    or the connection's end, is None and is not read."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("no time left")
    lines = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Accept-Encoding: identity"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if method == "POST":
        lines.append("Content-Length: 0")
    lines.append("Connection: close")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    # a literal address, no getaddrinfo: it would encode the host as IDNA, whose codec (with
    # stringprep and unicodedata) is a millisecond of the command's start
    connection = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        connection.settimeout(remaining)
        connection.connect(("127.0.0.1", port))
        connection.sendall(request)
        return _answer(lambda at_most: _receive(connection, at_most, deadline))
    finally:
        connection.close()


def _receive(connection: _socket.socket, at_most: int, deadline: float) -> bytes:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("timed out")
    connection.settimeout(remaining)
    return connection.recv(at_most)


def _answer(receive: Callable[[int], bytes]) -> tuple[int, Any]:
    """The status and the small JSON body of the answer `receive` reads."""
    data = b""
    while (end := data.find(b"\r\n\r\n")) < 0:
        if len(data) > HEAD_MAX_BYTES:
            raise ValueError("the answer's headers are too long")
        chunk = receive(HEAD_MAX_BYTES + 4 - len(data))
        if not chunk:
            raise ValueError("the connection closed before an answer")
        data += chunk
    head, body = data[:end].decode("latin-1"), data[end + 4 :]
    status_line, *header_lines = head.split("\r\n")
    version, _, status_text = status_line.partition(" ")
    code = status_text[:3]
    if not (version.startswith("HTTP/1.") and len(code) == 3 and code.isdigit()):
        raise ValueError(f"not an HTTP answer: {status_line[:80]!r}")
    if code != "200":
        return int(code), None
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    if "transfer-encoding" in fields:
        return 200, None  # ours says its length: not ours, not believed
    length_text = fields.get("content-length")
    if length_text is None:  # the body ends with the connection
        while len(body) <= PROOF_MAX_BYTES and (chunk := receive(PROOF_MAX_BYTES + 1 - len(body))):
            body += chunk
        return 200, None if len(body) > PROOF_MAX_BYTES else json.loads(body)
    if not length_text.isdigit():
        raise ValueError(f"a Content-Length of {length_text[:20]!r}")
    length = int(length_text)
    if length > PROOF_MAX_BYTES:
        return 200, None
    body = body[:length]
    while len(body) < length:
        chunk = receive(length - len(body))
        if not chunk:
            raise ValueError("the connection closed inside the answer")
        body += chunk
    return 200, json.loads(body)


def reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
