"""A stop that comes while a run is on its way in — its routine being read from the store, its
model being checked — reaches it: stopped / user_stop, no model request, no input. Every
start is admitted in the step of the ask (host/starts.py), so nothing remembers stops."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.models import RunStatus, StopReason
from desktop_agent.core.routine import Routine, RoutineStep
from desktop_agent.host import Host, RoutineRequest, RunRequest
from tests.fakes import ScriptedPlanner, done, make_agent, tool


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    made = Host(make_agent(tmp_path))
    yield made
    await made.close()


def count_model_requests(agent: Any) -> list[Any]:
    planners: list[Any] = []

    def factory(run: Any) -> Any:
        planner = ScriptedPlanner([tool("click", x=5, y=5)], then=done())
        planners.append(planner)
        return planner

    agent.planner_factory = factory
    return planners


def hold_the_routine_read(agent: Any) -> tuple[asyncio.Event, asyncio.Event]:
    """The store's answer to the next routine look-up waits for `release`; `reading` is set
    once the look-up is under way."""
    reading, release = asyncio.Event(), asyncio.Event()
    real_get = agent.repo.get_routine

    async def held(name: str) -> Any:
        found = await real_get(name)
        reading.set()
        await release.wait()
        return found

    agent.repo.get_routine = held
    return reading, release


@pytest.mark.parametrize("stop", ["its id", "everything"])
async def test_a_stop_while_the_routine_is_read_from_the_store_ends_its_run_before_it_acts(
    host: Host, stop: str
) -> None:
    agent = host._agent
    planners = count_model_requests(agent)
    await agent.repo.save_routine(
        Routine("poke", "click it", (RoutineStep("click", {"x": 5, "y": 5}),), grants=("click",))
    )
    reading, release = hold_the_routine_read(agent)
    hosted = host.start(RoutineRequest("poke"))
    await reading.wait()
    if stop == "its id":
        assert host.stop(hosted.run_id)
    else:
        assert host.stop_everything() == 1
    release.set()
    final = await hosted.final()

    assert final is not None and final.routine == "poke"
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert final.message == "stopped before it started"
    assert planners == [] and agent.runner.services.executor.calls == []  # type: ignore[attr-defined]
    assert await agent.repo.get_run(hosted.run_id) == final


async def test_a_stop_all_before_the_ask_does_not_touch_a_run_asked_for_after_it(
    host: Host,
) -> None:
    count_model_requests(host._agent)
    host.stop_everything()
    final = await host.start(RunRequest("click something")).final()
    assert final is not None and final.status is RunStatus.COMPLETED
