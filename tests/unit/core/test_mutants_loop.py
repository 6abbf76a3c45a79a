"""What the loop hands the tool it runs (mutants of core/loop.py's gate part that lived)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pydantic import BaseModel

from desktop_agent.core.loop import STALE_DECISION
from desktop_agent.core.models import (
    ApprovalDecision,
    Decision,
    MonitorArea,
    Policy,
    RunStatus,
    ScreenLayout,
    ScreenMapping,
    StepKind,
    StepStatus,
    ToolResult,
)
from desktop_agent.core.ports import ToolContext
from tests.fakes import ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import Consumer, make_harness
from tests.unit.core.test_pause_before_grounding import PausingProbe
from tests.unit.core.test_run_monitor import MONITORS


async def test_the_tool_is_told_which_run_it_acts_for_and_on_what_screen() -> None:
    # an executor behind the port knows the run by ToolContext.run_id (core/ports.py)
    # (loop _execute 4)
    h = make_harness(answers=[ApprovalDecision.RUN])
    h.observer.observation = make_observation()
    contexts: list[ToolContext] = []

    async def click(_args: BaseModel, context: ToolContext) -> ToolResult:
        contexts.append(context)
        return ToolResult.success("clicked")

    h.executor.handlers["click"] = click
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=1, y=1)], then=done()))
    [context] = contexts
    assert context.run_id == run.id
    assert context.observation is not None
    assert context.observation.image == h.observer.observation.image


async def test_a_refused_call_is_stored_in_its_turn_under_the_tool_the_model_named() -> None:
    # a tool the run does not allow: denied, its row in turn 2 (loop _act 6)
    h = make_harness()
    h.observer.observation = make_observation()
    run = await h.create(allowed_tools=("wait",))
    planner = ScriptedPlanner([tool("wait", seconds=0), tool("click", x=1, y=1)], then=done())
    await h.collect(run, planner)
    actions = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert [(a.index, a.tool, a.status) for a in actions] == [
        (1, "wait", StepStatus.OK),
        (2, "click", StepStatus.DENIED),
    ]


async def test_a_decision_naming_no_tool_is_stored_as_naming_none() -> None:
    # nothing made up for the missing name in the row (loop _act 3)
    h = make_harness()
    h.observer.observation = make_observation()
    run = await h.create()
    nameless = Decision(action="tool", tool=None, args={}, reason="r", raw='{"action":"tool"}')
    await h.collect(run, ScriptedPlanner([nameless], then=done()))
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert (action.tool, action.status) == ("", StepStatus.FAILED)


async def test_a_pause_while_the_gate_judges_skips_the_call_and_says_why() -> None:
    # paused while the focus was read for the judgement: the row says the decision was
    # stale, the run goes on (loop _act 72, 74-77)
    probe = PausingProbe(at=2)  # 1: when the call is validated; 2: when the gate judges it
    h = make_harness(policies={"type_text": Policy.ASK}, focus=probe)
    run = await h.create(allowed_tools=("type_text",))
    probe.pause = lambda: h.runner.pause(run.id)
    consumer = Consumer(
        h.runner.start(run, ScriptedPlanner([tool("type_text", text="hi")], then=done()))
    )
    await consumer.wait_type("run_paused")
    h.runner.resume(run.id)
    await consumer.finished()
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert (action.status, action.error) == (StepStatus.SKIPPED, STALE_DECISION)
    stored = await h.repo.get_run(run.id)
    assert stored is not None and stored.status is RunStatus.COMPLETED


@pytest.mark.parametrize(
    ("result", "stored_target"),
    [
        (ToolResult.success("clicked"), (5, 5)),  # where the call pointed
        (ToolResult.success("clicked", target=(7, 8)), (7, 8)),  # where the tool says it did
    ],
)
async def test_an_action_a_stop_followed_is_stored_as_done_with_its_summary_and_target(
    result: ToolResult, stored_target: tuple[int, int]
) -> None:
    # the stop came while the tool ran: the effect is not looked at, the row still says
    # what ran and where (loop _act 155, 156, 159-161)
    h = make_harness(policies={"click": Policy.ALLOW})
    h.observer.observation = make_observation()
    run = await h.create()

    async def stops_while_clicking(_args: BaseModel, _context: ToolContext) -> ToolResult:
        assert h.runner.stop(run.id)
        return result

    h.executor.handlers["click"] = stops_while_clicking
    await h.collect(run, ScriptedPlanner([tool("click", x=5, y=5)], then=done()))
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert (action.status, action.summary, action.target) == (
        StepStatus.OK,
        "clicked",
        stored_target,
    )


async def test_a_done_action_is_stored_where_the_call_pointed_when_the_tool_says_nowhere() -> None:
    # loop _act 179
    h = make_harness(policies={"click": Policy.ALLOW})
    h.observer.observation = make_observation()
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=5, y=5)], then=done()))
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert (action.status, action.target) == (StepStatus.OK, (5, 5))


@pytest.mark.parametrize(
    ("result", "error", "summary"),
    [
        (ToolResult(ok=False, summary="pressed half"), "failed", "pressed half"),
        (ToolResult.failure("no such button"), "no such button", "no such button"),
    ],
)
async def test_a_failed_action_is_stored_with_its_error_summary_and_target(
    result: ToolResult, error: str, summary: str
) -> None:
    # a failure that says no error is "failed"; the row keeps the summary and where the call
    # pointed (loop _act 183, 184, 187-189)
    h = make_harness(policies={"click": Policy.ALLOW})
    h.observer.observation = make_observation()
    run = await h.create()

    async def fails(_args: BaseModel, _context: ToolContext) -> ToolResult:
        return result

    h.executor.handlers["click"] = fails
    await h.collect(run, ScriptedPlanner([tool("click", x=5, y=5)], then=done()))
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert (action.status, action.error, action.summary, action.target) == (
        StepStatus.FAILED,
        error,
        summary,
        (5, 5),
    )


async def test_an_action_on_an_image_of_all_monitors_is_stored_on_the_monitor_under_it() -> None:
    # the image is every monitor: the row's monitor is the one under the click (loop _act 51)
    h = make_harness(policies={"click": Policy.ALLOW})
    h.observer.observation = replace(
        make_observation(),
        layout=ScreenLayout(MonitorArea(0, -1280, 0, 3200, 1080), MONITORS),
        mapping=ScreenMapping(scale_x=2.5, scale_y=2.5, offset_x=-1280),
    )
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=100, y=100)], then=done()))
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert action.monitor == MONITORS[1]  # -1030,250
