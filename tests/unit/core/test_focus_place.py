"""Keys approved for one focused place go there or nowhere (red team, the focus moved while
the person was asked): the same role is not the same place — another terminal, another
host's shell — so the gate compares the focus probe's place (the window and control that
have the focus) before the question and once answered, and where the probe cannot tell it,
the focused window and control of a new look; where nothing tells, the keys are not sent."""

from __future__ import annotations

from dataclasses import replace

from desktop_agent.core.gate import FOCUS_ELSEWHERE, FOCUS_MOVED, FOCUS_UNTOLD
from desktop_agent.core.models import ApprovalDecision, Element, StepKind, StepStatus
from tests.fakes import (
    FakeFocusProbe,
    ScriptedGate,
    ScriptedPlanner,
    done,
    make_observation,
    tool,
)
from tests.unit.core.conftest import Harness, make_harness
from tests.unit.core.test_grounding_landing import ScreenChangesWhileAsked, asked_while

LINE = tool("type_text", text="systemctl stop nginx", enter=True)
TERMINAL_CAUTION = "typing a line that ends with Enter into a terminal runs it"
LOCAL = Element(1, "window", "alice@laptop: ~ — XTerm", (0, 0, 800, 600), focused=True)
PROD = Element(2, "window", "root@prod: ~ — XTerm", (820, 0, 800, 600))
#: the person's own terminal has the focus, the production shell beside it
TWO_TERMINALS = make_observation([LOCAL, PROD])
#: the same two windows, the production shell focused (a click, a window raising itself)
PROD_FOCUSED = make_observation([replace(LOCAL, focused=False), replace(PROD, focused=True)])


class PlaceAfterTheAnswer(FakeFocusProbe):
    """A terminal at `before` until `gate` asked the person, at `after` once they answered."""

    def __init__(self, gate: ScriptedGate, before: str | None, after: str | None) -> None:
        super().__init__("terminal", place=before)
        self.gate, self.after = gate, after

    def place_now(self) -> str | None:
        return self.after if self.gate.requests else self.place


async def run_line(h: Harness) -> tuple[StepStatus, str]:
    run = await h.create()
    await h.collect(run, ScriptedPlanner([LINE], then=done()))
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    return action.status, action.error or ""


def moved(why: str) -> tuple[StepStatus, str]:
    return StepStatus.SKIPPED, FOCUS_MOVED.format(why=why)


async def test_a_line_approved_for_one_terminal_is_not_typed_into_another_focused_meanwhile() -> (
    None
):
    # red team: both are terminals, so the role the probe gave once answered was the one asked
    # about, and the line ran in the other shell
    h = make_harness(answers=[ApprovalDecision.ONCE])
    h.observer.observation = TWO_TERMINALS
    h.runner.services.focus = PlaceAfterTheAnswer(h.gate, "x11:1 atspi::1.5/term/0", "x11:2")

    assert await run_line(h) == moved(FOCUS_ELSEWHERE)
    [asked] = h.gate.requests
    assert asked.caution == TERMINAL_CAUTION
    assert h.executor.calls == []


async def test_another_tab_of_the_same_window_is_another_place() -> None:
    # the window is the same; the focused terminal is another tab's (its own AT-SPI object)
    h = make_harness(answers=[ApprovalDecision.ONCE])
    h.observer.observation = TWO_TERMINALS
    h.runner.services.focus = PlaceAfterTheAnswer(
        h.gate, "x11:1 atspi::1.5/term/0", "x11:1 atspi::1.5/term/1"
    )
    assert await run_line(h) == moved(FOCUS_ELSEWHERE)
    assert h.executor.calls == []


async def test_a_line_whose_focus_cannot_be_told_once_answered_is_not_typed() -> None:
    # told at the question, not once answered (the probe failed or was late): nobody knows
    # where the line would go
    h = make_harness(answers=[ApprovalDecision.ONCE])
    h.observer.observation = TWO_TERMINALS
    h.runner.services.focus = PlaceAfterTheAnswer(h.gate, "x11:1", None)
    assert await run_line(h) == moved(FOCUS_UNTOLD)
    assert h.executor.calls == []


async def test_a_line_whose_focus_stayed_on_its_terminal_is_typed_without_a_new_look() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE])
    h.observer.observation = TWO_TERMINALS
    h.runner.services.focus = PlaceAfterTheAnswer(h.gate, "x11:1", "x11:1")
    assert await run_line(h) == (StepStatus.OK, "")
    assert [name for name, _ in h.executor.calls] == ["type_text"]
    # the turn's look and the effect check's: the place told it, no look was taken for it
    assert h.observer.calls == 2


async def test_without_a_place_a_new_look_finds_the_focus_on_another_terminal() -> None:
    # no probe tells the place (a desktop without one): the screen is looked at once
    # answered, and its focused window is not the one the line was approved for
    h, action = await asked_while(TWO_TERMINALS, PROD_FOCUSED, LINE)
    assert (action.status, action.error) == moved(FOCUS_ELSEWHERE)
    assert h.executor.calls == []


async def test_without_a_place_a_new_look_with_the_same_focus_lets_the_line_go() -> None:
    h, action = await asked_while(TWO_TERMINALS, TWO_TERMINALS, LINE)
    assert (action.status, action.error) == (StepStatus.OK, None)
    assert [name for name, _ in h.executor.calls] == ["type_text"]


async def test_a_place_told_only_once_answered_is_checked_on_a_new_look() -> None:
    # nothing to compare the probe's answer with: the look tells the focus moved
    h = make_harness()
    gate = ScreenChangesWhileAsked(h, PROD_FOCUSED, ApprovalDecision.ONCE)
    h.runner.services.gate = gate
    h.observer.observation = TWO_TERMINALS
    h.runner.services.focus = PlaceAfterTheAnswer(gate, None, "x11:2")
    assert await run_line(h) == moved(FOCUS_ELSEWHERE)
    assert h.executor.calls == []


async def test_keys_where_nothing_tells_the_focus_are_not_sent_once_approved() -> None:
    # no probe, and neither the turn's screen nor the new look lists a focused window or
    # control (a Wayland desktop whose focused program is not on the accessibility bus)
    blank = make_observation([Element(3, "button", "OK", (0, 0, 80, 24))])
    h, action = await asked_while(blank, blank, tool("type_text", text="hello"))
    assert (action.status, action.error) == moved(FOCUS_UNTOLD)
    assert h.executor.calls == []


async def test_keys_approved_when_the_screen_cannot_be_read_again_are_not_sent() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE])
    h.observer.observation = TWO_TERMINALS
    answer = h.gate.request

    async def then_the_capture_fails(approval: object) -> ApprovalDecision:
        h.observer.fail_next(1)
        return await answer(approval)  # type: ignore[arg-type]

    h.gate.request = then_the_capture_fails  # type: ignore[method-assign]
    assert await run_line(h) == moved(FOCUS_UNTOLD)
    assert h.executor.calls == []
