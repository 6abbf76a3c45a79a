"""Every observation and tool call has a deadline: a hung one fails its step, the run goes on."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from desktop_agent.core.events import RunFinished
from desktop_agent.core.models import (
    ApprovalDecision,
    Observation,
    RunStatus,
    StepKind,
    StepStatus,
    StopReason,
    ToolResult,
)
from desktop_agent.core.ports import ToolContext
from tests.fakes import ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import make_harness


async def test_a_hung_observation_fails_its_step_and_the_next_turn_observes_again() -> None:
    h = make_harness(observe_timeout_s=0.05)
    hung_once = asyncio.Event()
    real = h.observer.observe

    async def observe() -> Observation:
        if not hung_once.is_set():
            hung_once.set()
            await asyncio.Event().wait()  # a capture that never returns
        return await real()

    h.observer.observe = observe  # type: ignore[method-assign]
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([done()]))
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.COMPLETED, StopReason.DONE)
    observes = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.OBSERVE]
    assert [(s.status, s.error) for s in observes] == [
        (StepStatus.FAILED, "TimeoutError: the observation did not finish in 0.05 s"),
        (StepStatus.OK, None),
    ]


async def test_a_hung_tool_fails_its_step_and_counts_toward_max_failures() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN], tool_timeout_s=0.05)
    h.observer.observation = make_observation()

    async def hang(_args: BaseModel, _context: ToolContext) -> ToolResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    h.executor.handlers["click"] = hang
    run = await h.create(max_failures=2)
    events = await h.collect(run, ScriptedPlanner([tool("click", x=1, y=1)] * 2, then=done()))
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (
        RunStatus.FAILED,
        StopReason.MAX_FAILURES,
    )
    actions = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert [(s.status, s.error) for s in actions] == [
        (StepStatus.FAILED, "TimeoutError: click did not finish in 0.05 s")
    ] * 2


async def test_wait_gets_its_own_seconds_on_top_of_the_tool_deadline() -> None:
    h = make_harness(tool_timeout_s=0.05)

    async def slow_wait(args: BaseModel, _context: ToolContext) -> ToolResult:
        await asyncio.sleep(0.1)  # longer than the bare deadline, shorter than its 0.2 s
        return ToolResult.success("waited")

    h.executor.handlers["wait"] = slow_wait
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("wait", seconds=0.2), done()]))
    action = next(s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION)
    assert action.status is StepStatus.OK
