"""The loop's writes: held between two waits on the outside world and handed to the store as
one; stored before anything that tells of them, and before the model or a tool is asked."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from desktop_agent.core.events import RunFinished, StepFinished, StepStarted, TaskLoopEvent
from desktop_agent.core.models import (
    Decision,
    RunStatus,
    StepKind,
    StepStatus,
    StopReason,
    ToolResult,
)
from desktop_agent.core.ports import DecideRequest, ToolContext
from tests.fakes import MemoryRepository, ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import Harness, make_harness


class CountingRepository:
    """The in-memory repository, counting every awaited call made on it (any method)."""

    def __init__(self, inner: MemoryRepository) -> None:
        self.inner = inner
        self.awaited = 0

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not inspect.iscoroutinefunction(attribute):
            return attribute

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.awaited += 1
            return await attribute(*args, **kwargs)

        return counted


def counting_harness() -> tuple[Harness, CountingRepository]:
    harness = make_harness()
    counting = CountingRepository(harness.repo)
    harness.runner.services.repo = counting
    return harness, counting


async def test_a_turn_hands_its_writes_to_the_store_once_before_the_model_and_once_before_the_tool() -> (  # noqa: E501
    None
):
    harness, counting = counting_harness()
    # (what the outside world was asked, the store calls awaited before it)
    asked: list[tuple[str, int]] = []

    async def decide(_request: DecideRequest) -> Decision:
        asked.append(("model", counting.awaited))
        return tool("wait", seconds=0)

    async def wait(_args: BaseModel, _context: ToolContext) -> ToolResult:
        asked.append(("tool", counting.awaited))
        return ToolResult.success("waited")

    harness.executor.handlers["wait"] = wait
    run = await harness.create(max_steps=4)
    events = await harness.collect(run, ScriptedPlanner([decide] * 4))
    assert isinstance(events[-1], RunFinished)
    assert events[-1].run.stop_reason is StopReason.MAX_STEPS
    assert [what for what, _ in asked] == ["model", "tool"] * 4
    between = [after - before for (_, before), (_, after) in zip(asked, asked[1:], strict=False)]
    # model → tool: the decision's end and the action's start; tool → model: the action's
    # end, the run's step count, the next observation's rows and files, the decision's start
    assert between == [1] * 7


async def test_the_model_and_the_tool_are_asked_only_once_everything_before_is_stored(
    harness: Harness,
) -> None:
    repo = harness.repo
    checked: list[str] = []

    def assert_stored(kind: StepKind, told: Callable[[], list[Any]]) -> None:
        stored = {step.seq: step for step in repo.steps[run.id].values()}
        for step in told():
            assert stored[step.seq] == step
        current = max(stored.values(), key=lambda step: step.seq)
        assert (current.kind, current.status) == (kind, StepStatus.RUNNING)
        checked.append(kind.value)

    async def decide(request: DecideRequest) -> Decision:
        assert_stored(StepKind.DECIDE, lambda: list(request.steps))
        return tool("wait", seconds=0)

    async def wait(_args: BaseModel, _context: ToolContext) -> ToolResult:
        finished = [e.step for e in events_so_far if isinstance(e, StepFinished)]
        assert_stored(StepKind.ACTION, lambda: finished)
        assert repo.runs[run.id].status is RunStatus.RUNNING
        return ToolResult.success("waited")

    harness.executor.handlers["wait"] = wait
    run = await harness.create()
    events_so_far: list[TaskLoopEvent] = []
    async for event in harness.runner.start(run, ScriptedPlanner([decide, decide, done()])):
        events_so_far.append(event)
    assert checked == ["decide", "action", "decide", "action"]
    final = events_so_far[-1]
    assert isinstance(final, RunFinished)
    assert repo.runs[run.id] == final.run


async def test_every_step_told_is_stored_as_told_and_in_the_order_told(harness: Harness) -> None:
    run = await harness.create()
    planner = ScriptedPlanner([tool("wait", seconds=0), tool("click", x=1, y=1), done()])
    told: list[TaskLoopEvent] = []
    async for event in harness.runner.start(run, planner):
        if isinstance(event, StepStarted | StepFinished):
            # a row told finished never changes again; one told started exists
            stored = harness.repo.steps[run.id][event.step.seq]
            if isinstance(event, StepFinished):
                assert stored == event.step
        told.append(event)
    finished = [e.step for e in told if isinstance(e, StepFinished)]
    assert finished == await harness.repo.list_steps(run.id)
    assert isinstance(told[-1], RunFinished)
    assert harness.stored(run.id) == told[-1].run


async def test_a_still_screen_is_written_once_and_every_turn_names_that_file(
    harness: Harness,
) -> None:
    run = await harness.create(max_steps=3)
    await harness.collect(run, ScriptedPlanner([], then=tool("wait", seconds=0)))
    observed = [s for s in await harness.repo.list_steps(run.id) if s.kind is StepKind.OBSERVE]
    assert [s.screenshot for s in observed] == [f"runs/{run.id}/0001.jpg"] * 3
    assert [s.thumbnail for s in observed] == [f"runs/{run.id}/0001.thumb.jpg"] * 3
    assert sorted(harness.repo.artifacts) == [
        f"runs/{run.id}/0001.jpg",
        f"runs/{run.id}/0001.thumb.jpg",
    ]


async def test_a_changed_screen_is_written_at_each_turn(harness: Harness) -> None:
    async def the_screen_changes(request: DecideRequest) -> Decision:
        image = b"\xff\xd8 screen %d" % request.turn
        harness.observer.observation = replace(make_observation(), image=image)
        return tool("wait", seconds=0)

    run = await harness.create(max_steps=3)
    await harness.collect(run, ScriptedPlanner([the_screen_changes] * 3))
    observed = [s for s in await harness.repo.list_steps(run.id) if s.kind is StepKind.OBSERVE]
    assert [s.screenshot for s in observed] == [f"runs/{run.id}/{n:04d}.jpg" for n in (1, 2, 3)]
    assert harness.repo.artifacts[f"runs/{run.id}/0003.jpg"] == b"\xff\xd8 screen 2"
