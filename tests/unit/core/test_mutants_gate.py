"""The gate's questions word for word, the text it hides, and its re-checks once somebody
answered (mutants of core/gate.py that lived)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from pydantic import BaseModel

from desktop_agent.core import gate as gate_module
from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from desktop_agent.core.errors import ObservationError
from desktop_agent.core.events import ApprovalResolved
from desktop_agent.core.gate import SCREEN_CHANGED, WINDOW_CAME_UP
from desktop_agent.core.injection_guard import provider_notes
from desktop_agent.core.models import (
    REDACTED,
    ApprovalDecision,
    ApprovalRequest,
    Decision,
    Element,
    Grounding,
    MonitorArea,
    Observation,
    Policy,
    Risk,
    RunStatus,
    SafetyCheck,
    ScreenLayout,
    ScreenMapping,
    StepKind,
    StepStatus,
)
from desktop_agent.core.own_windows import OWN_WINDOW_ROLE
from desktop_agent.core.ports import DecideRequest, Focus, GroundRequest
from desktop_agent.core.tools import ToolRegistry, ToolSpec
from tests.fakes import (
    FakeExecutor,
    FakeFocusProbe,
    ScriptedGrounder,
    ScriptedPlanner,
    done,
    make_observation,
    tool,
)
from tests.unit.core.conftest import Harness, make_harness
from tests.unit.core.test_grounding_landing import DELETE_CAUTION, asked_while
from tests.unit.core.test_injection_gate import (
    ATTACKED,
    EDITOR,
    ORDER,
    POPPED,
    WindowsObserver,
    _then,
)
from tests.unit.core.test_run_monitor import MONITORS

CHECK = SafetyCheck(id="sc_1", code="malicious_instructions", message="obey the screen")


async def test_a_safety_check_question_says_how_many_actions_it_covers_and_hides_the_text() -> None:
    h = make_harness(policies={"type_text": Policy.ALLOW, "wait": Policy.ALLOW})
    run = await h.create()
    # nothing is known to have the focus: the text may go into a password field
    first = replace(
        tool("type_text", text="hunter2"),
        batch=(tool("wait", seconds=0), tool("wait", seconds=0)),
        safety_checks=(CHECK,),
        reason="type hunter2 into the box",
    )
    events = await h.collect(run, ScriptedPlanner([first, done()]))

    [asked] = h.gate.requests
    assert asked == ApprovalRequest(
        id=f"{run.id}-1",
        run_id=run.id,
        index=1,
        tool="type_text",
        args={"text": REDACTED},
        reason=f"type {REDACTED} into the box",
        risk=Risk.DANGEROUS,
        caution="the model's provider asks before the 3 action(s) of this turn: "
        "malicious_instructions",
        offer_run_grant=False,
        timeout_s=5.0,
        screenshot=f"runs/{run.id}/0001.jpg",
        created_at=asked.created_at,
        safety_check=CHECK,
        suspicious_text=provider_notes(CHECK),
    )
    [resolved] = [event for event in events if isinstance(event, ApprovalResolved)]
    assert (resolved.decision, resolved.by) == (ApprovalDecision.ONCE, "user")


async def _stored_action_args(h: Harness, run_id: str) -> list[dict[str, object]]:
    return [step.args for step in await h.repo.list_steps(run_id) if step.kind is StepKind.ACTION]


class _NoteArgs(BaseModel):
    note: str


async def test_a_refused_call_of_a_registered_tool_hides_the_text_its_spec_names() -> None:
    # a tool of this process's registry that is no built-in: its own spec says which argument
    # is typed text
    h = make_harness()
    note = ToolSpec("note_down", "Note a text.", _NoteArgs, Risk.INPUT, text_field="note")
    h.runner.services.registry.register(note)
    run = await h.create(allowed_tools=("click",))
    await h.collect(run, ScriptedPlanner([tool("note_down", note="s3cret")], then=done()))
    assert await _stored_action_args(h, run.id) == [{"note": REDACTED}]


async def test_a_built_in_typing_tool_this_process_lacks_still_has_its_text_hidden() -> None:
    h = make_harness()
    h.runner.services.registry = ToolRegistry(s for s in BUILTIN_TOOLS if s.name != "type_text")
    run = await h.create(allowed_tools=("click",))
    await h.collect(run, ScriptedPlanner([tool("type_text", text="s3cret")], then=done()))
    assert await _stored_action_args(h, run.id) == [{"text": REDACTED}]


class _PasswordOnceAsked(FakeFocusProbe):
    """A focus probe that knows no role until the person was asked, then finds a password
    field (the person clicked into one while the question was open) in the same window."""

    def __init__(self, h: Harness) -> None:
        super().__init__(place="x11:1")
        self.h = h

    async def focused_role(self) -> str | None:
        return "password text" if self.h.gate.requests else None


async def test_a_cautioned_line_whose_focus_became_a_password_field_is_not_typed() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE])
    h.runner.services.focus = _PasswordOnceAsked(h)
    run = await h.create()
    # asked for its line end (the focused window is not known), not as a password's text
    line = tool("type_text", text="ls", enter=True)
    await h.collect(run, ScriptedPlanner([line], then=done()))

    [asked] = h.gate.requests
    assert asked.caution.startswith("typing a line that ends with Enter may run it")
    assert h.executor.calls == []
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert action.status is StepStatus.SKIPPED
    assert (action.error or "").startswith(
        "the focus moved while you were asked (typing into a password field)"
    )


async def test_a_safety_check_on_a_call_naming_no_tool_names_none() -> None:
    # a provider's action the planner could not name a tool for: asked about as it is
    h = make_harness(answers=[ApprovalDecision.DENY])
    run = await h.create()
    nameless = Decision(action="tool", tool=None, safety_checks=(CHECK,))
    await h.collect(run, ScriptedPlanner([nameless], then=done()))
    assert [request.tool for request in h.gate.requests] == [""]


# ── a window that came up before an input call was sent ──────────────────────

ALLOW_INPUT = {name: Policy.ALLOW for name in ("click", "type_text", "hotkey", "wait")}
#: a window came up that gives no orders (a plain dialog)
PLAIN_POPUP = replace(EDITOR, window_ids=frozenset({"x11:1", "x11:2"}))


def _windows_harness(*, answers: tuple[ApprovalDecision, ...] = ()) -> Harness:
    h = make_harness(answers=answers, policies=ALLOW_INPUT, observer=WindowsObserver())
    h.observer.observation = EDITOR
    return h


async def _actions(h: Harness, run_id: str) -> list[tuple[StepStatus, str]]:
    steps = await h.repo.list_steps(run_id)
    return [(s.status, s.error or "") for s in steps if s.kind is StepKind.ACTION]


async def test_an_allowed_key_press_is_sent_when_the_window_that_came_up_gives_no_orders() -> None:
    h = _windows_harness()
    run = await h.create()
    await h.collect(
        run, ScriptedPlanner([_then(h, PLAIN_POPUP, tool("hotkey", keys=["ctrl", "s"]))])
    )
    assert [name for name, _ in h.executor.calls] == ["hotkey"]


async def test_a_safe_call_is_not_judged_again_when_a_window_with_orders_came_up() -> None:
    # a wait sends no input: the windows are not even read
    observer = WindowsObserver()
    h = make_harness(policies=ALLOW_INPUT, observer=observer)
    h.observer.observation = EDITOR
    run = await h.create()
    await h.collect(run, ScriptedPlanner([_then(h, POPPED, tool("wait", seconds=0))]))
    assert [name for name, _ in h.executor.calls] == ["wait"]
    assert observer.reads == 0


async def test_a_window_that_came_up_on_a_screen_that_cannot_be_read_again_stops_the_call() -> None:
    h = _windows_harness()
    run = await h.create()

    async def popup_then_no_look(_request: DecideRequest) -> Decision:
        h.observer.observation = PLAIN_POPUP
        h.observer.fail_next(1)  # the look the gate takes once it sees the new window
        return tool("hotkey", keys=["ctrl", "s"])

    await h.collect(run, ScriptedPlanner([popup_then_no_look]))
    assert h.executor.calls == []
    assert (await _actions(h, run.id))[0] == (
        StepStatus.SKIPPED,
        WINDOW_CAME_UP.format(why="a window came up and the screen could not be read again"),
    )


async def test_a_click_on_an_element_is_judged_at_its_centre_when_a_window_came_up() -> None:
    # the element's id means nothing on the new look: its centre on the turn's look is
    h = _windows_harness()
    run = await h.create()
    await h.collect(run, ScriptedPlanner([_then(h, PLAIN_POPUP, tool("click", element=8))]))
    assert [name for name, _ in h.executor.calls] == ["click"]


async def test_a_key_press_asked_about_an_order_runs_when_the_new_window_shows_only_it() -> None:
    # the person allowed it with the order in view: the same order on the new look is no news
    h = make_harness(
        answers=[ApprovalDecision.ONCE], policies=ALLOW_INPUT, observer=WindowsObserver()
    )
    h.observer.observation = replace(ATTACKED, window_ids=frozenset({"x11:1"}))
    run = await h.create()
    await h.collect(run, ScriptedPlanner([_then(h, POPPED, tool("hotkey", keys=["ctrl", "s"]))]))
    assert len(h.gate.requests) == 1
    assert [name for name, _ in h.executor.calls] == ["hotkey"]


# ── the screen looked at again once a person answered ────────────────────────

FORUM = Element(1, "window", "Forum — Firefox", (0, 0, 1280, 720), focused=True)


def _answering(h: Harness, then: Callable[[], None]) -> None:
    """The person answers "once"; `then` is what changed on the screen meanwhile."""

    async def request(approval: ApprovalRequest) -> ApprovalDecision:
        h.gate.requests.append(approval)
        then()
        return ApprovalDecision.ONCE

    h.gate.request = request  # type: ignore[method-assign]


async def test_a_click_whose_screen_cannot_be_looked_at_again_is_made_as_approved() -> None:
    # the person saw the screen; a look that fails tells nothing new
    h = make_harness()
    h.observer.observation = make_observation([FORUM])
    _answering(h, lambda: h.observer.fail_next(1))
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=100, y=100)], then=done()))
    assert len(h.gate.requests) == 1
    assert [name for name, _ in h.executor.calls] == ["click"]


async def test_a_click_where_a_button_named_by_the_users_own_words_came_up_is_not_made() -> None:
    h = make_harness(sensitive_targets=("frobnicate",))
    h.observer.observation = make_observation(
        [FORUM, Element(2, "button", "Open", (80, 90, 80, 20))]
    )
    changed = make_observation([FORUM, Element(3, "button", "Frobnicate", (80, 90, 80, 20))])
    _answering(h, lambda: setattr(h.observer, "observation", changed))
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=100, y=100)], then=done()))
    assert h.executor.calls == []
    assert (await _actions(h, run.id))[0] == (
        StepStatus.SKIPPED,
        SCREEN_CHANGED.format(why='the target button "Frobnicate" is sensitive ("frobnicate")'),
    )


async def test_a_click_approved_on_a_sensitive_button_that_now_lands_on_an_order_is_not_made() -> (
    None
):
    h = make_harness()
    h.observer.observation = make_observation(
        [FORUM, Element(2, "button", "Delete", (80, 90, 80, 20))]
    )
    order = make_observation([FORUM, Element(7, "label", ORDER, (20, 80, 600, 40))])
    _answering(h, lambda: setattr(h.observer, "observation", order))
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=100, y=100)], then=done()))
    [asked] = h.gate.requests
    assert asked.caution == 'the target button "Delete" is sensitive ("delete")'
    assert h.executor.calls == []
    [(status, error)] = (await _actions(h, run.id))[:1]
    assert status is StepStatus.SKIPPED
    assert "the click lands on text that looks like orders to an AI" in error


async def test_a_click_approved_on_an_order_still_there_is_made() -> None:
    # the person allowed it with the order under the point in view: no news
    h = make_harness()
    h.observer.observation = ATTACKED
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=100, y=310)], then=done()))
    [asked] = h.gate.requests
    assert "orders to an AI" in asked.caution
    assert [name for name, _ in h.executor.calls] == ["click"]


async def test_a_key_press_nobody_was_asked_about_asks_the_focus_no_more() -> None:
    # the focus is asked again only after an answer (a person may have clicked meanwhile)
    probe = FakeFocusProbe("text")
    h = make_harness(policies=ALLOW_INPUT, focus=probe)
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("hotkey", keys=["ctrl", "s"])], then=done()))
    assert [name for name, _ in h.executor.calls] == ["hotkey"]
    assert probe.calls == 2  # when the call was validated, and when it was judged


async def test_keys_approved_while_the_apps_own_window_keeps_the_focus_are_refused_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the grace the app's closing dialog gets to give the focus back: none here, it keeps it
    monkeypatch.setattr(gate_module, "OWN_FOCUS_WAIT_S", 0.0)
    h = make_harness()
    h.runner.services.focus = _OwnWindowOnceAsked(h)
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("hotkey", keys=["ctrl", "v"])], then=done()))
    assert h.executor.calls == []
    assert (await _actions(h, run.id))[0] == (
        StepStatus.DENIED,
        "the app's own window has the keyboard focus now: the agent may not type into its own "
        "controls (click the window to type into first)",
    )


class _OwnWindowOnceAsked(FakeFocusProbe):
    """A focus probe that finds an editor until the person was asked, then the app's own
    window (its question dialog, still in front)."""

    def __init__(self, h: Harness) -> None:
        super().__init__()
        self.h = h

    async def focused_role(self) -> str | None:
        return OWN_WINDOW_ROLE if self.h.gate.requests else "text"


#: a window came up with an order far from the click's point (10, 10)
ORDER_ELSEWHERE = replace(POPPED, elements=(ATTACKED.elements[0], ATTACKED.elements[1]))


async def test_an_allowed_click_is_not_made_when_a_window_with_orders_came_up() -> None:
    h = _windows_harness()
    run = await h.create()
    await h.collect(run, ScriptedPlanner([_then(h, ORDER_ELSEWHERE, tool("click", x=10, y=10))]))
    assert h.executor.calls == []
    [(status, error)] = (await _actions(h, run.id))[:1]
    assert status is StepStatus.SKIPPED and error.startswith("a window came up before")


async def test_a_click_a_person_approved_is_judged_again_only_at_its_point() -> None:
    # once answered, the screen is looked at again where the click lands (a window that came
    # up with orders elsewhere is for the next turn's look)
    h = make_harness(
        answers=[ApprovalDecision.ONCE], policies={"click": Policy.ASK}, observer=WindowsObserver()
    )
    h.observer.observation = EDITOR
    run = await h.create()
    await h.collect(run, ScriptedPlanner([_then(h, ORDER_ELSEWHERE, tool("click", x=10, y=10))]))
    assert len(h.gate.requests) == 1
    assert [name for name, _ in h.executor.calls] == ["click"]


class _InWindowArgs(BaseModel):
    title: str
    text: str


#: a tool that brings a window to the front and types into it (its traits are its spec's)
TYPE_IN = ToolSpec(
    "type_in",
    "Bring a window to the front, then type a text into it.",
    _InWindowArgs,
    Risk.INPUT,
    keyboard=True,
    text_field="text",
    window_field="title",
)


async def test_keys_sent_to_a_window_not_the_apps_own_run_once_approved() -> None:
    # once answered, the window it names is judged again as the app's own or not
    h = make_harness(focus=FakeFocusProbe("text", place="x11:7"))
    h.runner.services.registry.register(TYPE_IN)
    run = await h.create(allowed_tools=("type_in",))
    call = tool("type_in", title="notes.txt — L3afpad", text="hi")
    await h.collect(run, ScriptedPlanner([call], then=done()))
    assert len(h.gate.requests) == 1
    assert [name for name, _ in h.executor.calls] == ["type_in"]


async def test_text_read_off_a_window_that_came_up_is_not_typed_unasked() -> None:
    # the popup shows the very text the model is about to type: copied off the screen, not
    # from the goal, so a person answers for it
    iban = "DE89 3704 0044 0532 0130 00"
    shows_it = replace(
        PLAIN_POPUP, elements=(*EDITOR.elements, Element(9, "label", iban, (20, 500, 400, 20)))
    )
    h = _windows_harness()
    run = await h.create()
    await h.collect(run, ScriptedPlanner([_then(h, shows_it, tool("type_text", text=iban))]))
    assert h.executor.calls == []
    [(status, error)] = (await _actions(h, run.id))[:1]
    assert status is StepStatus.SKIPPED
    assert "the text to type was read on the screen" in error


async def test_a_question_on_an_image_of_all_monitors_names_the_one_under_the_click() -> None:
    # all monitors as one image, 1280 px wide for 3200 desktop px, from -1280
    h = make_harness(policies={"click": Policy.ASK})
    h.observer.observation = replace(
        make_observation(),
        layout=ScreenLayout(MonitorArea(0, -1280, 0, 3200, 1080), MONITORS),
        mapping=ScreenMapping(scale_x=2.5, scale_y=2.5, offset_x=-1280),
    )
    run = await h.create(allowed_tools=("click",))
    planner = ScriptedPlanner([tool("click", x=100, y=100), tool("click", x=900, y=100)])
    await h.collect(run, planner)
    asked = [(request.index, request.monitor) for request in h.gate.requests]
    assert asked == [(1, MONITORS[1]), (2, MONITORS[0])]


# ── the app's own windows as they are now ─────────────────────────────────────

#: the app's question dialog, in desktop pixels
OWN_DIALOG = Element(0, "window", "Desktop Agent — allow click?", (300, 200, 400, 300))
#: a button of the editor away from the dialog
OK_BUTTON = Element(2, "button", "OK", (40, 600, 80, 30))


class OwnWindowsNow:
    """An observer (OwnWindowsSource) that reads the app's windows in desktop pixels and gives
    them in the screenshot's (the observation's mapping), each read the next of `reads` (the
    last one stays), and the pointer where it rests."""

    def __init__(
        self, reads: list[tuple[Element, ...]], pointer: tuple[int, int] | None = None
    ) -> None:
        self.observation = make_observation([FORUM, OK_BUTTON])
        self.reads = reads
        self.pointer = pointer

    async def observe(self) -> Observation:
        return self.observation

    async def own_windows_now(self, observation: Observation) -> tuple[Element, ...] | None:
        windows = self.reads.pop(0) if len(self.reads) > 1 else self.reads[0]
        to_image = observation.mapping.to_image
        return tuple(
            replace(w, box=(*to_image(w.box[0], w.box[1]), w.box[2], w.box[3])) for w in windows
        )

    async def pointer_now(self, observation: Observation) -> tuple[int, int] | None:
        if self.pointer is None:
            return None
        return observation.mapping.to_image(*self.pointer)


def _own_windows_harness(
    observer: OwnWindowsNow, *, policy: Policy = Policy.ALLOW, answer: bool = False
) -> Harness:
    h = make_harness(policies={"click": policy, "scroll": policy})
    h.runner.services.observer = observer
    if answer:
        # the app's question dialog is up under the point when the person has answered
        _answering(h, lambda: observer.reads.insert(0, (OWN_DIALOG,)))
    return h


async def _ran(h: Harness, call: Decision, *allowed: str) -> list[str]:
    run = await h.create(allowed_tools=allowed or (call.tool or "",))
    await h.collect(run, ScriptedPlanner([call], then=done()))
    return [name for name, _ in h.executor.calls]


async def test_a_scroll_without_a_point_runs_when_the_pointer_cannot_be_read() -> None:
    h = _own_windows_harness(OwnWindowsNow([(OWN_DIALOG,)], pointer=None))
    assert await _ran(h, tool("scroll", amount=-3)) == ["scroll"]


async def test_a_scroll_without_a_point_is_judged_where_the_pointer_rests_left_and_down() -> None:
    # x 100 is left of the dialog, y 450 is within its rows
    h = _own_windows_harness(OwnWindowsNow([(OWN_DIALOG,)], pointer=(100, 450)))
    assert await _ran(h, tool("scroll", amount=-3)) == ["scroll"]


async def test_a_scroll_given_only_its_x_is_judged_where_the_pointer_rests() -> None:
    # half a point is no point: the wheel turns where the pointer is, on the dialog
    h = _own_windows_harness(OwnWindowsNow([(OWN_DIALOG,)], pointer=(450, 450)))
    run = await h.create(allowed_tools=("scroll",))
    await h.collect(run, ScriptedPlanner([tool("scroll", amount=-3, x=100)], then=done()))
    assert h.executor.calls == []
    [(status, error)] = await _actions(h, run.id)
    assert status is StepStatus.DENIED and "is on the app's own window" in error
    # (old main ended the run here: element_ref read the missing y as None)
    assert h.stored(run.id).status is RunStatus.COMPLETED


async def test_a_click_on_an_element_is_judged_at_it_wherever_the_pointer_rests() -> None:
    h = _own_windows_harness(OwnWindowsNow([(OWN_DIALOG,)], pointer=(450, 450)))
    assert await _ran(h, tool("click", element=2)) == ["click"]


async def test_the_apps_windows_are_read_in_the_turns_screenshot_pixels() -> None:
    # a screenshot of a monitor right of another: the dialog at desktop x 2220 is at 300 in it
    observer = OwnWindowsNow([(replace(OWN_DIALOG, box=(2220, 200, 400, 300)),)], (2370, 450))
    observer.observation = replace(observer.observation, mapping=ScreenMapping(offset_x=1920))
    h = _own_windows_harness(observer)
    assert await _ran(h, tool("click", x=450, y=450)) == []
    h = _own_windows_harness(observer)
    assert await _ran(h, tool("scroll", amount=-3)) == []


async def test_an_allowed_click_where_the_apps_window_is_now_is_refused_without_a_grace() -> None:
    # nobody was asked: no dialog of the app is closing, so the first read stands (the window
    # is gone at the next read)
    h = _own_windows_harness(OwnWindowsNow([(OWN_DIALOG,), ()]))
    assert await _ran(h, tool("click", x=450, y=450)) == []


async def test_a_click_answered_while_the_question_is_still_closing_runs_once_it_is_gone() -> None:
    # the person answered; the app's dialog under the point is given its moment to close
    h = _own_windows_harness(OwnWindowsNow([()]), policy=Policy.ASK, answer=True)
    assert await _ran(h, tool("click", x=450, y=450)) == ["click"]


async def test_a_click_where_the_apps_windows_cannot_be_read_is_refused_saying_so() -> None:
    class Unreadable(OwnWindowsNow):
        async def own_windows_now(self, observation: Observation) -> tuple[Element, ...] | None:
            raise ObservationError("EnumWindows failed (Windows error 5)")

    h = _own_windows_harness(Unreadable([()]))
    run = await h.create(allowed_tools=("click",))
    await h.collect(run, ScriptedPlanner([tool("click", x=100, y=650)], then=done()))
    assert (await _actions(h, run.id))[0] == (
        StepStatus.DENIED,
        "the app's own windows cannot be read now (EnumWindows failed (Windows error 5)): the "
        "agent does not act where one of them might be",
    )


async def test_a_grounded_click_on_a_delete_button_whose_landing_went_unseen_names_it() -> None:
    # the look after the grounding failed: the turn's screen is judged, and the button it
    # shows under the point is what the person is told (the unseen landing only asks when
    # nothing else does)
    h = make_harness(answers=[ApprovalDecision.DENY], policies={"click": Policy.ALLOW})
    delete = Element(3, "button", "Delete", (600, 500, 100, 30))
    h.observer.observation = make_observation([FORUM, delete])
    run = await h.create(allowed_tools=("click",))

    async def look_then_fail(_request: GroundRequest) -> Grounding:
        h.observer.fail_next(1)  # the look after the grounding fails
        return Grounding(point=(650, 515), first=(640, 510), refined=True, summary="refined")

    planner = ScriptedPlanner(
        [tool("click", x=640, y=510, target="the Delete button")],
        then=done(),
        grounder=ScriptedGrounder([look_then_fail]),
    )
    await h.collect(run, planner)
    [asked] = h.gate.requests
    assert asked.caution == 'the target button "Delete" is sensitive ("delete")'


# ── where the focus is asked ──────────────────────────────────────────────────


class _ProbingExecutor(FakeExecutor):
    """An executor that is a FocusProbe too (the desktop's is), finding `role`."""

    def __init__(self, role: str | None) -> None:
        super().__init__()
        self.role = role
        self.probed = 0

    async def focused(self) -> Focus:
        self.probed += 1
        return Focus(self.role)


async def test_without_a_focus_service_the_executor_that_is_a_probe_is_asked() -> None:
    h = make_harness(answers=[ApprovalDecision.DENY], policies=ALLOW_INPUT)
    h.runner.services.executor = executor = _ProbingExecutor("password text")
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("type_text", text="hunter2")], then=done()))
    assert [request.caution for request in h.gate.requests] == ["typing into a password field"]
    assert executor.calls == [] and executor.probed > 0


