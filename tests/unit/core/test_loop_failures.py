"""Consecutive failures, their reset, the breaker linkage and refused tools (DESIGN §1)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from pydantic import BaseModel

from desktop_agent.core.breaker import BreakerState
from desktop_agent.core.errors import (
    DesktopChanged,
    NoSuchTarget,
    PlannerError,
    PlannerTransportError,
)
from desktop_agent.core.events import ApprovalResolved, RunFinished, StepFinished, TaskLoopEvent
from desktop_agent.core.models import (
    ApprovalDecision,
    Policy,
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StopReason,
    ToolResult,
)
from desktop_agent.core.ports import ToolContext
from tests.fakes import ScriptedPlanner, done, tool
from tests.unit.core.conftest import Harness, make_harness


def final_run(events: list[TaskLoopEvent]) -> RunView:
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last.run


def outcome(events: list[TaskLoopEvent]) -> tuple[RunStatus, StopReason | None]:
    run = final_run(events)
    return run.status, run.stop_reason


def action_steps(events: list[TaskLoopEvent]) -> list[StepFinished]:
    return [
        event
        for event in events
        if isinstance(event, StepFinished) and event.step.kind is StepKind.ACTION
    ]


async def raising_tool(_args: BaseModel, _context: ToolContext) -> ToolResult:
    raise RuntimeError("the tool broke")


async def failing_tool(_args: BaseModel, _context: ToolContext) -> ToolResult:
    return ToolResult.failure("nothing happened")


# ── three consecutive failures end the run ───────────────────────────────────


async def test_three_observation_failures_end_the_run_failed_max_failures(
    harness: Harness,
) -> None:
    harness.observer.fail_next(3)
    run = await harness.create()
    planner = ScriptedPlanner([], then=done())
    events = await harness.collect(run, planner)
    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert harness.observer.calls == 3
    assert planner.requests == []
    assert final_run(events).step_count == 3
    observe_rows = await harness.repo.list_steps(run.id)
    assert [(step.kind, step.status) for step in observe_rows] == [
        (StepKind.OBSERVE, StepStatus.FAILED)
    ] * 3
    assert "capture failed" in final_run(events).message


async def test_three_unusable_planner_outputs_end_the_run_failed_max_failures(
    harness: Harness,
) -> None:
    run = await harness.create()
    planner = ScriptedPlanner(
        [
            PlannerError("not JSON", raw="Sure! I will click"),
            PlannerTransportError("connection refused"),
            PlannerError("unknown action 'jump'"),
            done(),
        ]
    )
    events = await harness.collect(run, planner)
    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert len(planner.requests) == 3
    assert harness.executor.calls == []
    decide_rows = [
        step for step in await harness.repo.list_steps(run.id) if step.kind is StepKind.DECIDE
    ]
    assert [step.status for step in decide_rows] == [StepStatus.FAILED] * 3
    assert decide_rows[0].raw_output == "Sure! I will click"
    assert decide_rows[1].error == "connection refused"


async def test_three_raising_tools_end_the_run_failed_max_failures(harness: Harness) -> None:
    harness.executor.handlers["wait"] = raising_tool
    run = await harness.create()
    planner = ScriptedPlanner([tool("wait", seconds=0)] * 3 + [done()])
    events = await harness.collect(run, planner)
    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert len(harness.executor.calls) == 3
    errors = [event.step.error for event in action_steps(events)]
    assert errors == ["RuntimeError: the tool broke"] * 3


async def test_three_tool_results_of_failure_end_the_run_failed_max_failures(
    harness: Harness,
) -> None:
    harness.executor.handlers["wait"] = failing_tool
    run = await harness.create()
    planner = ScriptedPlanner([tool("wait", seconds=0)] * 3 + [done()])
    events = await harness.collect(run, planner)
    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert [event.step.status for event in action_steps(events)] == [StepStatus.FAILED] * 3
    assert final_run(events).message.endswith("nothing happened")


async def test_failures_of_different_kinds_add_up_to_max_failures(harness: Harness) -> None:
    # A good observation or decision is not a successful tool execution: no reset.
    harness.executor.handlers["wait"] = failing_tool
    harness.observer.fail_next(1)
    run = await harness.create()
    planner = ScriptedPlanner([PlannerError("bad JSON"), tool("wait", seconds=0), done()])
    events = await harness.collect(run, planner)
    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert final_run(events).step_count == 3


async def test_a_successful_tool_between_observation_failures_resets_the_count() -> None:
    h = make_harness()
    h.observer.fail_next(2)

    async def wait_then_break_capture(_args: BaseModel, _context: ToolContext) -> ToolResult:
        h.observer.fail_next(2)
        return ToolResult.success("waited")

    h.executor.handlers["wait"] = wait_then_break_capture
    run = await h.create()
    planner = ScriptedPlanner([tool("wait", seconds=0), done()])
    events = await h.collect(run, planner)
    assert outcome(events) == (RunStatus.COMPLETED, StopReason.DONE)
    assert h.observer.calls == 6  # 2 failed, 1 ok, 2 failed, 1 ok


async def test_a_successful_tool_between_planner_failures_resets_the_count(
    harness: Harness,
) -> None:
    run = await harness.create()
    planner = ScriptedPlanner(
        [
            PlannerError("bad"),
            PlannerError("bad"),
            tool("wait", seconds=0),
            PlannerError("bad"),
            PlannerError("bad"),
            done(),
        ]
    )
    events = await harness.collect(run, planner)
    assert outcome(events) == (RunStatus.COMPLETED, StopReason.DONE)
    planner.assert_complete()


async def test_a_successful_tool_between_tool_failures_resets_the_count(
    harness: Harness,
) -> None:
    results = iter(
        [
            ToolResult.failure("no"),
            ToolResult.failure("no"),
            ToolResult.success("yes"),
            ToolResult.failure("no"),
            ToolResult.failure("no"),
        ]
    )

    async def scripted(_args: BaseModel, _context: ToolContext) -> ToolResult:
        return next(results)

    harness.executor.handlers["hotkey"] = scripted
    harness.permissions.set_policy("hotkey", Policy.ALLOW)
    run = await harness.create()
    planner = ScriptedPlanner([tool("hotkey", keys=["ctrl", "s"])] * 5 + [done()])
    events = await harness.collect(run, planner)
    assert outcome(events) == (RunStatus.COMPLETED, StopReason.DONE)
    assert len(harness.executor.calls) == 5


async def test_unknown_tool_and_invalid_arguments_are_failed_steps_that_count(
    harness: Harness,
) -> None:
    run = await harness.create()
    planner = ScriptedPlanner([tool("teleport"), tool("wait", seconds=99), tool("wait"), done()])
    events = await harness.collect(run, planner)
    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    actions = [event.step for event in action_steps(events)]
    assert [step.status for step in actions] == [StepStatus.FAILED] * 3
    assert "unknown tool 'teleport'" in (actions[0].error or "")
    assert "invalid arguments for wait" in (actions[1].error or "")
    assert harness.executor.calls == []


# ── the breaker linkage ──────────────────────────────────────────────────────


async def test_a_tool_whose_breaker_is_open_is_not_run_and_ends_the_run_failed_breaker(
    harness: Harness,
) -> None:
    for _ in range(3):
        harness.breakers["wait"].record(False)
    run = await harness.create()
    events = await harness.collect(run, ScriptedPlanner([tool("wait", seconds=0), done()]))
    assert outcome(events) == (RunStatus.FAILED, StopReason.BREAKER)
    assert harness.executor.calls == []
    (action,) = action_steps(events)
    assert action.step.status is StepStatus.FAILED
    assert "wait is not working" in (action.step.error or "")
    assert "300 s" in (action.step.error or "")
    assert final_run(events).message == action.step.error


async def test_an_open_observation_breaker_ends_the_run_failed_breaker(harness: Harness) -> None:
    for _ in range(3):
        harness.breakers["screen_snapshot"].record(False)
    run = await harness.create()
    planner = ScriptedPlanner([done()])
    events = await harness.collect(run, planner)
    assert outcome(events) == (RunStatus.FAILED, StopReason.BREAKER)
    assert harness.observer.calls == 0
    assert planner.requests == []


async def test_a_tool_failing_three_times_opens_its_breaker_and_the_next_pick_ends_the_run(
    harness: Harness,
) -> None:
    harness.executor.handlers["wait"] = failing_tool
    run = await harness.create(max_failures=10)
    planner = ScriptedPlanner([tool("wait", seconds=0)] * 4 + [done()])
    events = await harness.collect(run, planner)
    assert outcome(events) == (RunStatus.FAILED, StopReason.BREAKER)
    assert len(harness.executor.calls) == 3
    assert harness.breakers["wait"].state is BreakerState.OPEN


async def desktop_changed(_args: BaseModel, _context: ToolContext) -> ToolResult:
    raise DesktopChanged("after 1 of 2 clicks the window under the point changed")


async def no_such_target(_args: BaseModel, _context: ToolContext) -> ToolResult:
    raise NoSuchTarget("no element 99 in the last observation (ids 1-7)")


@pytest.mark.parametrize(
    ("handler", "error"),
    [
        (desktop_changed, "after 1 of 2 clicks the window under the point changed"),
        (no_such_target, "no element 99 in the last observation (ids 1-7)"),
    ],
)
async def test_a_failure_that_is_not_the_tools_fault_is_a_failed_step_but_no_breaker_failure(
    harness: Harness, handler: Callable[..., Awaitable[ToolResult]], error: str
) -> None:
    # a dialog that came up under a double click's point, a model that names an element the
    # screen does not have, three times: the tool is not broken, so it is not locked for
    # every run for 5 minutes
    harness.executor.handlers["wait"] = handler
    run = await harness.create(max_failures=10)
    events = await harness.collect(run, ScriptedPlanner([tool("wait", seconds=0)] * 4 + [done()]))

    assert outcome(events) == (RunStatus.COMPLETED, StopReason.DONE)
    assert len(harness.executor.calls) == 4
    assert [(a.step.status, a.step.error) for a in action_steps(events)] == [
        (StepStatus.FAILED, error)
    ] * 4
    breaker = harness.breakers["wait"]
    assert (breaker.state, breaker.consecutive_failures) == (BreakerState.CLOSED, 0)


async def test_a_desktop_that_changed_counts_toward_the_runs_consecutive_failures(
    harness: Harness,
) -> None:
    harness.executor.handlers["wait"] = desktop_changed
    run = await harness.create(max_failures=3)
    events = await harness.collect(run, ScriptedPlanner([tool("wait", seconds=0)] * 4 + [done()]))

    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert len(harness.executor.calls) == 3


async def test_a_desktop_that_changed_between_tool_faults_neither_counts_nor_resets_them(
    harness: Harness,
) -> None:
    answers = iter([failing_tool, failing_tool, desktop_changed, failing_tool])

    async def next_answer(args: BaseModel, context: ToolContext) -> ToolResult:
        return await next(answers)(args, context)

    harness.executor.handlers["wait"] = next_answer
    run = await harness.create(max_failures=10)
    events = await harness.collect(run, ScriptedPlanner([tool("wait", seconds=0)] * 5 + [done()]))

    assert outcome(events) == (RunStatus.FAILED, StopReason.BREAKER)
    assert len(harness.executor.calls) == 4
    assert harness.breakers["wait"].state is BreakerState.OPEN


async def test_the_breaker_is_shared_by_every_run_of_the_process(harness: Harness) -> None:
    harness.executor.handlers["wait"] = failing_tool
    first = await harness.create(max_failures=3)
    await harness.collect(first, ScriptedPlanner([tool("wait", seconds=0)] * 3))
    assert harness.breakers["wait"].state is BreakerState.OPEN

    second = await harness.create()
    events = await harness.collect(second, ScriptedPlanner([tool("wait", seconds=0)]))
    assert outcome(events) == (RunStatus.FAILED, StopReason.BREAKER)
    assert len(harness.executor.calls) == 3


async def test_after_the_cooldown_one_trial_call_runs_and_its_success_closes_the_breaker(
    harness: Harness,
) -> None:
    for _ in range(3):
        harness.breakers["wait"].record(False)
    harness.clock.advance(300)
    assert harness.breakers["wait"].state is BreakerState.HALF_OPEN
    run = await harness.create()
    events = await harness.collect(run, ScriptedPlanner([tool("wait", seconds=0), done()]))
    assert outcome(events) == (RunStatus.COMPLETED, StopReason.DONE)
    assert len(harness.executor.calls) == 1
    # mypy holds the state it read before the calls that change it (a property)
    assert harness.breakers["wait"].state is BreakerState.CLOSED  # type: ignore[comparison-overlap]


async def test_a_failed_trial_call_reopens_the_breaker_and_the_next_pick_ends_the_run(
    harness: Harness,
) -> None:
    harness.executor.handlers["wait"] = failing_tool
    for _ in range(3):
        harness.breakers["wait"].record(False)
    harness.clock.advance(300)
    run = await harness.create()
    events = await harness.collect(run, ScriptedPlanner([tool("wait", seconds=0)] * 2))
    assert outcome(events) == (RunStatus.FAILED, StopReason.BREAKER)
    assert len(harness.executor.calls) == 1
    assert harness.breakers["wait"].state is BreakerState.OPEN


# ── refused tools are never executed and count as failures ───────────────────


async def test_a_tool_outside_the_allowed_list_is_denied_never_run_and_counts(
    harness: Harness,
) -> None:
    run = await harness.create(allowed_tools=("wait",))
    events = await harness.collect(run, ScriptedPlanner([tool("click", x=1, y=1)] * 3))
    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert harness.executor.calls == []
    assert harness.gate.requests == []
    steps = [event.step for event in action_steps(events)]
    assert [step.status for step in steps] == [StepStatus.DENIED] * 3
    assert steps[0].error == "tool 'click' is not allowed in this run"


async def test_the_planner_is_offered_only_the_allowed_tools(harness: Harness) -> None:
    run = await harness.create(allowed_tools=("wait", "click"))
    planner = ScriptedPlanner([done()])
    await harness.collect(run, planner)
    assert [spec.name for spec in planner.requests[0].tools] == ["click", "wait"]


async def test_a_denied_approval_never_runs_the_tool_and_counts_as_a_failure() -> None:
    h = make_harness(answers=[ApprovalDecision.DENY] * 3)
    run = await h.create()
    # the planner would go on (then: done): only the three denials can end the run on turn 3
    planner = ScriptedPlanner([tool("click", x=1, y=1)] * 3, then=done())
    events = await h.collect(run, planner)
    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert final_run(events).step_count == 3
    assert final_run(events).message == "3 consecutive failures; last: denied by the user"
    assert len(planner.requests) == 3
    assert h.executor.calls == []
    assert len(h.gate.requests) == 3
    steps = [event.step for event in action_steps(events)]
    assert [(step.status, step.error) for step in steps] == [
        (StepStatus.DENIED, "denied by the user")
    ] * 3


async def test_an_approval_that_times_out_is_denied_never_runs_and_counts_as_a_failure() -> None:
    h = make_harness(answers=[None] * 3, approval_timeout_s=0.01)
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([tool("click", x=1, y=1)] * 3))
    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert h.executor.calls == []
    resolved = [event for event in events if isinstance(event, ApprovalResolved)]
    assert [(event.decision, event.by) for event in resolved] == [
        (ApprovalDecision.DENY, "timeout")
    ] * 3
    steps = [event.step for event in action_steps(events)]
    assert [(step.status, step.error) for step in steps] == [
        (StepStatus.DENIED, "approval timed out")
    ] * 3


async def test_a_tool_denied_by_policy_never_asks_never_runs_and_counts() -> None:
    h = make_harness(policies={"click": Policy.DENY})
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([tool("click", x=1, y=1)] * 3))
    assert outcome(events) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert h.executor.calls == []
    assert h.gate.requests == []


async def test_a_refused_tool_leaves_its_breaker_untouched() -> None:
    h = make_harness(answers=[ApprovalDecision.DENY] * 3)
    run = await h.create(max_failures=5)
    await h.collect(run, ScriptedPlanner([tool("click", x=1, y=1)] * 3, then=done()))
    breaker = h.breakers["click"]
    assert breaker.state is BreakerState.CLOSED
    assert breaker.consecutive_failures == 0
