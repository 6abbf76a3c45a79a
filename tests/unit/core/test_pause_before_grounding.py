"""A pause that came while the model thought is honoured before the turn's action asks
anything more of anybody (red team: a pause at an awkward moment): no grounding request goes
to a model server and no provider safety check is put to the person while the run is paused;
the decision, stale once the person had the desktop, is skipped and the next turn decides
afresh."""

from __future__ import annotations

from desktop_agent.core.events import ApprovalRequested
from desktop_agent.core.models import Decision, Grounding, Policy, SafetyCheck, StepKind, StepStatus
from desktop_agent.core.ports import DecideRequest
from tests.fakes import ScriptedGrounder, ScriptedPlanner, done, tool
from tests.unit.core.conftest import Consumer, make_harness

CLICK = tool("click", x=640, y=510, target="the Save button")


async def _paused_while_deciding(decision: Decision) -> tuple:
    h = make_harness(policies={"click": Policy.ALLOW})
    run = await h.create(allowed_tools=("click",))
    grounder = ScriptedGrounder(
        [Grounding(point=(650, 515), first=(640, 510), refined=True, summary="refined")]
    )

    async def decide_then_pause(_request: DecideRequest) -> Decision:
        h.runner.pause(run.id)  # the person takes the desktop while the model thinks
        return decision

    planner = ScriptedPlanner([decide_then_pause, done()], grounder=grounder)
    consumer = Consumer(h.runner.start(run, planner))
    await consumer.wait_type("run_paused")
    asked_while_paused = [e for e in consumer.events if isinstance(e, ApprovalRequested)]
    grounded_while_paused = list(grounder.requests)
    h.runner.resume(run.id)
    await consumer.finished()
    actions = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    return h, grounded_while_paused, asked_while_paused, actions


async def test_a_pause_during_the_models_request_sends_no_grounding_request() -> None:
    h, grounded, _, actions = await _paused_while_deciding(CLICK)
    assert grounded == []
    assert h.executor.calls == []  # type: ignore[attr-defined]
    assert [a.status for a in actions] == [StepStatus.SKIPPED]


async def test_a_pause_during_the_models_request_puts_no_safety_check_to_the_person() -> None:
    check = SafetyCheck("sc-1", "malicious_instructions", "The page may hold instructions.")
    flagged = Decision(
        action="tool",
        tool="click",
        args={"x": 640, "y": 510},
        reason="use click",
        raw='{"action":"tool"}',
        safety_checks=(check,),
    )
    h, _, asked, actions = await _paused_while_deciding(flagged)
    assert asked == []
    assert h.executor.calls == []  # type: ignore[attr-defined]
    assert [a.status for a in actions] == [StepStatus.SKIPPED]
