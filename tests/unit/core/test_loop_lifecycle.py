"""Run statuses, stop reasons and the event sequence of the loop (DESIGN §1)."""

from __future__ import annotations

import pytest

from desktop_agent.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    RunFinished,
    RunStarted,
    RunTotals,
    StepFinished,
    StepStarted,
)
from desktop_agent.core.models import (
    STOP_REASONS,
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StopReason,
)
from tests.fakes import MemoryRepository, ScriptedPlanner, done, fail, tool
from tests.unit.core.conftest import Consumer, Harness, make_harness


class StatusLog(MemoryRepository):
    """A MemoryRepository that remembers every status a run was saved with."""

    def __init__(self) -> None:
        super().__init__()
        self.history: list[RunStatus] = []

    async def save_run(self, run: RunView) -> None:
        if not self.history or self.history[-1] is not run.status:
            self.history.append(run.status)
        await super().save_run(run)


async def test_created_run_is_queued_and_not_active(harness: Harness) -> None:
    run = await harness.create()
    assert run.status is RunStatus.QUEUED
    assert run.stop_reason is None
    assert harness.stored(run.id).status is RunStatus.QUEUED
    assert not harness.runner.is_active(run.id)


async def test_status_moves_queued_running_paused_running_completed() -> None:
    h = make_harness()
    log = StatusLog()
    h.repo = log
    h.runner.services.repo = log
    run = await h.create()
    log.history.append(run.status)
    planner = ScriptedPlanner([tool("wait", seconds=0), done("all done")])

    consumer = Consumer(h.runner.start(run, planner))
    await consumer.wait_type("step_finished")  # the first observation is stored
    h.runner.pause(run.id)
    await consumer.wait_type("run_paused")
    assert log.runs[run.id].status is RunStatus.PAUSED
    h.runner.resume(run.id)
    events = await consumer.finished()

    assert log.history == [
        RunStatus.QUEUED,
        RunStatus.RUNNING,
        RunStatus.PAUSED,
        RunStatus.RUNNING,
        RunStatus.COMPLETED,
    ]
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.COMPLETED, StopReason.DONE)
    assert final.run.message == "all done"
    assert log.runs[run.id] == final.run


async def test_run_started_shows_the_run_running_before_any_step(harness: Harness) -> None:
    run = await harness.create()
    events = await harness.collect(run, ScriptedPlanner([done()]))
    first = events[0]
    assert isinstance(first, RunStarted)
    assert first.run.status is RunStatus.RUNNING
    assert first.run.started_at is not None
    assert first.run.step_count == 0


async def test_normal_run_emits_the_exact_event_sequence(harness: Harness) -> None:
    run = await harness.create()
    planner = ScriptedPlanner([tool("wait", seconds=0), done()])
    events = await harness.collect(run, planner)

    shape = [
        (event.type, event.step.kind.value, event.step.index)
        if isinstance(event, StepStarted | StepFinished)
        else (event.type,)
        for event in events
    ]
    assert shape == [
        ("run_started",),
        ("step_started", "observe", 1),
        ("step_finished", "observe", 1),
        ("step_started", "decide", 1),
        ("run_totals",),  # the turn's tokens counted: the faces' totals, no store read
        ("step_finished", "decide", 1),
        ("step_started", "action", 1),
        ("step_finished", "action", 1),
        ("step_started", "observe", 2),
        ("step_finished", "observe", 2),
        ("step_started", "decide", 2),
        ("run_totals",),
        ("step_finished", "decide", 2),
        ("run_finished",),
    ]
    finished = [event.step for event in events if isinstance(event, StepFinished)]
    assert all(step.status is StepStatus.OK for step in finished)
    # the last totals are the run's (what the window shows without reading the store)
    totals = [event for event in events if isinstance(event, RunTotals)]
    final = events[-1].run  # type: ignore[union-attr]
    assert (totals[-1].prompt_tokens, totals[-1].completion_tokens, totals[-1].cost) == (
        final.prompt_tokens,
        final.completion_tokens,
        final.cost,
    )
    assert totals[-1].prompt_tokens > 0
    # the decide row names the tool it chose; the action row runs it
    assert [step.tool for step in finished] == [
        "screen_snapshot",
        "wait",
        "wait",
        "screen_snapshot",
        None,
    ]
    assert finished[1].args == finished[2].args == {"seconds": 0}
    assert harness.executor.calls[0][0] == "wait"


async def test_a_tool_that_asks_adds_approval_events_inside_its_action_step() -> None:
    h = make_harness()
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([tool("click", x=5, y=6), done()]))
    types = [event.type for event in events]
    action_start = next(
        i
        for i, event in enumerate(events)
        if isinstance(event, StepStarted) and event.step.kind is StepKind.ACTION
    )
    assert types[action_start : action_start + 4] == [
        "step_started",
        "approval_requested",
        "approval_resolved",
        "step_finished",
    ]
    requested = events[action_start + 1]
    resolved = events[action_start + 2]
    assert isinstance(requested, ApprovalRequested)
    assert isinstance(resolved, ApprovalResolved)
    assert requested.approval.tool == "click"
    assert requested.approval.args == {"x": 5, "y": 6}
    assert requested.approval.target == (5, 6)
    assert resolved.approval == requested.approval


