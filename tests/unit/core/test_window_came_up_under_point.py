"""A dialog that came up while the model thought is judged before an allowed click is sent
(red team, a sibling of the injection guard's window check, issue 31 item 3): once a window
came up since the turn's look, the gate looks again — and a "Delete" now under the point, or
a terminal now holding the focus for a typed line, asks as it would have on that look; the
click or line is not sent and the next turn decides on the new screen."""

from __future__ import annotations

from dataclasses import replace

from desktop_agent.core.models import (
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
from tests.unit.core.test_injection_gate import WindowsObserver, _then

ALLOWED = {"click": Policy.ALLOW, "type_text": Policy.ALLOW}
EDITOR = Element(1, "window", "Mail — Thunderbird", (0, 0, 1000, 700), focused=True)
DRAFT = Element(2, "push button", "Save draft", (400, 300, 120, 40))
BEFORE = replace(make_observation([EDITOR, DRAFT]), window_ids=frozenset({"x11:1"}))
#: a confirmation came up over the mail window, its Delete where Save draft was
DIALOG = Element(3, "window", "Discard message? — Thunderbird", (300, 250, 400, 200), focused=True)
DELETE = Element(4, "push button", "Delete", (400, 300, 120, 40))
AFTER = replace(
    make_observation([replace(EDITOR, focused=False), DIALOG, DELETE]),
    window_ids=frozenset({"x11:1", "x11:3"}),
)
#: a terminal came up and took the focus
TERM = Element(5, "window", "~ — xterm", (0, 0, 800, 600), focused=True)
TERMINAL_UP = replace(
    make_observation([replace(EDITOR, focused=False), TERM]),
    window_ids=frozenset({"x11:1", "x11:5"}),
)


async def _run(call: Decision, then: Observation) -> tuple[Harness, list[StepView]]:
    h = make_harness(policies=ALLOWED, observer=WindowsObserver())
    h.observer.observation = BEFORE
    run = await h.create()
    await h.collect(run, ScriptedPlanner([_then(h, then, call)], then=done()))
    actions = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    return h, actions


async def test_an_allowed_click_is_not_sent_onto_a_delete_that_came_up_under_its_point() -> None:
    h, actions = await _run(tool("click", x=460, y=320), AFTER)
    assert h.executor.calls == []
    assert actions[0].status is StepStatus.SKIPPED
    assert "a window came up before the action was sent" in (actions[0].error or "")
    assert '"Delete" is sensitive' in (actions[0].error or "")


async def test_an_allowed_line_is_not_typed_into_a_terminal_that_came_up_with_the_focus() -> None:
    h, actions = await _run(tool("type_text", text="make clean", enter=True), TERMINAL_UP)
    assert h.executor.calls == []
    assert actions[0].status is StepStatus.SKIPPED
    assert "terminal" in (actions[0].error or "")


async def test_a_window_that_came_up_elsewhere_lets_the_allowed_click_go() -> None:
    aside = Element(6, "window", "Calendar", (700, 500, 200, 100))
    elsewhere = replace(
        make_observation([EDITOR, DRAFT, aside]), window_ids=frozenset({"x11:1", "x11:6"})
    )
    h, actions = await _run(tool("click", x=460, y=320), elsewhere)
    assert [name for name, _ in h.executor.calls] == ["click"]
    assert actions[0].status is StepStatus.OK
