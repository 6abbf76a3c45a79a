"""The agent cannot reach its own controls: input aimed at the app's own windows is refused
before any policy, grant or question (issue #15 item 5)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from desktop_agent.core.errors import ObservationError
from desktop_agent.core.models import (
    ApprovalDecision,
    Element,
    Observation,
    Policy,
    StepKind,
    StepStatus,
)
from desktop_agent.core.own_windows import OWN_WINDOW_ROLE, own_window_refusal
from tests.fakes import ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import make_harness

EDITOR = Element(1, "window", "notes.txt — L3afpad", (0, 0, 1100, 720), focused=True)
UNDER_PANEL = Element(2, "button", "Save", (1120, 20, 60, 30))
PANEL = Element(0, "window", "Desktop Agent — acting", (1100, 0, 180, 80))
SETTINGS = Element(0, "window", "Settings — Desktop Agent", (200, 100, 600, 400), focused=True)


def screen(*own: Element, editor_focused: bool = True) -> Observation:
    editor = EDITOR if editor_focused else Element(1, "window", EDITOR.name, EDITOR.box)
    return make_observation([editor, UNDER_PANEL]).with_(own_windows=own)


@pytest.mark.parametrize(
    ("call", "args"),
    [
        ("click", {"x": 1150, "y": 40}),
        ("click", {"element": 2}),  # its centre lies under the acting panel
        ("move_mouse", {"x": 1101, "y": 1}),
        ("scroll", {"amount": -3, "x": 1200, "y": 50}),
        ("drag", {"x": 10, "y": 10, "to_x": 1150, "to_y": 40}),
    ],
)
def test_a_point_on_an_own_window_is_refused(call: str, args: dict[str, Any]) -> None:
    assert "own window" in own_window_refusal(call, args, screen(PANEL))


def test_keys_while_an_own_window_has_the_focus_are_refused() -> None:
    focused = screen(SETTINGS, editor_focused=False)
    assert "keyboard focus" in own_window_refusal("type_text", {"text": "x"}, focused)
    assert "keyboard focus" in own_window_refusal("hotkey", {"keys": ["alt", "tab"]}, focused)
    # the panel does not take the focus: keys go to the editor
    assert own_window_refusal("hotkey", {"keys": ["ctrl", "s"]}, screen(PANEL)) == ""


@pytest.mark.parametrize("title", ["Desktop Agent", "desktop-agent", "settings — desktop agent"])
def test_focusing_an_own_window_by_title_is_refused(title: str) -> None:
    assert own_window_refusal("focus_window", {"title": title}, screen())


def test_other_input_is_not_refused() -> None:
    assert own_window_refusal("click", {"x": 500, "y": 300}, screen(PANEL)) == ""
    assert own_window_refusal("focus_window", {"title": "L3afpad"}, screen(PANEL)) == ""
    assert own_window_refusal("type_text", {"text": "x"}, screen(PANEL)) == ""


async def test_the_run_is_refused_its_own_controls_whatever_the_policy_or_the_answer() -> None:
    h = make_harness(
        answers=[ApprovalDecision.ONCE] * 5,
        policies={"click": Policy.ALLOW, "hotkey": Policy.ALLOW, "type_text": Policy.ALLOW},
    )
    h.observer.observation = screen(SETTINGS, PANEL, editor_focused=False)
    run = await h.create(max_failures=5)
    planner = ScriptedPlanner(
        [
            tool("click", x=300, y=200),  # in the settings dialog
            tool("hotkey", keys=["ctrl", "s"]),  # the settings dialog has the focus
            tool("click", x=50, y=50),  # the editor: runs
            done(),
        ]
    )
    await h.collect(run, planner)
    actions = [s for s in await h.repo.list_steps(run.id) if s.kind.value == "action"]
    assert [(s.tool, s.status) for s in actions] == [
        ("click", StepStatus.DENIED),
        ("hotkey", StepStatus.DENIED),
        ("click", StepStatus.OK),
    ]
    assert "Settings — Desktop Agent" in (actions[0].error or "")
    assert h.gate.requests == []
    assert [(name, args.x) for name, args in h.executor.calls] == [("click", 50)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("title", ["Agent", "settings", "esktop", "D\u0435sktop Agent"])
def test_focusing_a_title_that_a_backend_would_find_in_an_own_window_is_refused(
    title: str,
) -> None:
    # the backends find the first window whose title *contains* the one asked for
    assert "own window" in own_window_refusal("focus_window", {"title": title}, screen(SETTINGS))


async def test_keys_are_refused_when_the_probe_finds_an_own_window_active_at_action_time() -> None:
    # the turn's screenshot had the editor in front; by the time the call is judged the app's
    # own dialog has the focus (another run's question, the user's click): the keys would go
    # to its buttons (alt+o is Allow once)
    from tests.fakes import FakeFocusProbe

    h = make_harness(
        answers=[ApprovalDecision.ONCE],
        policies={"hotkey": Policy.ALLOW},
        focus=FakeFocusProbe(OWN_WINDOW_ROLE),
    )
    h.observer.observation = screen(PANEL)
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("hotkey", keys=["alt", "o"]), done()]))

    assert h.executor.calls == [] and h.gate.requests == []
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind.value == "action"]
    assert action.status is StepStatus.DENIED and "keyboard focus now" in (action.error or "")


async def test_after_an_answer_keys_wait_for_the_own_window_to_give_the_focus_back() -> None:
    # the app's dialog was answered; its window goes out of the way a moment later
    from tests.fakes import FakeFocusProbe

    class GoingAway(FakeFocusProbe):
        async def focused_role(self) -> str | None:
            self.calls += 1
            # the decision and the gate find the editor; the answer leaves the app in front
            return OWN_WINDOW_ROLE if 3 <= self.calls <= 5 else "text"

    h = make_harness(answers=[ApprovalDecision.ONCE], focus=GoingAway())
    h.observer.observation = screen(PANEL)
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("type_text", text="hello"), done()]))

    assert [name for name, _ in h.executor.calls] == ["type_text"]


async def test_after_an_answer_keys_are_refused_if_the_own_window_keeps_the_focus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from desktop_agent.core import gate
    from tests.fakes import FakeFocusProbe

    monkeypatch.setattr(gate, "OWN_FOCUS_WAIT_S", 0.05)

    class StaysInFront(FakeFocusProbe):
        async def focused_role(self) -> str | None:
            self.calls += 1
            return OWN_WINDOW_ROLE if self.calls >= 3 else "text"

    h = make_harness(answers=[ApprovalDecision.ONCE], focus=StaysInFront())
    h.observer.observation = screen(PANEL)
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("type_text", text="hello"), done()]))

    assert h.executor.calls == []
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind.value == "action"]
    assert action.status is StepStatus.DENIED


class DialogPoppingUp:
    """An observer whose screenshots show no window of the app, while the app's question
    dialog is up by the time a call is judged (OwnWindowsSource: what the desktop's observer
    reads from the window list at action time)."""

    def __init__(self, dialog: Element | None, pointer: tuple[int, int] | None = None) -> None:
        self.observation = screen()
        self.dialog = dialog
        self.pointer = pointer

    async def observe(self) -> Observation:
        return self.observation

    async def own_windows_now(self, observation: Observation) -> tuple[Element, ...] | None:
        return (self.dialog,) if self.dialog is not None else ()

    async def pointer_now(self, observation: Observation) -> tuple[int, int] | None:
        return self.pointer


DIALOG = Element(0, "window", "Desktop Agent — allow click?", (300, 200, 400, 300), focused=True)


async def test_a_click_is_refused_where_an_own_window_popped_up_after_the_screenshot() -> None:
    # another run's question popped up while the model was thinking: the click decided on
    # the older screenshot would land on its Allow button
    h = make_harness(policies={"click": Policy.ALLOW})
    h.runner.services = replace(h.runner.services, observer=DialogPoppingUp(DIALOG))
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=450, y=450), done()]))

    assert h.executor.calls == [] and h.gate.requests == []
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert action.status is StepStatus.DENIED and "own window" in (action.error or "")


async def test_a_click_beside_the_apps_windows_now_runs() -> None:
    h = make_harness(policies={"click": Policy.ALLOW})
    h.runner.services = replace(h.runner.services, observer=DialogPoppingUp(DIALOG))
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=100, y=650), done()]))

    assert [name for name, _ in h.executor.calls] == ["click"]


async def test_a_scroll_without_a_point_is_refused_while_the_pointer_rests_on_an_own_window() -> (
    None
):
    # the wheel turns where the pointer is: over the app's settings, a combo box's value
    h = make_harness(policies={"scroll": Policy.ALLOW})
    h.runner.services = replace(h.runner.services, observer=DialogPoppingUp(DIALOG, (450, 450)))
    run = await h.create(allowed_tools=("scroll",))
    await h.collect(run, ScriptedPlanner([tool("scroll", amount=-3), done()]))

    assert h.executor.calls == []
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert action.status is StepStatus.DENIED and "own window" in (action.error or "")


async def test_a_scroll_without_a_point_runs_while_the_pointer_rests_elsewhere() -> None:
    h = make_harness(policies={"scroll": Policy.ALLOW})
    h.runner.services = replace(h.runner.services, observer=DialogPoppingUp(DIALOG, (50, 50)))
    run = await h.create(allowed_tools=("scroll",))
    await h.collect(run, ScriptedPlanner([tool("scroll", amount=-3), done()]))

    assert [name for name, _ in h.executor.calls] == ["scroll"]


class OwnWindowsUnreadable(DialogPoppingUp):
    """An observer on a system that can tell its own windows (Windows: EnumWindows) and could
    not this time: it says so (ObservationError), not "none"."""

    async def own_windows_now(self, observation: Observation) -> tuple[Element, ...] | None:
        raise ObservationError("EnumWindows failed (Windows error 5)")


async def test_a_click_is_refused_when_the_apps_own_windows_cannot_be_read_now() -> None:
    # issue 37 item 4: the read that failed refused nothing, so a click could land on the
    # app's question or settings whenever the read was slow or failed
    h = make_harness(policies={"click": Policy.ALLOW})
    h.runner.services = replace(h.runner.services, observer=OwnWindowsUnreadable(None))
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=100, y=650), done()]))

    assert h.executor.calls == []
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert action.status is StepStatus.DENIED
    assert "own windows cannot be read now (EnumWindows failed" in (action.error or "")


class OwnWindowsUnseen(DialogPoppingUp):
    """A Wayland desktop's observer: it cannot see where any window is, the app's own
    included (`sees_own_windows` False, as desktop/wayland.py's observer says)."""

    sees_own_windows = False

    async def own_windows_now(self, observation: Observation) -> tuple[Element, ...] | None:
        return None


@pytest.mark.parametrize(
    ("answer", "ran"), [(ApprovalDecision.ONCE, True), (ApprovalDecision.DENY, False)]
)
async def test_where_the_own_windows_cannot_be_seen_input_is_asked_under_any_policy(
    answer: ApprovalDecision, ran: bool
) -> None:
    # issue 34 item 4: on Wayland the app's question could be under the point or hold the
    # focus and nothing can tell; an allowed click or hotkey passed unasked on old main
    h = make_harness(
        answers=[answer, answer],
        policies={"click": Policy.ALLOW, "hotkey": Policy.ALLOW, "wait": Policy.ALLOW},
    )
    h.runner.services = replace(h.runner.services, observer=OwnWindowsUnseen(None))
    run = await h.create(max_failures=5)
    planner = ScriptedPlanner(
        [
            tool("click", x=100, y=650),
            tool("hotkey", keys=["ctrl", "s"]),
            tool("wait", seconds=0.01),
            done(),
        ]
    )
    await h.collect(run, planner)

    assert [request.tool for request in h.gate.requests] == ["click", "hotkey"]
    assert all("app's own windows are (Wayland)" in r.caution for r in h.gate.requests)
    ran_tools = [name for name, _ in h.executor.calls]
    assert ran_tools == (["click", "hotkey", "wait"] if ran else ["wait"])


async def test_where_the_own_windows_are_seen_an_allowed_click_is_not_asked() -> None:
    h = make_harness(policies={"click": Policy.ALLOW})
    h.runner.services = replace(h.runner.services, observer=DialogPoppingUp(None))
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=100, y=650), done()]))
    assert h.gate.requests == []
    assert [name for name, _ in h.executor.calls] == ["click"]
