"""The instance registry in the data dir, and stop-all reaching every live instance."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from desktop_agent.api.instances import live_instances, register_instance, stop_all_instances
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

    lines = [r.getMessage() for r in caplog.records if r.name == "desktop_agent.api.instances"]
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

    assert f"on port {api.server.port} answered stop-all with HTTP 401" in caplog.text
