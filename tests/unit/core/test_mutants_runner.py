"""A run that never started, the planner's close, the held work (mutants of core/runner.py)."""

from __future__ import annotations

import asyncio
import logging
import traceback
from typing import Any

import pytest

from desktop_agent.core.control import RunControl
from desktop_agent.core.errors import RefusedToStart, RunNotFound
from desktop_agent.core.events import RunFinished, RunStarted, TaskLoopEvent
from desktop_agent.core.models import (
    ApprovalDecision,
    RunStatus,
    RunView,
    StopReason,
    TaskSpec,
    utcnow,
)
from tests.fakes import ScriptedPlanner, done, tool
from tests.unit.core.conftest import Harness, make_harness


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


async def _never_ready(_: RunView) -> ScriptedPlanner:
    raise AssertionError("a run closed before its first event is never prepared")


async def test_a_run_is_created_under_the_id_asked_for_and_unknown_tools_are_all_named(
    harness: Harness,
) -> None:
    spec = TaskSpec(goal="g", allowed_tools=("click",))
    assert (await harness.runner.create(spec, run_id="mine")).id == "mine"
    assert "mine" in harness.repo.runs
    bad = TaskSpec(goal="g", allowed_tools=("click", "teleport", "fly"))
    with pytest.raises(RefusedToStart) as refused:
        await harness.runner.create(bad)
    assert str(refused.value) == "unknown tool(s): teleport, fly"


async def test_load_gives_the_stored_run_and_names_a_missing_one(harness: Harness) -> None:
    run = await harness.create()
    assert await harness.runner.load(run.id) == run
    with pytest.raises(RunNotFound) as missing:
        await harness.runner.load("nope")
    assert str(missing.value) == "no run 'nope'"


async def test_the_handle_carries_the_control_every_stop_path_reaches(harness: Harness) -> None:
    handle = harness.runner.admit(await harness.create(), _never_ready)
    assert harness.runner.stop(handle.run_id)
    assert handle.control.halted.is_set() and handle.control.stop_requested
    await handle.events.aclose()


async def test_a_pause_without_a_reason_is_a_request_even_after_a_take_over(
    harness: Harness,
) -> None:
    runner = harness.runner
    handle = runner.admit(await harness.create(), _never_ready)
    assert runner.pause(handle.run_id, "user") and handle.control.pause_reason == "user"
    assert runner.resume(handle.run_id)
    assert runner.pause(handle.run_id) and str(handle.control.pause_reason) == "request"
    await handle.events.aclose()


def test_a_relayed_event_reaches_every_listener(harness: Harness) -> None:
    heard: list[TaskLoopEvent] = []
    harness.runner.subscribe(heard.append)
    event = RunStarted(RunView.queued(TaskSpec(goal="g"), "other-process", utcnow()))
    harness.runner.relay(event)
    assert heard == [event]


def _origin() -> ValueError:
    """An error with a traceback through this function, then taken off the error itself."""
    try:
        raise ValueError("from the viewer")
    except ValueError as error:
        return error


async def _thrown(harness: Harness, *args: Any) -> BaseException:
    """What throwing `args` into a started run's events raises out of them."""
    events = harness.runner.start(await harness.create(), ScriptedPlanner([], then=done()))
    assert isinstance(await anext(events), RunStarted)
    with pytest.raises(BaseException) as raised:
        await events.athrow(*args)
    assert harness.runner.active_ids == ()
    return raised.value


def _through_origin(error: BaseException) -> bool:
    return "_origin" in [frame.name for frame in traceback.extract_tb(error.__traceback__)]


async def test_an_error_thrown_into_a_runs_events_comes_out_as_thrown(harness: Harness) -> None:
    # the (type, value) form keeps the value, not a bare type's new error
    error = _origin()
    error.with_traceback(None)
    out = await _thrown(harness, ValueError, error)
    assert out is error and str(out) == "from the viewer"
    # the (type, value, traceback) form keeps the traceback it was given
    error = _origin()
    tb = error.__traceback__
    error.with_traceback(None)
    out = await _thrown(harness, ValueError, error, tb)
    assert out is error and _through_origin(out)
    # the (error, None, traceback) form too
    error = _origin()
    tb = error.__traceback__
    error.with_traceback(None)
    out = await _thrown(harness, error, None, tb)
    assert out is error and _through_origin(out)
    # the one-argument form
    error = _origin()
    out = await _thrown(harness, error)
    assert out is error


async def test_a_runs_questions_are_numbered_from_one_after_its_id() -> None:
    # the id a person answers by (`approve r1-1`, POST /api/approvals/r1-1)
    h = make_harness(answers=[ApprovalDecision.DENY, ApprovalDecision.DENY])
    run = await h.create(allowed_tools=("hotkey",))
    paste = tool("hotkey", keys=["ctrl", "v"])  # a paste asks every time
    await h.collect(run, ScriptedPlanner([paste, paste], then=done()))
    assert [request.id for request in h.gate.requests] == [f"{run.id}-1", f"{run.id}-2"]


@pytest.mark.parametrize("prepared", [True, False], ids=["ran", "fault-while-preparing"])
async def test_a_run_is_no_longer_active_when_its_run_finished_arrives(
    harness: Harness, prepared: bool
) -> None:
    # a viewer that hears the end may start the run's next attempt at once
    run = await harness.create()
    heard: list[tuple[str, ...]] = []
    harness.runner.subscribe(lambda event: heard.append(harness.runner.active_ids))

    async def prepare(_: RunView) -> ScriptedPlanner:
        if not prepared:
            raise RuntimeError("no model")
        return ScriptedPlanner([], then=done())

    seen: tuple[str, ...] | None = None
    async for event in harness.runner.admit(run, prepare).events:
        if isinstance(event, RunFinished):
            seen = harness.runner.active_ids
    assert seen == () and heard[-1] == ()
