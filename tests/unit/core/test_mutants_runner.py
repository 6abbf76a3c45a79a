"""A run that never started, the planner's close, the held work (mutants of core/runner.py)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from desktop_agent.core.control import RunControl
from desktop_agent.core.events import RunFinished, RunStarted, TaskLoopEvent
from desktop_agent.core.models import RunStatus, RunView, StopReason
from tests.fakes import ScriptedPlanner, done
from tests.unit.core.conftest import Harness


async def _prepare_failing(harness: Harness, error: Exception) -> tuple[RunView, list[object]]:
    run = await harness.create()
    heard: list[TaskLoopEvent] = []
    harness.runner.subscribe(heard.append)

    async def prepare(_: RunView) -> ScriptedPlanner:
        raise error

    events = [event async for event in harness.runner.admit(run, prepare).events]
    assert events == heard  # the listeners hear what the viewer sees
    return run, list(events)


async def test_a_fault_while_preparing_ends_the_run_failed_saying_what_it_was(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="desktop_agent.core.runner"):
        run, events = await _prepare_failing(harness, RuntimeError("model\n  not   found"))
    stored = harness.stored(run.id)
    assert (stored.status, stored.stop_reason) == (RunStatus.FAILED, StopReason.ERROR)
    assert stored.message == "unexpected fault before it started: RuntimeError: model not found"
    assert events == [RunStarted(run), RunFinished(stored)]
    assert harness.runner.active_ids == ()
    assert [r.getMessage() for r in caplog.records] == [f"preparing run {run.id} failed"]


async def test_a_fault_without_a_message_is_named_by_its_type(harness: Harness) -> None:
    run, _ = await _prepare_failing(harness, TimeoutError())
    assert harness.stored(run.id).message == "unexpected fault before it started: TimeoutError"


async def test_a_viewer_gone_while_the_run_is_prepared_leaves_it_stopped_saying_so(
    harness: Harness,
) -> None:
    run = await harness.create()
    preparing, never = asyncio.Event(), asyncio.Event()

    async def prepare(_: RunView) -> ScriptedPlanner:
        preparing.set()
        await never.wait()
        raise AssertionError("not reached")

    events = harness.runner.admit(run, prepare).events
    viewer = asyncio.create_task(anext(events))
    await preparing.wait()
    viewer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await viewer
    stored = harness.stored(run.id)
    assert (stored.status, stored.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert stored.message == "the viewer went away before it started"
    assert harness.runner.active_ids == ()


class _ClosingPlanner(ScriptedPlanner):
    def __init__(self, fails: bool) -> None:
        super().__init__([], then=done())
        self.closed = 0
        self.fails = fails

    async def aclose(self) -> None:
        self.closed += 1
        if self.fails:
            raise OSError("socket already gone")


async def test_a_run_closes_its_planner_and_a_failed_close_is_logged(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    planner = _ClosingPlanner(fails=False)
    final = await harness.runner.run(await harness.create(), planner)
    assert (final.status, planner.closed) == (RunStatus.COMPLETED, 1)

    failing = _ClosingPlanner(fails=True)
    with caplog.at_level(logging.ERROR, logger="desktop_agent.core.runner"):
        final = await harness.runner.run(await harness.create(), failing)
    assert (final.status, failing.closed) == (RunStatus.COMPLETED, 1)
    assert [r.getMessage() for r in caplog.records] == ["closing the planner failed"]


def test_held_work_is_stopped_by_each_stop_until_released_and_each_stop_counted(
    harness: Harness,
) -> None:
    runner, calibration = harness.runner, RunControl()
    assert runner.stops == 0
    release = runner.hold(calibration)
    assert runner.stop_held() == 1 and calibration.halted
    assert runner.stops == 1
    release()
    assert runner.stop_held() == 0
    assert runner.stops == 2
