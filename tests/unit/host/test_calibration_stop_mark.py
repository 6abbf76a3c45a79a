"""A calibration held while no stop-all can find this instance (its local API not served:
`doctor --calibrate` and the window run without one when it cannot be had) is stopped by
another process's `desktop-agent stop-all` all the same, through the mark it leaves, as a run
and a model check are (red team, a sibling of host.py `_held`): its request in flight is
given up and none follows."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from desktop_agent.core.calibration import targets_for
from desktop_agent.core.errors import StopRequested
from desktop_agent.host import Host
from desktop_agent.host.calibration import ScreenCalibration
from desktop_agent.instances.stop_all import mark_stop_all
from desktop_agent.planner import ResponseFormatMemory
from desktop_agent.settings import Settings
from tests.fakes import make_agent
from tests.support.model_server import Hang, ModelServer
from tests.unit.host.test_calibration_stop import Still


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))


async def test_a_stop_all_marked_while_this_instance_cannot_be_found_stops_a_calibration(
    tmp_path: Path,
) -> None:
    host = Host(make_agent(tmp_path / "data"))
    try:
        assert host.api_port is None  # nobody can tell this instance: only the mark reaches it
        async with ModelServer(script=[Hang()]) as server:
            settings = Settings(base_url=server.base_url, model="m", model_profile="generic")
            calibration = ScreenCalibration(
                settings,
                observer=Still(),
                formats=ResponseFormatMemory(),
            )
            host.hold_calibration(calibration)
            observation = await calibration.screenshot()
            asking = asyncio.ensure_future(
                calibration.ask(observation, targets_for(observation.width, observation.height))
            )
            await server.wait_requests(1)
            await asyncio.to_thread(mark_stop_all, str(host.data_dir))  # `desktop-agent stop-all`

            with pytest.raises(StopRequested):
                await asyncio.wait_for(asking, 5)
            with pytest.raises(StopRequested):  # asked again: nothing is sent
                await calibration.ask(observation, targets_for(10, 10))
            assert len(server.requests) == 1
            await calibration.close()
    finally:
        await host.close()
