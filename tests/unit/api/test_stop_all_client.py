"""stop-all's standard-library client (instances/stop_all.py): its HTTP against whatever a listener
on an instance's port answers (only a small JSON body of a 200 is read, nothing of any size
is), and its HMAC, made without OpenSSL, against the hmac module's."""

from __future__ import annotations

import hashlib
import hmac
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop_agent.instances import stop_all


class CannedListener:
    """A loopback listener that answers one connection with `answer` (then closes it, or
    keeps it open with `hold`), and keeps what it was sent."""

    def __init__(self, answer: bytes, *, hold: bool = False) -> None:
        self.answer = answer
        self.hold = hold
        self.received = b""
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        connection, _ = self._server.accept()
        with connection:
            while b"\r\n\r\n" not in self.received:
                chunk = connection.recv(4096)
                if not chunk:
                    break
                self.received += chunk
            connection.sendall(self.answer)
            if self.hold:
                self._done.wait(10)

    def close(self) -> None:
        self._done.set()
        self._thread.join(10)
        self._server.close()


@pytest.fixture
def listen() -> Iterator[type[CannedListener]]:
    made: list[CannedListener] = []

    class Tracked(CannedListener):
        def __init__(self, answer: bytes, *, hold: bool = False) -> None:
            super().__init__(answer, hold=hold)
            made.append(self)

    yield Tracked
    for listener in made:
        listener.close()


def ask(port: int, within_s: float = 5.0) -> tuple[int, object]:
    return stop_all.exchange(port, "GET", "/x", {}, time.monotonic() + within_s)


def test_a_200_with_a_content_length_gives_its_json(listen: type[CannedListener]) -> None:
    body = b'{"proof": "p", "challenge": "c"}'
    listener = listen(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body,
        hold=True,  # the length, not the connection's end, says where the body ends
    )
    assert ask(listener.port) == (200, {"proof": "p", "challenge": "c"})
    assert listener.received.startswith(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"Connection: close\r\n" in listener.received


def test_a_body_that_ends_with_the_connection_is_read_to_its_end(
    listen: type[CannedListener],
) -> None:
    listener = listen(b'HTTP/1.0 200 OK\r\n\r\n{"stopped": 2}')
    assert ask(listener.port) == (200, {"stopped": 2})


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n" + b" " * 10000,
        b"HTTP/1.1 200 OK\r\n\r\n" + b" " * (stop_all.PROOF_MAX_BYTES + 10) + b"{}",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    ],
    ids=["long by its length", "long to its end", "chunked"],
)
def test_a_body_too_long_or_framed_otherwise_is_none(
    listen: type[CannedListener], answer: bytes
) -> None:
    listener = listen(answer, hold=True)
    assert ask(listener.port) == (200, None)


def test_another_status_is_said_without_its_body(listen: type[CannedListener]) -> None:
    listener = listen(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 99999999\r\n\r\n", hold=True)
    assert ask(listener.port) == (401, None)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not an HTTP answer"),
        (b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 5000, "headers are too long"),
        (b"HTTP/1.1 200 OK\r\n", "closed before an answer"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", "closed inside the answer"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length of '-1'"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "Expecting value"),
    ],
    ids=["not http", "endless headers", "no header end", "short body", "bad length", "not json"],
)
def test_what_is_not_an_answer_is_a_value_error(
    listen: type[CannedListener], answer: bytes, reason: str
) -> None:
    listener = listen(answer)
    with pytest.raises(ValueError, match=reason):
        ask(listener.port)


def test_a_listener_that_never_answers_times_out_at_the_deadline(
    listen: type[CannedListener],
) -> None:
    listener = listen(b"", hold=True)
    began = time.monotonic()
    with pytest.raises(TimeoutError):
        ask(listener.port, within_s=0.2)
    assert time.monotonic() - began < 5


def test_no_time_left_sends_nothing() -> None:
    with pytest.raises(TimeoutError, match="no time left"):
        stop_all.exchange(9, "GET", "/x", {}, time.monotonic() - 1)


# ── the proofs: HMAC-SHA256 without OpenSSL ──────────────────────────────────


@given(key=st.text(max_size=200), message=st.text(max_size=300))
def test_the_mac_is_hmac_sha256(key: str, message: str) -> None:
    expected = hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()
    assert stop_all.mac(key, message) == expected


@pytest.mark.parametrize("length", [0, 1, 63, 64, 65, 128, 1000])
def test_the_mac_is_hmac_sha256_for_keys_about_the_block_size(length: int) -> None:
    key = "k" * length
    expected = hmac.new(key.encode(), b"m", hashlib.sha256).hexdigest()
    assert stop_all.mac(key, "m") == expected


def test_rfc_4231_case_2() -> None:
    # RFC 4231, 4.3: key "Jefe", data "what do ya want for nothing?"
    assert stop_all.mac("Jefe", "what do ya want for nothing?") == (
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )
