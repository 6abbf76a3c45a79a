"""A stop-all that comes while a run is on its way in (its row being recorded, or its start
still queued behind the stop) reaches it: stopped / user_stop, no model request, no input."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.models import RunStatus, StopReason
from tests.fakes import ScriptedPlanner, done, tool
from tests.gui.fake_agent import final_run, make_agent


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[Any]:
    made = make_agent(tmp_path)
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


async def test_a_stop_all_while_the_run_is_recorded_stops_it_before_it_acts(agent: Any) -> None:
    planners = count_model_requests(agent)
    recording, release = asyncio.Event(), asyncio.Event()
    real_create = agent.repo.create_run

    async def slow_create(spec: Any, **kwargs: Any) -> Any:
        recording.set()
        await release.wait()
        return await real_create(spec, **kwargs)

    agent.repo.create_run = slow_create  # type: ignore[method-assign]
    launching = asyncio.ensure_future(agent.launch("click something"))
    await recording.wait()
    assert agent.stop_all() == 0  # nothing is active yet
    release.set()
    final = await final_run(await launching)

    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert planners == [] and agent.runner.services.executor.calls == []  # type: ignore[attr-defined]


async def test_a_stop_all_before_the_start_reaches_the_loop_stops_the_run_asked_for_earlier(
    agent: Any,
) -> None:
    planners = count_model_requests(agent)
    asked_at = agent.runner.stop_all_count  # the user pressed Start (the app's GUI thread)
    agent.stop_all()  # the hotkey's stop reached the engine first
    final = await final_run(await agent.launch("click something", stops_seen=asked_at))

    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert planners == [] and agent.runner.services.executor.calls == []  # type: ignore[attr-defined]
    # a run asked for after the stop is not touched by it
    assert (await final_run(await agent.launch("later"))).status is RunStatus.COMPLETED
