"""Stop and pause, honoured at every await of the loop (DESIGN §1)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pydantic import BaseModel

from desktop_agent.core.breaker import BreakerState
from desktop_agent.core.errors import StopRequested
from desktop_agent.core.events import (
    ApprovalResolved,
    RunFinished,
    RunPaused,
    StepFinished,
    TaskLoopEvent,
    event_to_json,
)
from desktop_agent.core.models import (
    ApprovalDecision,
    Decision,
    RunStatus,
    StepKind,
    StepStatus,
    StopReason,
    ToolResult,
)
from desktop_agent.core.ports import DecideRequest, ToolContext
from tests.fakes import ScriptedPlanner, done, tool
from tests.unit.core.conftest import Blocker, Consumer, Harness, make_harness


def assert_user_stop(events: list[TaskLoopEvent]) -> None:
    last = events[-1]
    assert isinstance(last, RunFinished)
    assert (last.run.status, last.run.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)


async def yield_to_the_loop(times: int = 50) -> None:
    """Give every ready task many chances to run (no wall-clock wait)."""
    for _ in range(times):
        await asyncio.sleep(0)


# ── stop ─────────────────────────────────────────────────────────────────────


async def test_stop_during_a_planner_call_ends_the_run_without_waiting_for_it(
    harness: Harness,
) -> None:
    blocker = Blocker()

    async def never_answers(_request: DecideRequest) -> Decision:
        await blocker.block()
        return tool("wait", seconds=0)

    run = await harness.create()
    consumer = Consumer(harness.runner.start(run, ScriptedPlanner([never_answers], then=done())))
    await blocker.entered.wait()
    assert harness.runner.stop(run.id)
    events = await consumer.finished()

    assert_user_stop(events)
    assert blocker.cancelled and not blocker.completed
    assert harness.executor.calls == []
    assert harness.stored(run.id) == events[-1].run  # type: ignore[union-attr]
    decide = (await harness.repo.list_steps(run.id))[-1]
    assert (decide.kind, decide.status) == (StepKind.DECIDE, StepStatus.SKIPPED)
    assert decide.error == "stopped by the user"
    assert not harness.runner.is_active(run.id)


async def test_stop_during_an_async_tool_ends_the_run_without_waiting_for_it(
    harness: Harness,
) -> None:
    blocker = Blocker()
    contexts: list[ToolContext] = []

    async def hangs(_args: BaseModel, context: ToolContext) -> ToolResult:
        contexts.append(context)
        await blocker.block()
        return ToolResult.success("finished after all")

    harness.executor.handlers["wait"] = hangs
    run = await harness.create()
    planner = ScriptedPlanner([tool("wait", seconds=30)], then=tool("wait", seconds=0))
    consumer = Consumer(harness.runner.start(run, planner))
    await blocker.entered.wait()
    assert not contexts[0].cancelled.is_set()
    harness.runner.stop(run.id)
    events = await consumer.finished()

    assert_user_stop(events)
    assert blocker.cancelled and not blocker.completed
    assert contexts[0].cancelled.is_set()
    assert [name for name, _ in harness.executor.calls] == ["wait"]  # no tool after the stop
    assert harness.executor.finished == []
    action = (await harness.repo.list_steps(run.id))[-1]
    assert (action.kind, action.status) == (StepKind.ACTION, StepStatus.SKIPPED)
    # a user stop is not a failure of the tool
    breaker = harness.breakers["wait"]
    assert (breaker.state, breaker.consecutive_failures) == (BreakerState.CLOSED, 0)


async def test_stop_during_a_thread_tool_sets_its_cancelled_flag_and_it_stops_between_inputs(
    harness: Harness,
) -> None:
    started = threading.Event()
    exited = threading.Event()
    keystrokes: list[int] = []
    keystrokes_at_stop: list[int] = []

    def type_slowly(cancelled: threading.Event) -> None:
        started.set()
        for key in range(5000):  # bounded: a failing test cannot hang the session
            if cancelled.is_set():
                break
            keystrokes.append(key)
            cancelled.wait(0.001)
        exited.set()

    async def threaded(_args: BaseModel, context: ToolContext) -> ToolResult:
        await asyncio.to_thread(type_slowly, context.cancelled)
        if context.cancelled.is_set():  # as the desktop executor does when cut short
            raise StopRequested("stopped during typing")
        return ToolResult.success("typed")

    harness.executor.handlers["wait"] = threaded
    run = await harness.create()
    consumer = Consumer(harness.runner.start(run, ScriptedPlanner([tool("wait", seconds=1)])))
    await asyncio.to_thread(started.wait, 5)
    keystrokes_at_stop.append(len(keystrokes))
    harness.runner.stop(run.id)
    events = await consumer.finished()
    assert_user_stop(events)
    assert await asyncio.to_thread(exited.wait, 5)
    assert len(keystrokes) - keystrokes_at_stop[0] <= 1  # at most one input after the stop
    assert harness.executor.finished == []
    action = (await harness.repo.list_steps(run.id))[-1]
    assert (action.kind, action.status) == (StepKind.ACTION, StepStatus.SKIPPED)
    breaker = harness.breakers["wait"]
    assert (breaker.state, breaker.consecutive_failures) == (BreakerState.CLOSED, 0)


async def test_stop_during_an_observation_ends_the_run_and_nothing_is_decided(
    harness: Harness,
) -> None:
    harness.observer.gate = asyncio.Event()  # never set: the capture hangs
    run = await harness.create()
    planner = ScriptedPlanner([done()])
    consumer = Consumer(harness.runner.start(run, planner))
    await consumer.wait_type("step_started")
    await yield_to_the_loop()
    assert harness.observer.calls == 1
    harness.runner.stop(run.id)
    events = await consumer.finished()
    assert_user_stop(events)
    assert planner.requests == []
    breaker = harness.breakers["screen_snapshot"]
    assert (breaker.state, breaker.consecutive_failures) == (BreakerState.CLOSED, 0)


async def test_stop_while_an_approval_is_pending_ends_the_run_and_never_runs_the_tool() -> None:
    h = make_harness(answers=[None])  # the human never answers
    run = await h.create()
    consumer = Consumer(h.runner.start(run, ScriptedPlanner([tool("click", x=3, y=4)])))
    await consumer.wait_type("approval_requested")
    await yield_to_the_loop()
    assert len(h.gate.requests) == 1
    h.runner.stop(run.id)
    events = await consumer.finished()
    assert_user_stop(events)
    assert h.executor.calls == []
    assert not any(isinstance(event, ApprovalResolved) for event in events)
    breaker = h.breakers["click"]
    assert (breaker.state, breaker.consecutive_failures) == (BreakerState.CLOSED, 0)


async def test_stop_while_paused_ends_the_run_stopped_user_stop(harness: Harness) -> None:
    run = await harness.create()
    planner = ScriptedPlanner([], then=tool("wait", seconds=0))
    consumer = Consumer(harness.runner.start(run, planner))
    harness.runner.pause(run.id)
    await consumer.wait_type("run_paused")
    assert harness.stored(run.id).status is RunStatus.PAUSED
    harness.runner.stop(run.id)
    events = await consumer.finished()
    assert_user_stop(events)
    assert planner.requests == []
    assert harness.executor.calls == []
    assert "run_resumed" not in [event.type for event in events]


async def test_stop_before_the_first_event_ends_the_run_before_any_step(
    harness: Harness,
) -> None:
    run = await harness.create()
    events = harness.runner.start(run, ScriptedPlanner([done()]))
    harness.runner.stop(run.id)
    collected = [event async for event in events]
    assert [event.type for event in collected] == ["run_started", "run_finished"]
    assert_user_stop(collected)
    assert harness.observer.calls == 0


async def test_a_stop_that_arrives_while_a_step_is_being_stored_starts_no_planner_call(
    harness: Harness,
) -> None:
    """The stop lands during a store write, before the planner is called: no call is made
    (and no planner coroutine is left un-awaited)."""
    run = await harness.create()
    planner = ScriptedPlanner([tool("wait", seconds=0)])
    save_step = harness.repo.save_step

    async def save_and_stop(step: object) -> None:
        await save_step(step)  # type: ignore[arg-type]
        if getattr(step, "kind", None) is StepKind.DECIDE:
            harness.runner.stop(run.id)

    harness.repo.save_step = save_and_stop  # type: ignore[method-assign]
    events = await harness.collect(run, planner)
    assert_user_stop(events)
    assert planner.requests == []
    assert harness.executor.calls == []


async def test_a_stop_while_the_action_row_is_stored_asks_nobody_and_runs_nothing() -> None:
    h = make_harness()
    run = await h.create()
    save_step = h.repo.save_step

    async def save_and_stop(step: object) -> None:
        await save_step(step)  # type: ignore[arg-type]
        if getattr(step, "kind", None) is StepKind.ACTION:
            h.runner.stop(run.id)

    h.repo.save_step = save_and_stop  # type: ignore[method-assign]
    events = await h.collect(run, ScriptedPlanner([tool("click", x=1, y=1)]))
    assert_user_stop(events)
    assert "approval_requested" not in [event.type for event in events]
    assert h.gate.requests == []
    assert h.executor.calls == []


# ── pause ────────────────────────────────────────────────────────────────────


async def test_pause_emits_run_paused_takes_no_turn_and_resume_emits_run_resumed(
    harness: Harness,
) -> None:
    run = await harness.create()
    planner = ScriptedPlanner([tool("wait", seconds=0), tool("wait", seconds=0), done()])
    consumer = Consumer(harness.runner.start(run, planner))
    await consumer.wait_for(
        lambda event: isinstance(event, StepFinished) and event.step.kind is StepKind.ACTION
    )
    harness.runner.pause(run.id)
    paused = await consumer.wait_type("run_paused")
    assert isinstance(paused, RunPaused)
    assert paused.run.status is RunStatus.PAUSED
    counts = (harness.observer.calls, len(planner.requests), len(harness.executor.calls))
    seen = len(consumer.events)

    await yield_to_the_loop()
    assert (harness.observer.calls, len(planner.requests), len(harness.executor.calls)) == counts
    assert len(consumer.events) == seen  # nothing happened while paused
    assert harness.stored(run.id).status is RunStatus.PAUSED

    assert harness.runner.resume(run.id)
    events = await consumer.finished()
    types = [event.type for event in events]
    assert types.index("run_resumed") == types.index("run_paused") + 1
    resumed = events[types.index("run_resumed")]
    assert resumed.run.status is RunStatus.RUNNING  # type: ignore[union-attr]
    last = events[-1]
    assert isinstance(last, RunFinished)
    assert (last.run.status, last.run.stop_reason) == (RunStatus.COMPLETED, StopReason.DONE)
    planner.assert_complete()


async def test_a_pause_between_decision_and_action_drops_the_stale_decision(
    harness: Harness,
) -> None:
    """The user paused (or took over) while the model was thinking: the screen may have
    changed, so the decision is not acted on; the next turn observes afresh and decides."""
    blocker = Blocker()

    async def slow(_request: DecideRequest) -> Decision:
        await blocker.block()
        return tool("wait", seconds=0)

    run = await harness.create()
    planner = ScriptedPlanner([slow], then=done())
    consumer = Consumer(harness.runner.start(run, planner))
    await blocker.entered.wait()
    harness.runner.pause(run.id)
    blocker.release.set()
    await consumer.wait_type("run_paused")
    await yield_to_the_loop()
    assert harness.executor.calls == []  # the decision is in hand, but paused: not acted on
    events_while_paused = consumer.types()
    assert events_while_paused[-1] == "run_paused"
    observed_before = harness.observer.calls

    harness.runner.resume(run.id)
    events = await consumer.finished()
    assert harness.executor.calls == []  # the stale decision never ran
    after_resume = [
        (event.step.kind, event.step.status)
        for event in events[len(events_while_paused) :]
        if isinstance(event, StepFinished)
    ]
    assert after_resume == [
        (StepKind.ACTION, StepStatus.SKIPPED),
        (StepKind.OBSERVE, StepStatus.OK),
        (StepKind.DECIDE, StepStatus.OK),
    ]
    assert harness.observer.calls == observed_before + 1  # a fresh observation
    skipped = next(s for s in await harness.repo.list_steps(run.id) if s.kind is StepKind.ACTION)
    assert skipped.error is not None and skipped.error.startswith("paused before acting")
    final = events[-1]
    assert isinstance(final, RunFinished) and final.run.status is RunStatus.COMPLETED
    assert len(planner.requests) == 2


async def test_pause_resume_and_stop_of_an_unknown_run_say_false(harness: Harness) -> None:
    assert harness.runner.pause("nope") is False
    assert harness.runner.resume("nope") is False
    assert harness.runner.stop("nope") is False


async def test_a_pause_while_the_human_is_asked_drops_the_approved_decision_too() -> None:
    """The user took over while the question was open: the approved action is not run on a
    screen that may have changed; the next turn decides (and asks) again."""
    first_answer: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
    h = make_harness(answers=[first_answer, ApprovalDecision.ONCE])
    run = await h.create()
    planner = ScriptedPlanner([tool("click", x=3, y=4)] * 2, then=done())
    consumer = Consumer(h.runner.start(run, planner))
    await consumer.wait_type("approval_requested")
    h.runner.pause(run.id)  # the take-over, while the question is open
    first_answer.set_result(ApprovalDecision.ONCE)
    await consumer.wait_type("run_paused")
    await yield_to_the_loop()
    assert h.executor.calls == []
    h.runner.resume(run.id)
    events = await consumer.finished()
    actions = [
        e.step for e in events if isinstance(e, StepFinished) and e.step.kind is StepKind.ACTION
    ]
    assert [(a.status, a.error) for a in actions] == [
        (StepStatus.SKIPPED, "paused before acting: the next turn decides on a fresh screenshot"),
        (StepStatus.OK, None),
    ]
    assert len(h.gate.requests) == 2
    assert len(h.executor.calls) == 1
    assert h.breakers["click"].consecutive_failures == 0


async def test_a_stop_during_an_action_begins_no_observation_of_its_effect(
    harness: Harness,
) -> None:
    run = await harness.create()
    observations: list[int] = []

    async def stops_while_clicking(_args: BaseModel, _context: ToolContext) -> ToolResult:
        observations.append(harness.observer.calls)
        assert harness.runner.stop(run.id)
        return ToolResult.success("clicked")

    harness.executor.handlers["click"] = stops_while_clicking
    events = await harness.collect(run, ScriptedPlanner([tool("click", x=5, y=5)], then=done()))

    assert_user_stop(events)
    # the effect check's observation is never begun (nor left behind un-awaited): the turn's
    # and the look at the click's point once the person answered are all there is
    assert observations == [2]
    assert harness.observer.calls == 2


@pytest.mark.parametrize("reason", ["request", "user"])
async def test_run_paused_says_why_the_run_paused(harness: Harness, reason: str) -> None:
    run = await harness.create()
    planner = ScriptedPlanner([tool("wait", seconds=0), tool("wait", seconds=0), done()])
    consumer = Consumer(harness.runner.start(run, planner))
    await consumer.wait_for(
        lambda event: isinstance(event, StepFinished) and event.step.kind is StepKind.ACTION
    )
    harness.runner.pause(run.id, reason=reason)  # type: ignore[arg-type]
    paused = await consumer.wait_type("run_paused")
    assert isinstance(paused, RunPaused) and paused.reason == reason
    assert event_to_json(paused)["reason"] == reason  # the CLI's --json and the SSE say it too
    harness.runner.resume(run.id)
    await consumer.finished()