async def test_one_step_finished_is_emitted_per_stored_step_row(harness: Harness) -> None:
    run = await harness.create()
    planner = ScriptedPlanner(
        [tool("wait", seconds=0), tool("nope"), tool("wait", seconds=1), done()]
    )
    events = await harness.collect(run, planner)
    finished = [event.step for event in events if isinstance(event, StepFinished)]
    started = [event.step for event in events if isinstance(event, StepStarted)]
    stored = await harness.repo.list_steps(run.id)
    assert finished == stored
    assert [step.seq for step in stored] == list(range(1, len(stored) + 1))
    assert [step.seq for step in started] == [step.seq for step in finished]
    assert all(step.status is StepStatus.RUNNING for step in started)
    assert all(step.finished_at is not None and step.duration_ms is not None for step in stored)


async def test_step_count_is_the_number_of_turns(harness: Harness) -> None:
    run = await harness.create()
    planner = ScriptedPlanner([tool("wait", seconds=0), tool("wait", seconds=0), done()])
    events = await harness.collect(run, planner)
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert final.run.step_count == 3
    assert harness.stored(run.id).step_count == 3


async def test_max_steps_one_ends_the_run_after_its_first_turn_as_stopped_max_steps(
    harness: Harness,
) -> None:
    run = await harness.create(max_steps=1)
    planner = ScriptedPlanner([tool("wait", seconds=0), done()])
    events = await harness.collect(run, planner)
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.STOPPED, StopReason.MAX_STEPS)
    assert final.run.step_count == 1
    assert len(planner.requests) == 1
    # the turn's observation, and the one that checks the action's effect (which the next
    # turn would have started from; there is none)
    assert harness.observer.calls == 2
    assert [name for name, _ in harness.executor.calls] == ["wait"]
    assert {step.index for step in await harness.repo.list_steps(run.id)} == {1}


async def test_a_failed_turn_counts_toward_max_steps(harness: Harness) -> None:
    run = await harness.create(max_steps=2, max_failures=5)
    planner = ScriptedPlanner([tool("nope"), tool("nope"), done()])
    events = await harness.collect(run, planner)
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.STOPPED, StopReason.MAX_STEPS)


async def test_planner_fail_ends_the_run_failed_error_with_its_reason(harness: Harness) -> None:
    run = await harness.create()
    events = await harness.collect(run, ScriptedPlanner([fail("the app is not installed")]))
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.FAILED, StopReason.ERROR)
    assert final.run.message == "the app is not installed"
    assert harness.executor.calls == []


async def test_an_unexpected_fault_ends_the_run_failed_error_not_a_crash(harness: Harness) -> None:
    async def broken(_request: object) -> object:
        raise KeyError("boom")

    run = await harness.create()
    events = await harness.collect(run, ScriptedPlanner([broken]))  # type: ignore[list-item]
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.FAILED, StopReason.ERROR)
    assert "KeyError" in final.run.message
    steps = await harness.repo.list_steps(run.id)
    assert steps[-1].kind is StepKind.DECIDE
    assert steps[-1].status is StepStatus.SKIPPED
    assert not harness.runner.is_active(run.id)


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        ("done", (RunStatus.COMPLETED, StopReason.DONE)),
        ("fail", (RunStatus.FAILED, StopReason.ERROR)),
        ("max_failures", (RunStatus.FAILED, StopReason.MAX_FAILURES)),
        ("breaker", (RunStatus.FAILED, StopReason.BREAKER)),
        ("max_steps", (RunStatus.STOPPED, StopReason.MAX_STEPS)),
        ("user_stop", (RunStatus.STOPPED, StopReason.USER_STOP)),
    ],
)
async def test_each_terminal_status_carries_a_stop_reason_it_admits(
    scenario: str, expected: tuple[RunStatus, StopReason]
) -> None:
    h = make_harness()
    run = await h.create(max_steps=1 if scenario == "max_steps" else 20)
    script = {
        "done": [done()],
        "fail": [fail()],
        "max_failures": [tool("nope")] * 3,
        "breaker": [tool("wait", seconds=0)],
        "max_steps": [tool("wait", seconds=0)],
        "user_stop": [tool("wait", seconds=0)],
    }[scenario]
    if scenario == "breaker":
        for _ in range(3):
            h.breakers["wait"].record(False)
    planner = ScriptedPlanner(script)
    events = h.runner.start(run, planner)
    if scenario == "user_stop":
        h.runner.stop(run.id)
    collected = [event async for event in events]
    final = collected[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == expected
    assert final.run.status.is_terminal
    assert final.run.stop_reason in STOP_REASONS[final.run.status]
    assert final.run.finished_at is not None
    assert h.stored(run.id) == final.run


def test_every_terminal_status_and_only_those_admit_stop_reasons() -> None:
    terminal = {status for status in RunStatus if status.is_terminal}
    assert set(STOP_REASONS) == terminal
    assert terminal == {
        RunStatus.COMPLETED,
        RunStatus.FAILED,
        RunStatus.STOPPED,
        RunStatus.INTERRUPTED,
    }
    assert {status for status in RunStatus if status.is_active} == {
        RunStatus.RUNNING,
        RunStatus.PAUSED,
    }
    every_reason = set().union(*STOP_REASONS.values())
    assert every_reason == set(StopReason)
    assert STOP_REASONS[RunStatus.INTERRUPTED] == {StopReason.CRASH}


async def test_a_terminal_run_cannot_be_started_again(harness: Harness) -> None:
    from desktop_agent.core.errors import RefusedToStart

    run = await harness.create()
    await harness.collect(run, ScriptedPlanner([done()]))
    ended = harness.stored(run.id)
    with pytest.raises(RefusedToStart, match="has ended"):
        harness.runner.start(ended, ScriptedPlanner([done()]))
    assert not harness.runner.is_active(run.id)
