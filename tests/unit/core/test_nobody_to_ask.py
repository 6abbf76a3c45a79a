"""A question nobody at this desktop could be asked (an approval gate raises NobodyToAsk: `serve`
with no app on the data dir and no display for the dialog) is denied, and says so: its step does
not read "denied by the user", and its approval_resolved names nobody."""

from __future__ import annotations

from desktop_agent.core.errors import NobodyToAsk
from desktop_agent.core.events import ApprovalResolved
from desktop_agent.core.gate import why_denied
from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, StepStatus
from tests.fakes import ScriptedPlanner, done, tool
from tests.unit.core.conftest import make_harness
from tests.unit.core.test_loop_failures import action_steps


async def test_a_question_nobody_here_could_be_asked_is_denied_and_says_so() -> None:
    h = make_harness()
    asked: list[ApprovalRequest] = []

    async def nobody(approval: ApprovalRequest) -> ApprovalDecision:
        asked.append(approval)
        raise NobodyToAsk(f"nobody at this desktop could be asked about {approval.tool}")

    h.gate.request = nobody  # type: ignore[method-assign]
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([tool("click", x=1, y=1)], then=done()))

    assert [approval.tool for approval in asked] == ["click"]
    assert h.executor.calls == []
    steps = [event.step for event in action_steps(events)]
    assert [(step.status, step.error) for step in steps] == [
        (StepStatus.DENIED, "nobody at this desktop could be asked")
    ]
    resolved = [event for event in events if isinstance(event, ApprovalResolved)]
    assert [(event.decision, event.by) for event in resolved] == [(ApprovalDecision.DENY, "nobody")]


def test_a_denial_says_who_gave_it() -> None:
    assert why_denied("user") == "denied by the user"
    assert why_denied("timeout") == "approval timed out"
    assert why_denied("nobody") == "nobody at this desktop could be asked"
