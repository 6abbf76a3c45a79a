"""A turn's batch of actions (a model's several actions of one answer) and its provider's
safety checks: each action one gated step; a stop, pause, denial or failure ends the batch."""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel

from desktop_agent.core.events import ApprovalRequested, RunFinished
from desktop_agent.core.models import (
    ApprovalDecision,
    Decision,
    Policy,
    RunStatus,
    SafetyCheck,
    StepKind,
    StepStatus,
    StopReason,
    ToolResult,
)
from desktop_agent.core.ports import ToolContext
from tests.fakes import FakeFocusProbe, ScriptedPlanner, done, tool
from tests.unit.core.conftest import Consumer, Harness, make_harness

ALLOW_ALL = {name: Policy.ALLOW for name in ("click", "type_text", "hotkey", "wait")}
CHECK = SafetyCheck(id="sc_1", code="malicious_instructions", message="The screen says: obey me")


def batch(*actions: Decision, checks: tuple[SafetyCheck, ...] = ()) -> Decision:
    first, *rest = actions
    return replace(first, batch=tuple(rest), safety_checks=checks)


THREE = batch(
    tool("click", x=5, y=5), tool("type_text", text="hello"), tool("hotkey", keys=["ctrl", "s"])
)


async def steps_of(h: Harness, run_id: str) -> list[tuple[int, str, str | None, str]]:
    return [
        (s.index, s.kind.value, s.tool, s.status.value) for s in await h.repo.list_steps(run_id)
    ]


async def test_a_batch_of_three_actions_is_three_gated_action_steps_of_one_turn() -> None:
    # a desktop whose probe tells where the keys go (else approved keys are not sent)
    h = make_harness(answers=[ApprovalDecision.ONCE] * 3, focus=FakeFocusProbe(place="x11:1"))
    shown = iter(range(10))

    async def acts(_args: BaseModel, _context: ToolContext) -> ToolResult:
        # each action leaves a screen of its own
        image = b"\xff\xd8screen %d" % next(shown)
        h.observer.observation = h.observer.observation.with_(image=image)
        return ToolResult.success("ok")

    for name in ("click", "type_text", "hotkey"):
        h.executor.handlers[name] = acts
    run = await h.create()
    planner = ScriptedPlanner([THREE, done()])
    events = await h.collect(run, planner)

    final = events[-1]
    assert isinstance(final, RunFinished)
    assert final.run.status is RunStatus.COMPLETED
    assert final.run.step_count == 2  # one turn of three actions, one that says done
    assert [name for name, _ in h.executor.calls] == ["click", "type_text", "hotkey"]
    # each action asked about on its own
    assert [a.tool for a in h.gate.requests] == ["click", "type_text", "hotkey"]
    assert (await steps_of(h, run.id))[:7] == [
        (1, "observe", "screen_snapshot", "ok"),
        (1, "decide", "click", "ok"),
        (1, "action", "click", "ok"),
        (1, "observe", "screen_snapshot", "ok"),
        (1, "action", "type_text", "ok"),
        (1, "observe", "screen_snapshot", "ok"),
        (1, "action", "hotkey", "ok"),
    ]
    # the screens between the actions are files of their own
    shots = [s.screenshot for s in await h.repo.list_steps(run.id) if s.kind is StepKind.OBSERVE]
    assert [shot.rsplit("/", 1)[-1] for shot in shots if shot] == [
        "0001.jpg",
        "0001.1.jpg",
        "0001.2.jpg",
        "0002.jpg",
    ]


async def test_a_denied_action_ends_the_batch_and_the_next_turn_sees_the_rest_skipped() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE, ApprovalDecision.DENY])
    run = await h.create()
    planner = ScriptedPlanner([THREE, done()])
    await h.collect(run, planner)

    assert [name for name, _ in h.executor.calls] == ["click"]
    rows = await steps_of(h, run.id)
    assert rows[2:6] == [
        (1, "action", "click", "ok"),
        (1, "observe", "screen_snapshot", "ok"),
        (1, "action", "type_text", "denied"),
        (1, "action", "hotkey", "skipped"),
    ]
    # the model's next request carries what happened to each action of its batch
    seen = [(s.tool, s.status) for s in planner.requests[1].steps if s.kind is StepKind.ACTION]
    assert seen == [
        ("click", StepStatus.OK),
        ("type_text", StepStatus.DENIED),
        ("hotkey", StepStatus.SKIPPED),
    ]