async def test_the_focus_service_is_asked_before_an_executor_that_is_a_probe() -> None:
    h = make_harness(
        answers=[ApprovalDecision.DENY], policies=ALLOW_INPUT, focus=FakeFocusProbe("password text")
    )
    h.runner.services.executor = executor = _ProbingExecutor("text")
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("type_text", text="hunter2")], then=done()))
    assert [request.caution for request in h.gate.requests] == ["typing into a password field"]
    assert executor.probed == 0


async def test_a_click_asks_the_focus_nothing() -> None:
    probe = FakeFocusProbe("text")
    h = make_harness(policies=ALLOW_INPUT, focus=probe)
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=5, y=5)], then=done()))
    assert [name for name, _ in h.executor.calls] == ["click"] and probe.calls == 0


async def test_a_decision_naming_no_tool_is_refused_as_an_unknown_tool_of_no_name() -> None:
    h = make_harness()
    run = await h.create()
    await h.collect(run, ScriptedPlanner([Decision(action="tool", tool=None)], then=done()))
    [(status, error)] = await _actions(h, run.id)
    assert status is StepStatus.FAILED and error.startswith("unknown tool ''")


async def test_an_allowed_click_where_a_button_of_the_users_words_came_up_is_not_made() -> None:
    h = make_harness(
        policies=ALLOW_INPUT, observer=WindowsObserver(), sensitive_targets=("frobnicate",)
    )
    h.observer.observation = EDITOR
    popped = replace(
        PLAIN_POPUP,
        elements=(*EDITOR.elements, Element(9, "button", "Frobnicate", (80, 90, 80, 20))),
    )
    run = await h.create()
    await h.collect(run, ScriptedPlanner([_then(h, popped, tool("click", x=100, y=100))]))
    assert h.executor.calls == []
    assert (await _actions(h, run.id))[0] == (
        StepStatus.SKIPPED,
        WINDOW_CAME_UP.format(why='the target button "Frobnicate" is sensitive ("frobnicate")'),
    )


