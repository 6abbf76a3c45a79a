"""Replay: a terminal run's events rebuilt from the store, in the shapes of the live run."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from desktop_agent.core.errors import PlannerError, RefusedToStart, RunNotFound
from desktop_agent.core.events import (
    RunFinished,
    RunStarted,
    StepFinished,
    TaskLoopEvent,
    event_to_json,
)
from desktop_agent.core.models import ApprovalDecision, RunStatus, StopReason, ToolResult
from desktop_agent.core.ports import ToolContext
from desktop_agent.core.replay import replay_run
from tests.fakes import ScriptedPlanner, done, tool
from tests.unit.core.conftest import Blocker, Consumer, Harness, make_harness


async def replayed(harness: Harness, run_id: str) -> list[TaskLoopEvent]:
    return [event async for event in replay_run(harness.repo, run_id)]


def assert_replay_matches_live(live: list[TaskLoopEvent], replay: list[TaskLoopEvent]) -> None:
    live_steps = [event.step for event in live if isinstance(event, StepFinished)]
    assert [event.type for event in replay] == (
        ["run_started"] + ["step_finished"] * len(live_steps) + ["run_finished"]
    )
    assert [event.step for event in replay if isinstance(event, StepFinished)] == live_steps
    assert replay[0] == live[0]  # run_started shows the run as it started
    assert isinstance(replay[-1], RunFinished) and replay[-1] == live[-1]
    # the same JSON as live, for the CLI's --json and the API's SSE alike
    live_json = [event_to_json(e) for e in live if isinstance(e, RunStarted | StepFinished)]
    replay_json = [event_to_json(e) for e in replay if isinstance(e, RunStarted | StepFinished)]
    assert replay_json == live_json
    assert event_to_json(replay[-1]) == event_to_json(live[-1])


async def test_replay_of_a_completed_run_yields_the_live_step_views_and_final_run() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE, ApprovalDecision.DENY])

    async def flaky(_args: BaseModel, _context: ToolContext) -> ToolResult:
        return ToolResult.failure("the window was gone")

    h.executor.handlers["hotkey"] = flaky
    run = await h.create(max_failures=5)
    planner = ScriptedPlanner(
        [
            tool("click", x=10, y=20),
            tool("click", x=30, y=40),
            PlannerError("not JSON", raw="hmm"),
            tool("hotkey", keys=["control", "s"]),
            tool("wait", seconds=0.5),
            done("saved"),
        ]
    )
    live = await h.collect(run, planner)
    assert isinstance(live[-1], RunFinished)
    assert live[-1].run.status is RunStatus.COMPLETED
    assert_replay_matches_live(live, await replayed(h, run.id))


async def test_replay_of_a_run_stopped_mid_tool_yields_the_same_views_as_live(
    harness: Harness,
) -> None:
    blocker = Blocker()

    async def hangs(_args: BaseModel, _context: ToolContext) -> ToolResult:
        await blocker.block()
        return ToolResult.success("never")

    harness.executor.handlers["wait"] = hangs
    run = await harness.create()
    consumer = Consumer(harness.runner.start(run, ScriptedPlanner([tool("wait", seconds=9)])))
    await blocker.entered.wait()
    harness.runner.stop(run.id)
    live = await consumer.finished()
    assert isinstance(live[-1], RunFinished)
    assert live[-1].run.stop_reason is StopReason.USER_STOP
    assert_replay_matches_live(live, await replayed(harness, run.id))


async def test_replay_of_a_failed_run_yields_the_same_views_as_live(harness: Harness) -> None:
    harness.observer.fail_next(3)
    run = await harness.create()
    live = await harness.collect(run, ScriptedPlanner([done()]))
    assert isinstance(live[-1], RunFinished)
    assert live[-1].run.stop_reason is StopReason.MAX_FAILURES
    assert_replay_matches_live(live, await replayed(harness, run.id))


async def test_replay_of_an_active_run_is_refused(harness: Harness) -> None:
    blocker = Blocker()

    async def slow(_request: object) -> object:
        await blocker.block()
        return tool("wait", seconds=0)  # a tool: the pause takes hold before it runs

    run = await harness.create()
    consumer = Consumer(harness.runner.start(run, ScriptedPlanner([slow])))  # type: ignore[list-item]
    await blocker.entered.wait()
    with pytest.raises(RefusedToStart, match=f"run {run.id} has not ended \\(running\\)"):
        await replayed(harness, run.id)
    harness.runner.pause(run.id)
    blocker.release.set()
    await consumer.wait_type("run_paused")
    with pytest.raises(RefusedToStart, match="has not ended \\(paused\\)"):
        await replayed(harness, run.id)
    harness.runner.stop(run.id)
    await consumer.finished()
    assert [event.type for event in await replayed(harness, run.id)][-1] == "run_finished"


async def test_replay_of_a_queued_run_is_refused(harness: Harness) -> None:
    run = await harness.create()
    with pytest.raises(RefusedToStart, match="has not ended \\(queued\\)"):
        await replayed(harness, run.id)


async def test_replay_of_an_unknown_run_says_so(harness: Harness) -> None:
    with pytest.raises(RunNotFound, match="no run 'missing'"):
        await replayed(harness, "missing")