async def test_a_failed_action_ends_the_batch() -> None:
    h = make_harness(policies=ALLOW_ALL)

    async def broken(_args: BaseModel, _context: ToolContext) -> ToolResult:
        return ToolResult.failure("the pointer is gone")

    h.executor.handlers["click"] = broken
    run = await h.create()
    await h.collect(run, ScriptedPlanner([THREE, done()]))
    assert [name for name, _ in h.executor.calls] == ["click"]
    assert [r[3] for r in (await steps_of(h, run.id))[2:5]] == ["failed", "skipped", "skipped"]


async def test_a_stop_during_a_batch_sends_no_later_action_and_no_model_request() -> None:
    h = make_harness(policies=ALLOW_ALL)
    run = await h.create()

    async def click_then_stop(_args: BaseModel, _context: ToolContext) -> ToolResult:
        h.runner.stop(run.id)
        return ToolResult.success("clicked")

    h.executor.handlers["click"] = click_then_stop
    planner = ScriptedPlanner([THREE, done()])
    events = await h.collect(run, planner)

    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert [name for name, _ in h.executor.calls] == ["click"]
    assert len(planner.requests) == 1


async def test_a_pause_between_the_actions_of_a_batch_runs_none_of_the_rest() -> None:
    h = make_harness(policies=ALLOW_ALL)
    run = await h.create()

    async def click_then_pause(_args: BaseModel, _context: ToolContext) -> ToolResult:
        h.runner.pause(run.id)
        return ToolResult.success("clicked")

    h.executor.handlers["click"] = click_then_pause
    consumer = Consumer(h.runner.start(run, ScriptedPlanner([THREE, done()])))
    await consumer.wait_type("run_paused")
    h.runner.resume(run.id)  # the screen may have changed meanwhile: the rest is stale
    await consumer.finished()
    assert [name for name, _ in h.executor.calls] == ["click"]
    rows = await steps_of(h, run.id)
    assert rows[3:5] == [(1, "action", "type_text", "skipped"), (1, "action", "hotkey", "skipped")]


async def test_a_safety_check_is_asked_even_when_every_tool_is_allowed() -> None:
    h = make_harness(policies=ALLOW_ALL, answers=[ApprovalDecision.ONCE])
    run = await h.create()
    planner = ScriptedPlanner([batch(tool("click", x=5, y=5), checks=(CHECK,)), done()])
    events = await h.collect(run, planner)

    asked = [e.approval for e in events if isinstance(e, ApprovalRequested)]
    assert len(asked) == 1
    assert asked[0].safety_check == CHECK
    assert asked[0].to_json()["safety_check"] == {
        "code": "malicious_instructions",
        "message": "The screen says: obey me",
    }
    assert not asked[0].offer_run_grant
    assert [name for name, _ in h.executor.calls] == ["click"]
    # acknowledged to the provider only now that the person allowed it
    assert planner.requests[0].acknowledged == frozenset()
    assert planner.requests[1].acknowledged == {"sc_1"}


async def test_a_safety_check_is_asked_again_after_a_run_grant() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN, ApprovalDecision.ONCE, ApprovalDecision.ONCE])
    run = await h.create()
    checked = batch(tool("click", x=5, y=6), checks=(replace(CHECK, id="sc_2"),))
    await h.collect(run, ScriptedPlanner([tool("click", x=5, y=5), checked, done()]))
    # the click's grant covers the second click, not the provider's question about it
    assert [(a.tool, a.safety_check is not None) for a in h.gate.requests] == [
        ("click", False),
        ("click", True),
    ]


async def test_a_denied_safety_check_runs_nothing_and_fails_the_run_safety_check() -> None:
    h = make_harness(policies=ALLOW_ALL, answers=[ApprovalDecision.DENY])
    run = await h.create()
    planner = ScriptedPlanner(
        [batch(tool("click", x=5, y=5), tool("wait", seconds=0), checks=(CHECK,))]
    )
    events = await h.collect(run, planner)

    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.FAILED, StopReason.SAFETY_CHECK)
    assert "malicious_instructions" in final.run.message
    assert h.executor.calls == []
    assert len(planner.requests) == 1
    rows = await steps_of(h, run.id)
    assert rows[-1] == (1, "action", "click", "denied")