async def test_with_the_guard_off_a_click_where_a_sensitive_button_came_up_is_not_made() -> None:
    # red team: the window-came-up look was taken only with the injection guard on, so with it
    # off a granted click landed on a "Delete" that came up meanwhile; the guard's setting is
    # about the screen's orders, not the gate's own rules
    h = make_harness(policies=ALLOW_INPUT, observer=WindowsObserver(), injection_guard=False)
    h.observer.observation = EDITOR
    popped = replace(
        PLAIN_POPUP,
        elements=(*EDITOR.elements, Element(9, "button", "Delete", (80, 90, 80, 20))),
    )
    run = await h.create()
    await h.collect(run, ScriptedPlanner([_then(h, popped, tool("click", x=100, y=100))]))
    assert h.executor.calls == []
    assert (await _actions(h, run.id))[0] == (
        StepStatus.SKIPPED,
        WINDOW_CAME_UP.format(why='the target button "Delete" is sensitive ("delete")'),
    )


async def test_a_line_asked_about_an_unknown_window_stops_when_a_window_with_orders_came_up() -> (
    None
):
    # asked because the focused window was not known (the window list's probe tells its
    # place, not what it is); the new look knows it (no terminal) and shows an order: the
    # order stops the line
    h = make_harness(
        answers=[ApprovalDecision.ONCE],
        observer=WindowsObserver(),
        focus=FakeFocusProbe(place="x11:1"),
    )
    h.observer.observation = make_observation([]).with_(window_ids=frozenset({"x11:1"}))
    run = await h.create()
    line = tool("type_text", text="ls", enter=True)
    await h.collect(run, ScriptedPlanner([_then(h, POPPED, line)]))
    [asked] = h.gate.requests
    assert asked.caution.startswith("typing a line that ends with Enter may run it")
    assert h.executor.calls == []
    [(status, error)] = (await _actions(h, run.id))[:1]
    assert status is StepStatus.SKIPPED
    assert error.startswith("a window came up before") and ORDER in error


