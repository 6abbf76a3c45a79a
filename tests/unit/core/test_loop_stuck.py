"""The loop records each action's effect, tells the model, warns, and ends a stuck run."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from desktop_agent.core.events import RunFinished, StepFinished
from desktop_agent.core.models import (
    ApprovalDecision,
    Effect,
    Observation,
    RunStatus,
    StepKind,
    StepStatus,
    StopReason,
    ToolResult,
)
from desktop_agent.core.ports import ToolContext
from desktop_agent.planner.prompt import history_text
from tests.fakes import (
    FakeFocusProbe,
    ScriptedPlanner,
    done,
    grey_signature,
    make_observation,
    tool,
)
from tests.unit.core.conftest import Harness, make_harness


def still_screen() -> Harness:
    # one look after each action: these tests are about what "no change" leads to
    h = make_harness(answers=[ApprovalDecision.RUN], effect_wait_s=0.0)
    h.observer.observation = make_observation(signature=grey_signature(90))
    return h


async def test_the_same_click_changing_nothing_three_times_ends_the_run_stuck() -> None:
    h = still_screen()
    run = await h.create(max_steps=10)
    planner = ScriptedPlanner([tool("click", x=5, y=5)] * 5, then=done())
    events = await h.collect(run, planner)

    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.FAILED, StopReason.STUCK)
    assert "changed nothing on the screen 3 times" in final.run.message
    assert final.run.step_count == 3
    assert len(h.executor.calls) == 3

    actions = [
        e.step for e in events if isinstance(e, StepFinished) and e.step.kind is StepKind.ACTION
    ]
    assert [a.effect for a in actions] == [Effect.NO_CHANGE] * 3
    assert actions[0].summary == "click ok [no visible change]"
    assert "2 times for this same action: it does not work, try something else" in (
        actions[1].summary
    )
    # the model was told: the history it saw on turns 2 and 3 carries the notes
    assert "[no visible change]" in history_text(planner.requests[1].steps, 2)
    assert "try something else" in history_text(planner.requests[2].steps, 3)
    # each turn after the first starts from the observation the effect check took (and the
    # first click, the one asked, had its point looked at again once answered)
    assert h.observer.calls == 4 + 1


async def test_a_visible_change_resets_the_count() -> None:
    h = still_screen()
    levels = iter([90, 90, 150, 150, 150, 150])

    async def click(_args: BaseModel, _context: ToolContext) -> ToolResult:
        level = next(levels)
        h.observer.observation = make_observation(signature=grey_signature(level))
        return ToolResult.success("clicked")

    h.executor.handlers["click"] = click
    run = await h.create(max_steps=10)
    planner = ScriptedPlanner([tool("click", x=5, y=5)] * 4, then=done())
    events = await h.collect(run, planner)
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert final.run.stop_reason is StopReason.DONE
    effects = [s.effect for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    # no change, no change (warned), a change (counts cleared), no change ×1
    assert effects == [Effect.NO_CHANGE, Effect.NO_CHANGE, Effect.CHANGED, Effect.NO_CHANGE]


async def test_without_signatures_the_effect_is_unknown_and_never_stuck() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN])  # the fake's observations carry none
    run = await h.create(max_steps=10)
    events = await h.collect(run, ScriptedPlanner([tool("click", x=5, y=5)] * 4, then=done()))
    final = events[-1]
    assert isinstance(final, RunFinished) and final.run.stop_reason is StopReason.DONE
    effects = {s.effect for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION}
    assert effects == {Effect.UNKNOWN}


async def test_a_program_that_shows_nothing_yet_is_waited_for_not_started_again() -> None:
    h = still_screen()
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("launch_app", command="l3afpad"), done()]))
    action = next(s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION)
    assert action.effect is Effect.NO_CHANGE
    assert action.summary.endswith(
        "[no visible change yet: a program takes a moment to start; wait for its window]"
    )


async def test_a_slow_app_that_draws_the_action_late_is_seen_changed() -> None:
    # the default effect_wait_s; a desktop whose probe tells where the keys go (else the
    # gate looks again once answered, and approved keys are not sent where none is told)
    h = make_harness(answers=[ApprovalDecision.RUN], focus=FakeFocusProbe(place="x11:1"))
    drawn_at_look = iter([False, False, True])  # the app draws at the 3rd look after the action
    acted = False

    async def hotkey(_args: BaseModel, _context: ToolContext) -> ToolResult:
        nonlocal acted
        acted = True
        return ToolResult.success("pressed ctrl+s")

    async def observe() -> Observation:
        drawn = acted and next(drawn_at_look, True)
        return make_observation(signature=grey_signature(150 if drawn else 90))

    h.executor.handlers["hotkey"] = hotkey
    h.observer.observe = observe  # type: ignore[method-assign]
    run = await h.create(max_steps=10)
    await h.collect(run, ScriptedPlanner([tool("hotkey", keys=["ctrl", "s"])], then=done()))

    action = next(s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION)
    assert (action.effect, action.summary) == (Effect.CHANGED, "pressed ctrl+s")


async def test_a_stop_while_the_screen_is_looked_at_again_ends_the_run_at_once() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN], effect_wait_s=600.0)
    h.observer.observation = make_observation(signature=grey_signature(90))
    run = await h.create(max_steps=10)
    looks_after_the_click: list[int] = []
    observe = h.observer.observe

    async def look() -> Observation:
        if h.executor.calls:
            looks_after_the_click.append(1)
            if len(looks_after_the_click) == 3:  # the screen still shows no change
                assert h.runner.stop(run.id)
        return await observe()

    h.observer.observe = look  # type: ignore[method-assign]
    planner = ScriptedPlanner([tool("click", x=5, y=5)], then=done())
    events = await asyncio.wait_for(h.collect(run, planner), timeout=30)

    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert len(looks_after_the_click) == 3 and len(planner.requests) == 1
    action = next(s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION)
    assert action.status is StepStatus.OK  # the click did run; the stop ended the run
