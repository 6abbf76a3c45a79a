"""A keyboard call the person approved for one reason is not sent when the focus moved, while
they were asked, to where it asks for another one (red team: the gate's re-check after the
answer). The question said why it asked — the screen's text that gives orders, a focused
"Send" button — and nothing of a terminal: a line it then typed into a terminal the person
clicked into meanwhile ran unasked. As for a click (`_changed_under_point`), a reason the
question did not give stops the call; the one it gave does not."""

from __future__ import annotations

from desktop_agent.core.models import (
    ApprovalDecision,
    Decision,
    Element,
    Observation,
    Policy,
    StepKind,
    StepStatus,
    StepView,
)
from tests.fakes import ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import Harness, make_harness
from tests.unit.core.test_gate_per_call import EDITOR, FocusAfterTheAnswer
from tests.unit.core.test_injection_gate import ORDER

#: an editor whose page shows a comment that gives orders to an AI (the injection guard asks)
ATTACKED_EDITOR = make_observation(
    [
        Element(1, "window", "notes — L3afpad", (0, 0, 800, 600), focused=True),
        Element(7, "label", ORDER, (20, 300, 600, 20)),
    ]
)


async def _typed_after(
    before: str, after: str, observation: Observation, call: Decision
) -> tuple[Harness, StepView]:
    probe = FocusAfterTheAnswer(before, after)
    h = make_harness(
        answers=[ApprovalDecision.ONCE],
        focus=probe,
        policies={"type_text": Policy.ALLOW, "hotkey": Policy.ALLOW},
    )
    probe.asked = h.gate.requests
    h.observer.observation = observation
    run = await h.create()
    await h.collect(run, ScriptedPlanner([call, done()]))
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    return h, action


async def test_a_line_approved_for_the_screens_orders_is_not_run_in_a_terminal_focused_later() -> (
    None
):
    h, action = await _typed_after(
        "text", "terminal", ATTACKED_EDITOR, tool("type_text", text="ls -la ~", enter=True)
    )
    [asked] = h.gate.requests
    assert ORDER in asked.caution and "terminal" not in asked.caution
    assert h.executor.calls == []
    assert action.status is StepStatus.SKIPPED
    assert "focus moved while you were asked" in (action.error or "")
    assert "into a terminal runs it" in (action.error or "")


async def test_enter_approved_for_a_focused_send_button_is_not_pressed_in_a_terminal() -> None:
    send = Element(2, "push button", "Send", (100, 100, 80, 30), focused=True)
    screen = make_observation([*EDITOR.elements, send])
    h, action = await _typed_after(
        "push button", "terminal", screen, tool("hotkey", keys=["enter"])
    )
    [asked] = h.gate.requests
    assert '"Send" is sensitive' in asked.caution
    assert h.executor.calls == []
    assert action.status is StepStatus.SKIPPED
    assert "runs the typed line in a terminal" in (action.error or "")


async def test_the_reason_the_question_gave_does_not_stop_the_approved_call() -> None:
    # asked for the orders on the screen; the focus stayed in the editor: typed
    h, action = await _typed_after(
        "text", "text", ATTACKED_EDITOR, tool("type_text", text="ls -la ~", enter=True)
    )
    assert len(h.gate.requests) == 1
    assert [name for name, _ in h.executor.calls] == ["type_text"]
    assert action.status is StepStatus.OK
