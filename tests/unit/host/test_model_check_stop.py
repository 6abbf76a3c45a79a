"""The Host's model checks and its look for model servers are held as a calibration is: every
stop gives up the request in flight, one asked before a stop sends nothing, and a stop-all
that could not find this instance (its API not up) reaches them through its mark. A real
loopback model server records every request and every one given up."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from desktop_agent.core.errors import StopRequested
from desktop_agent.host import Host
from desktop_agent.instances.stop_all import mark_stop_all
from desktop_agent.settings import Settings
from tests.fakes import make_agent
from tests.gui.fake_agent import until
from tests.support.model_server import ModelServer

MODEL = "some-vlm"


@pytest.fixture
async def server() -> AsyncIterator[ModelServer]:
    async with ModelServer(models=(MODEL,), ollama={MODEL: ["completion", "vision"]}) as made:
        yield made


@pytest.fixture
async def host(tmp_path: Path, server: ModelServer) -> AsyncIterator[Host]:
    settings = Settings(base_url=server.base_url, model=MODEL, probe_ports=[server.port])
    made = Host(make_agent(tmp_path / "data", settings=settings))
    yield made
    await made.close()


async def until_heard(server: ModelServer, path: str) -> None:
    await until(lambda: any(p == path for _, p, _ in server.heard), 10, f"a request to {path}")


@pytest.mark.parametrize("what", ["check_model", "vision_verdict", "find_model_servers"])
async def test_a_stop_between_the_ask_and_its_start_sends_nothing(
    host: Host, server: ModelServer, what: str
) -> None:
    """A face on another thread read `stops` as it asked; a stop landed on the host's loop
    before the work began there: the work raises StopRequested having sent nothing."""
    asked_at = host.stops
    host.stop_everything()
    with pytest.raises(StopRequested):
        await getattr(host, what)(asked_at=asked_at)
    assert server.heard == []
    checked = await host.check_model(asked_at=host.stops)  # asked after the stop: it is asked
    assert checked.ok and server.heard


async def test_the_windows_stop_of_held_work_stops_a_check_in_flight(
    host: Host, server: ModelServer
) -> None:
    server.hold("/v1/models")
    checking = asyncio.ensure_future(host.connection_report(host.settings))
    await until_heard(server, "/v1/models")
    assert host.stop_held_work() == 1  # the window's Stop: the held work
    with pytest.raises(StopRequested):
        await asyncio.wait_for(checking, 5)
    await until(lambda: server.gone, 5, "the connection closed at the stop")
    server.release()
    assert [path for _, path, _ in server.heard] == ["/v1/models"]
    assert host._agent.runner.busy is False  # let go


async def test_a_stop_all_marked_while_this_instance_cannot_be_found_stops_a_check_in_flight(
    host: Host, server: ModelServer
) -> None:
    """No API yet (the app still coming, or "Local API not served"): another process's
    stop-all finds no instance to tell, only marks; the check in flight is given up all the
    same, within the mark's poll."""
    assert host.api_port is None
    server.hold("/v1/models")
    checking = asyncio.ensure_future(host.vision_verdict())
    await until_heard(server, "/v1/models")
    await asyncio.to_thread(mark_stop_all, str(host.data_dir))  # `desktop-agent stop-all`
    with pytest.raises(StopRequested):
        await asyncio.wait_for(checking, 5)
    await until(lambda: server.gone, 5, "the connection closed at the stop")
    server.release()
    assert [path for _, path, _ in server.heard] == ["/v1/models"]