async def test_a_line_approved_for_one_terminal_is_not_typed_into_another_that_came_up() -> None:
    # red team: the person approved running a line in the terminal they saw; a terminal
    # that came up meanwhile (another host's shell) took the focus, and the reason on the new
    # look was the same words, so the line ran there
    local = Element(1, "window", "local — XTerm", (0, 0, 800, 600), focused=True)
    other = Element(2, "window", "root@prod — XTerm", (100, 100, 800, 600), focused=True)
    before = make_observation([local]).with_(window_ids=frozenset({"x11:1"}))
    after = make_observation([replace(local, focused=False), other]).with_(
        window_ids=frozenset({"x11:1", "x11:2"})
    )
    # it came up while the model thought: the probe finds it both when the call is judged
    # and once answered (the turn's screen does not show it)
    h = make_harness(
        answers=[ApprovalDecision.ONCE],
        observer=WindowsObserver(),
        focus=FakeFocusProbe("terminal", place="x11:2"),
    )
    h.observer.observation = before
    run = await h.create()
    line = tool("type_text", text="ls", enter=True)
    await h.collect(run, ScriptedPlanner([_then(h, after, line)]))
    [asked] = h.gate.requests
    caution = "typing a line that ends with Enter into a terminal runs it"
    assert asked.caution == caution
    assert h.executor.calls == []
    assert (await _actions(h, run.id))[0] == (
        StepStatus.SKIPPED,
        WINDOW_CAME_UP.format(why=caution),
    )


