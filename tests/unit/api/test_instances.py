"""The instance registry in the data dir, and stop-all reaching every live instance."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from desktop_agent.instances import registry, stop_all
from desktop_agent.instances.registry import (
    IDENTITY_PATH,
    REGISTRY_LOCK_FILE,
    ask_app_instance,
    identity_proof,
    live_instances,
    register_instance,
    stop_all_instances,
)
from desktop_agent.store.private_files import exclusive_lock
from desktop_agent.store.process import process_identity
from tests.support.locks import announce_lock_waits
from tests.unit.api.conftest import Api, Hang, close_api, frames, next_frame, open_api


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_live_server_is_listed(api: Api, tmp_path: Path) -> None:
    [instance] = live_instances(tmp_path)
    assert (instance.pid, instance.port) == (os.getpid(), api.server.port)
    assert instance.started_at.endswith("+00:00")


def test_stale_and_unreadable_entries_are_ignored_and_removed(
    tmp_path: Path, dead_pid: int
) -> None:
    live = register_instance(tmp_path, 4321)
    stale = register_instance(tmp_path, 4322, pid=dead_pid)
    broken = tmp_path / "instances" / "77.json"
    broken.write_text("{not json")
    wrong = tmp_path / "instances" / "78.json"
    wrong.write_text(json.dumps({"pid": "78", "port": 1}))

    assert [(i.pid, i.port) for i in live_instances(tmp_path)] == [(os.getpid(), 4321)]
    assert live.exists()
    assert not stale.exists() and not broken.exists() and not wrong.exists()


def test_no_instances_dir_means_no_instances(tmp_path: Path) -> None:
    assert live_instances(tmp_path / "nothing-here") == []


async def test_stop_all_with_no_live_instance_stops_nothing(tmp_path: Path, dead_pid: int) -> None:
    register_instance(tmp_path, 4322, pid=dead_pid)
    assert await stop_all_instances(tmp_path) == 0


async def test_stop_all_reaches_every_live_instance(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    # Two servers on one data dir; the second registers under another live pid (our parent's).
    first = await open_api(tmp_path, session)
    second = await open_api(tmp_path, session, pid=os.getppid())
    try:
        assert {i.port for i in live_instances(tmp_path)} == {first.server.port, second.server.port}
        hangs = {}
        responses = []
        for api in (first, second):
            hang = hangs[api.server.port] = Hang()
            api.planners.scripts["hang"] = [hang]
            run = await api.create("hang")
            responses.append(await api.events(run["id"]))
        await asyncio.gather(*(hang.asked.wait() for hang in hangs.values()))

        assert await stop_all_instances(tmp_path) == 2

        for response in responses:
            _, finished = await next_frame(frames(response), "run_finished")
            assert finished["run"]["stop_reason"] == "user_stop"
            response.release()
        assert all(hang.cancelled.is_set() for hang in hangs.values())
        assert first.agent.runner.active_ids == second.agent.runner.active_ids == ()
        assert await stop_all_instances(tmp_path) == 0
    finally:
        await close_api(second)
        await close_api(first)
    assert live_instances(tmp_path) == []


async def test_exclude_pid_skips_that_instance(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    api = await open_api(tmp_path, session)
    try:
        hang = Hang()
        api.planners.scripts["hang"] = [hang]
        run = await api.create("hang")
        async with api.events(run["id"]):
            await hang.asked.wait()
            assert await stop_all_instances(tmp_path, exclude_pid=os.getpid()) == 0
            assert api.agent.runner.active_ids == (run["id"],)
            assert await stop_all_instances(tmp_path) == 1
    finally:
        await close_api(api)


async def test_an_instance_that_does_not_answer_is_skipped_with_a_log_line(
    api: Api, tmp_path: Path, closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    register_instance(tmp_path, closed_port, pid=os.getppid())
    hang = Hang()
    api.planners.scripts["hang"] = [hang]
    run = await api.create("hang")
    caplog.set_level(logging.INFO, logger="desktop_agent.api")
    async with api.events(run["id"]):
        await hang.asked.wait()

        assert await stop_all_instances(tmp_path) == 1

    lines = [r.getMessage() for r in caplog.records if r.name == "desktop_agent.instances.registry"]
    assert any(
        f"instance pid {os.getppid()} on port {closed_port} did not answer stop-all" in line
        for line in lines
    ), lines
    assert api.token not in caplog.text


async def test_an_instance_with_another_token_is_skipped(
    api: Api, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "api-token").write_text("another-token-entirely-0123456789\n")
    caplog.set_level(logging.INFO, logger="desktop_agent.api")

    assert await stop_all_instances(tmp_path) == 0

    # the server holds the old token: it cannot prove itself, so the new token stays here
    assert f"the listener on port {api.server.port} (instance file of pid" in caplog.text
    assert "did not prove it is ours; the token was not sent to it" in caplog.text


# ── the token goes only to a listener that proves it is ours ─────────────────


class ForeignListener:
    """A stranger's HTTP server on a loopback port: records every byte it is sent.

    It answers every request 200 with a JSON body that claims everything (a proof, runs
    stopped); with `relay_to` it forwards the identity challenge to a real instance and
    hands back the real proof (a relay attack).
    """

    def __init__(
        self, relay_to: int | None = None, answer: bytes | None = None, port: int = 0
    ) -> None:
        self.received = bytearray()
        self.requests: list[str] = []
        self.relay_to = relay_to
        self.answer = answer
        self.port = port
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> ForeignListener:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.received += head
                lines = head.decode("latin-1").split("\r\n")
                self.requests.append(lines[0])
                length = next(
                    (
                        int(line.split(":", 1)[1])
                        for line in lines
                        if line.lower().startswith("content-length:")
                    ),
                    0,
                )
                if length:
                    self.received += await reader.readexactly(length)
                body = await self._answer(lines[0])
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _answer(self, request_line: str) -> bytes:
        target = request_line.split(" ")[1]
        if self.relay_to is not None and target.startswith(IDENTITY_PATH):
            async with aiohttp.ClientSession() as session:
                url = f"http://127.0.0.1:{self.relay_to}{target}"
                async with session.get(url) as response:
                    return await response.read()
        if self.answer is not None:
            return self.answer
        return json.dumps({"proof": "0" * 64, "stopped": 7}).encode()


def test_the_instance_file_records_the_process_start_time(tmp_path: Path) -> None:
    path = register_instance(tmp_path, 4321)
    identity = process_identity(os.getpid())
    assert identity is not None and identity.started
    assert json.loads(path.read_text())["process_started"] == identity.started


def test_a_file_whose_pid_now_belongs_to_another_process_is_stale(tmp_path: Path) -> None:
    # The pid lives (it is ours) but started at another time: a reused pid after a crash.
    path = register_instance(tmp_path, 4321)
    body = json.loads(path.read_text())
    path.write_text(json.dumps({**body, "process_started": "1"}))

    assert live_instances(tmp_path) == []
    assert not path.exists()


def test_a_stale_file_rewritten_by_a_live_process_while_it_is_removed_is_kept(
    tmp_path: Path,
) -> None:
    # A lister found the file stale (its pid reused after a crash); before it removed the
    # file, the process now holding that pid registered there. Removing it would hide a
    # live instance from stop-all.
    path = register_instance(tmp_path, 4321)
    body = json.loads(path.read_text())
    path.write_text(json.dumps({**body, "process_started": "1"}))  # a crashed earlier owner
    listed: list[list[tuple[int, int]]] = []
    lister = threading.Thread(
        target=lambda: listed.append([(i.pid, i.port) for i in live_instances(tmp_path)])
    )
    lock = tmp_path / "instances" / REGISTRY_LOCK_FILE
    waiting = threading.Event()
    undo = announce_lock_waits(lambda _: waiting.set())
    try:
        with exclusive_lock(lock):
            lister.start()
            assert waiting.wait(10)  # it found the file stale and waits for the lock
            path.write_text(json.dumps(body))  # the live process registers, port 4321
        lister.join(timeout=10)
    finally:
        undo()

    assert listed == [[(os.getpid(), 4321)]]
    assert path.exists()


async def test_a_reused_pid_in_a_stale_file_never_reaches_the_foreign_port(
    api: Api, tmp_path: Path
) -> None:
    async with ForeignListener() as stranger:
        stale = register_instance(tmp_path, stranger.port, pid=os.getppid())
        body = json.loads(stale.read_text())
        stale.write_text(json.dumps({**body, "process_started": "1"}))

        assert await stop_all_instances(tmp_path) == 0

    assert stranger.requests == []
    assert not stale.exists()


async def test_a_foreign_listener_on_a_live_instances_port_never_gets_the_token(
    api: Api, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A live pid with the right start time (our parent's), its port held by a stranger.
    async with ForeignListener() as stranger:
        register_instance(tmp_path, stranger.port, pid=os.getppid())
        hang = Hang()
        api.planners.scripts["hang"] = [hang]
        run = await api.create("hang")
        async with api.events(run["id"]):
            await hang.asked.wait()

            # the real instance is stopped; the stranger's claim of 7 runs is not believed
            assert await stop_all_instances(tmp_path) == 1

    assert [line.split("?")[0] for line in stranger.requests] == [f"GET {IDENTITY_PATH}"]
    assert api.token.encode() not in stranger.received
    assert b"Authorization" not in stranger.received
    assert f"the listener on port {stranger.port} (instance file of pid {os.getppid()})" in (
        caplog.text
    )


async def test_a_stranger_relaying_the_challenge_to_a_real_instance_gets_no_token(
    api: Api, tmp_path: Path
) -> None:
    assert api.server.port is not None
    async with ForeignListener(relay_to=api.server.port) as stranger:
        (tmp_path / "instances" / f"{os.getpid()}.json").unlink()
        register_instance(tmp_path, stranger.port)

        assert await stop_all_instances(tmp_path) == 0

    assert len(stranger.requests) == 1 and stranger.requests[0].startswith(f"GET {IDENTITY_PATH}")
    assert api.token.encode() not in stranger.received


async def ask_the_app(data_dir: Path) -> object:
    from tests.unit.api.test_ask_approval import question

    return await ask_app_instance(data_dir, question(), exclude_pid=None)


@pytest.mark.parametrize(
    ("face", "request_from_another_instance", "route"),
    [
        ("run", stop_all_instances, "POST /api/tasks/stop-all"),
        ("app", ask_the_app, "POST /api/approvals/ask"),
    ],
    ids=["stop-all", "ask the app"],
)
async def test_a_stranger_taking_the_port_after_the_proof_gets_no_token(
    tmp_path: Path,
    session: aiohttp.ClientSession,
    monkeypatch: pytest.MonkeyPatch,
    face: str,
    request_from_another_instance: Callable[[Path], Awaitable[object]],
    route: str,
) -> None:
    real = await open_api(tmp_path, session, face=face)
    assert real.server.port is not None
    stranger = ForeignListener(port=real.server.port)

    async with port_taken_after_the_proof(real, stranger, monkeypatch):
        await request_from_another_instance(tmp_path)

    assert stranger.requests == [f"{route} HTTP/1.1"]  # it was asked...
    assert real.token.encode() not in stranger.received  # ...with nothing it can use


async def test_a_flood_from_a_stranger_on_the_port_is_no_answer(
    tmp_path: Path, session: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = await open_api(tmp_path, session)
    assert real.server.port is not None
    flood = b" " * (16 * 1024 * 1024) + b'{"stopped": 7}'
    stranger = ForeignListener(port=real.server.port, answer=flood)

    async with port_taken_after_the_proof(real, stranger, monkeypatch):
        assert await stop_all_instances(tmp_path) == 0  # not read whole, not believed


@contextlib.asynccontextmanager
async def port_taken_after_the_proof(
    real: Api, stranger: ForeignListener, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[None]:
    """While the block runs, the first signed POST any client sends finds `real` (which
    proved itself a moment ago) ended and `stranger` on its port: stop-all's standard-library
    client (`stop_all._signed_post`) and the approval question's aiohttp
    session alike."""
    loop = asyncio.get_running_loop()

    async def change_hands() -> None:
        await close_api(real)
        await stranger.__aenter__()

    signed_post = stop_all._signed_post

    def signed_post_once_the_port_changed_hands(*call: Any) -> Any:
        asyncio.run_coroutine_threadsafe(change_hands(), loop).result(timeout=10)
        return signed_post(*call)

    post = aiohttp.ClientSession.post

    def post_once_the_port_changed_hands(client: Any, url: str, **options: Any) -> Any:
        @contextlib.asynccontextmanager
        async def request() -> AsyncIterator[aiohttp.ClientResponse]:
            await change_hands()
            async with post(client, url, **options) as response:
                yield response

        return request()

    monkeypatch.setattr(stop_all, "_signed_post", signed_post_once_the_port_changed_hands)
    monkeypatch.setattr(aiohttp.ClientSession, "post", post_once_the_port_changed_hands)
    try:
        yield
    finally:
        monkeypatch.undo()
        await stranger.__aexit__()


async def test_a_signed_stop_all_works_once_on_its_own_port_and_route_only(api: Api) -> None:
    from desktop_agent.instances.registry import request_proof

    assert api.server.port is not None
    nonce = "ab" * 32
    status, body = await api.call("GET", f"{IDENTITY_PATH}?nonce={nonce}", auth=False)
    assert status == 200
    challenge = body["challenge"]

    def signed(path: str, port: int) -> dict[str, str]:
        proof = request_proof(api.token, port, challenge, "POST", path)
        return {"Authorization": f"Proof {challenge} {proof}"}

    other_port = signed("/api/tasks/stop-all", api.server.port + 1)
    assert (await api.call("POST", "/api/tasks/stop-all", headers=other_port, auth=False))[0] == 401
    other_route = signed("/api/tasks", api.server.port)
    assert (await api.call("POST", "/api/tasks", headers=other_route, auth=False))[0] == 401
    right = signed("/api/tasks/stop-all", api.server.port)
    assert await api.call("POST", "/api/tasks/stop-all", headers=right, auth=False) == (
        200,
        {"stopped": 0},
    )
    again = await api.call("POST", "/api/tasks/stop-all", headers=right, auth=False)
    assert again[0] == 401, "a challenge works once"


async def test_the_identity_route_proves_the_token_without_it_and_checks_the_nonce(
    api: Api,
) -> None:
    assert api.server.port is not None
    nonce = "ab" * 32
    url = f"{api.base}{IDENTITY_PATH}"
    async with api.session.get(url, params={"nonce": nonce}) as response:
        assert response.status == 200
        proof = (await response.json())["proof"]
    assert proof == identity_proof(api.token, nonce, api.server.port)
    assert proof != identity_proof(api.token, nonce, api.server.port + 1)
    for bad in ("", "ab", "AB" * 32, "zz" * 32):
        async with api.session.get(url, params={"nonce": bad}) as response:
            assert response.status == 400
    async with api.session.get(url, params={"nonce": nonce}, headers={"Host": "evil.example"}) as (
        response
    ):
        assert response.status == 403


async def test_a_stranger_answering_the_challenge_with_a_flood_is_dropped(
    api: Api, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    flood = b'{"proof": "' + b"0" * (8 * 1024 * 1024) + b'"}'
    async with ForeignListener(answer=flood) as stranger:
        (tmp_path / "instances" / f"{os.getpid()}.json").unlink()
        register_instance(tmp_path, stranger.port)

        assert await stop_all_instances(tmp_path) == 0

    assert len(stranger.requests) == 1
    assert api.token.encode() not in stranger.received
    assert "did not prove it is ours" in caplog.text


# ── stop-all from a fresh process ────────────────────────────────────────────

HEAVY = ("asyncio", "aiohttp", "openai", "pydantic", "peewee", "PIL")


async def test_the_stop_all_command_stops_a_run_importing_no_asyncio_aiohttp_or_pydantic(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    api = await open_api(tmp_path, session, pid=os.getppid())
    try:
        hang = Hang()
        api.planners.scripts["hang"] = [hang]
        run = await api.create("hang")
        response = await api.events(run["id"])
        await hang.asked.wait()
        command = (
            "import sys\n"
            "from desktop_agent.cli import main\n"
            f"main(['--data-dir', {str(tmp_path)!r}, 'stop-all'])\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n"
        )
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", command, stdout=asyncio.subprocess.PIPE
        )
        out, _ = await child.communicate()

        assert out.decode().splitlines() == ["stopped 1 run(s)", "[]"]
        _, finished = await next_frame(frames(response), "run_finished")
        assert finished["run"]["stop_reason"] == "user_stop"
        response.release()
    finally:
        await close_api(api)


def test_stop_all_asks_every_instance_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each instance's answer waits until every instance was asked: one after the other, the
    # first would wait for a question that never comes
    for pid in (os.getpid(), os.getppid()):
        register_instance(tmp_path, 9, pid=pid)
    (tmp_path / "api-token").write_text("t" * 32)
    everyone_asked = threading.Barrier(2, timeout=10)

    def answer_once_all_are_asked(
        pid: int, port: int, token: str, deadline: float
    ) -> tuple[int, None]:
        everyone_asked.wait()
        return 1, None

    monkeypatch.setattr(stop_all, "stop_instance", answer_once_all_are_asked)
    assert registry.stop_all_blocking(tmp_path, timeout_s=20) == 2
