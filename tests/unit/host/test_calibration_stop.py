"""A calibration is stopped as a run is: every stop-all of the host reaches it, its model
request in flight is cancelled and none follows; it is not counted as a run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from desktop_agent.core.calibration import targets_for
from desktop_agent.core.errors import StopRequested
from desktop_agent.core.models import Observation
from desktop_agent.host import Host
from desktop_agent.host.calibration import ScreenCalibration
from desktop_agent.planner import ResponseFormatMemory
from desktop_agent.settings import Settings
from tests.fakes import make_agent, real_observation
from tests.support.model_server import Hang, ModelServer


class Still:
    async def observe(self) -> Observation:
        return real_observation()


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))


async def test_a_stop_all_cancels_the_calibrations_request_and_counts_no_run(
    tmp_path: Path,
) -> None:
    host = Host(make_agent(tmp_path / "data"))
    try:
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

            assert host._agent.stop_all() == 0  # "stopped 0 run(s)": a calibration is no run
            with pytest.raises(StopRequested):
                await asyncio.wait_for(asking, 5)
            with pytest.raises(StopRequested):  # asked again: nothing is sent
                await calibration.ask(observation, targets_for(10, 10))
            assert len(server.requests) == 1
            await calibration.close()
        assert host._agent.runner._held == set()
    finally:
        await host.close()


async def test_a_closed_calibration_is_not_stopped_by_a_later_stop_all(tmp_path: Path) -> None:
    host = Host(make_agent(tmp_path / "data"))
    try:
        calibration = ScreenCalibration(Settings(), observer=Still())
        host.hold_calibration(calibration)
        await calibration.close()
        host._agent.stop_all()
        assert not calibration.stopped
    finally:
        await host.close()


async def test_a_calibration_sends_the_model_nothing_while_the_screen_is_denied() -> None:
    from desktop_agent.core.errors import RefusedToStart
    from desktop_agent.core.models import Policy

    async with ModelServer(script=[]) as server:
        settings = Settings(
            base_url=server.base_url,
            model="m",
            model_profile="generic",
            policies={"screen_snapshot": Policy.DENY},
        )
        calibration = ScreenCalibration(settings, observer=Still())
        observation = await calibration.screenshot()
        with pytest.raises(RefusedToStart, match="screen_snapshot is denied by policy"):
            await calibration.ask(observation, targets_for(observation.width, observation.height))
        await calibration.close()
        assert server.requests == []