async def test_a_scroll_given_only_its_x_is_judged_again_without_its_half_point() -> None:
    # asked (keys held), approved, and a window came up meanwhile: half a point is no point
    # under which a control could have changed; the scroll runs (gate _under_points 7)
    h = make_harness(answers=(ApprovalDecision.ONCE,), observer=WindowsObserver())
    h.observer.observation = EDITOR
    run = await h.create(allowed_tools=("scroll",))
    scroll = tool("scroll", amount=-3, x=100, hold=["shift"])
    await h.collect(run, ScriptedPlanner([_then(h, PLAIN_POPUP, scroll)]))
    assert [name for name, _args in h.executor.calls] == ["scroll"]
    assert (await _actions(h, run.id))[0] == (StepStatus.OK, "")


async def test_a_delete_that_moved_under_the_point_is_another_control_and_is_not_clicked() -> None:
    # the same window, the same words, but the button under the point is not in the box the
    # person saw (gate _under_points 8)
    page = Element(1, "window", "Drafts — Mail", (0, 0, 1280, 800), focused=True)
    before = make_observation([page, Element(3, "button", "Delete", (600, 500, 100, 30))])
    after = make_observation([page, Element(3, "button", "Delete", (620, 505, 100, 30))])
    h, action = await asked_while(before, after, tool("click", x=650, y=515))
    assert (action.status, action.error) == (
        StepStatus.SKIPPED,
        SCREEN_CHANGED.format(why=DELETE_CAUTION),
    )
    assert h.executor.calls == []
