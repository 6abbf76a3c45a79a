"""What the person reads and what asks, word for word (mutants of core/call_risk.py that lived)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from desktop_agent.core.call_risk import (
    CallRisk,
    Sensitivity,
    assess_call,
    control_at,
    hotkey_risk,
    target_element,
    text_sensitivity,
)
from desktop_agent.core.models import Element, Risk
from desktop_agent.core.tools import ToolSpec
from tests.fakes import make_observation

EDITOR = Element(1, "window", "notes.txt — L3afpad", (0, 0, 800, 600), focused=True)
#: a plain focused field, and a sensitive button a tab may reach
FIELD = Element(2, "text", "Name", (10, 10, 200, 20), focused=True)
DELETE = Element(3, "push button", "Delete", (10, 50, 80, 20))
FORM = make_observation([EDITOR, FIELD, DELETE])
MOVED_ONTO_DELETE = (
    "a tab or an arrow may move the focus onto a sensitive control before it is pressed: "
    'the target push button "Delete" is sensitive ("delete")'
)


def test_keys_held_beside_a_combo_are_named_in_the_reason() -> None:
    assert hotkey_risk(["alt", "f2"], desktop_focused=False, terminal=False) == (
        "alt+f2 opens the run-a-command dialog"
    )
    assert hotkey_risk(["shift", "alt", "f2"], desktop_focused=False, terminal=False) == (
        "alt+f2 opens the run-a-command dialog (with shift held too)"
    )
    keys = ["shift", "ctrl", "alt", "space"]
    assert hotkey_risk(keys, desktop_focused=False, terminal=False) == (
        "alt+space opens a launcher (KRunner, PowerToys Run) (with ctrl+shift held too)"
    )


def test_alt_f4_where_the_focus_is_not_known_says_so() -> None:
    assert hotkey_risk(["alt", "f4"], desktop_focused=None, terminal=False) == (
        "alt+f4 may reach the desktop's shut-down dialog (the focused window is not known)"
    )


def test_a_line_where_the_windows_are_not_known_says_it_may_run() -> None:
    risk = assess_call("type_text", {"text": "ls", "enter": True}, make_observation())
    assert risk.always_ask == (
        "typing a line that ends with Enter may run it in a terminal "
        "(the focused window is not known)"
    )


def test_a_space_typed_without_a_tab_presses_only_the_focused_plain_field() -> None:
    assert assess_call("type_text", {"text": "John Smith"}, FORM).always_ask == ""


def test_a_tab_before_a_space_may_press_a_sensitive_control() -> None:
    assert assess_call("type_text", {"text": "x\t y"}, FORM).always_ask == MOVED_ONTO_DELETE


def test_only_a_space_after_the_first_tab_counts() -> None:
    # the space follows the first tab; after the last tab there is none
    assert assess_call("type_text", {"text": "x\t \tyz"}, FORM).always_ask == MOVED_ONTO_DELETE
    # a space before the tab pressed the focused field, before the focus moved
    assert assess_call("type_text", {"text": "a \tb"}, FORM).always_ask == ""


def test_a_window_title_is_not_a_control_a_tab_can_move_onto() -> None:
    window = Element(1, "window", "Delete files — Thunar", (0, 0, 800, 600), focused=True)
    form = make_observation([window, FIELD])
    assert assess_call("type_text", {"text": "x\t y"}, form).always_ask == ""
    assert assess_call("hotkey", {"keys": ["tab", "enter"]}, form).always_ask == ""


def test_a_click_without_both_coordinates_cannot_be_judged() -> None:
    for args in ({"x": 20}, {"y": 20}):
        assert assess_call("click", args, FORM).always_ask == (
            "the target cannot be told from the arguments"
        )


def test_a_point_without_both_coordinates_names_no_element() -> None:
    assert target_element({"x": 20}, FORM) is None
    assert target_element({"y": 20}, FORM) is None


def test_a_middle_click_says_it_pastes() -> None:
    risk = assess_call("click", {"x": 700, "y": 500, "button": "middle"}, FORM)
    assert risk.always_ask == "a middle click pastes the selected text (the X11 primary selection)"


@pytest.mark.parametrize("keys", ["ctrl+c", None, ["ctrl", 3]])
def test_keys_that_are_not_a_list_of_names_ask_saying_so(keys: object) -> None:
    assert assess_call("hotkey", {"keys": keys}, FORM) == CallRisk(
        f"the keys {keys!r} cannot be read", Sensitivity.PLAIN
    )


def test_enter_on_a_sensitive_focused_button_names_that_button() -> None:
    focused = Element(3, "push button", "Delete", (10, 50, 80, 20), focused=True)
    form = make_observation([EDITOR, focused])
    for keys in (["enter"], ["tab", "enter"]):
        assert assess_call("hotkey", {"keys": keys}, form).always_ask == (
            'the target push button "Delete" is sensitive ("delete")'
        )


def test_enter_without_a_tab_presses_only_the_focused_plain_control() -> None:
    assert assess_call("hotkey", {"keys": ["enter"]}, FORM).always_ask == ""
    assert assess_call("hotkey", {"keys": ["tab", "enter"]}, FORM).always_ask == (MOVED_ONTO_DELETE)


def test_the_control_at_a_point_is_the_smallest_by_area() -> None:
    # the wide bar is 100 x 10 (area 1000), the button 20 x 20 (area 400)
    bar = Element(4, "tool bar", "Tools", (0, 0, 100, 10))
    button = Element(5, "push button", "Send", (0, 0, 20, 20))
    screen = make_observation([bar, button])
    assert control_at(screen, 5, 5) == button
    assert assess_call("click", {"x": 5, "y": 5}, screen).always_ask == (
        'the target push button "Send" is sensitive ("send")'
    )


def test_a_text_set_by_id_into_a_plain_field_is_plain() -> None:
    assert text_sensitivity("set_value", {"element": 2, "value": "x"}, FORM, None) is (
        Sensitivity.PLAIN
    )
    secret = make_observation([Element(2, "text", "PIN", (0, 0, 9, 9), password=True)])
    assert text_sensitivity("set_value", {"element": 2, "value": "x"}, secret, None) is (
        Sensitivity.PASSWORD
    )


#: an editor beside a terminal, their windows known
TERMINAL_DESK = make_observation(
    [
        Element(1, "window", "notes.txt — L3afpad", (0, 0, 600, 600), focused=True),
        Element(2, "window", "alice@box: ~ — XTerm", (600, 0, 600, 600)),
    ]
)


@pytest.mark.parametrize("missing", ["x", "y", "to_x", "to_y"])
def test_a_drag_without_one_of_its_four_coordinates_asks_saying_so(missing: str) -> None:
    # each coordinate on its own: a drag whose other three are whole numbers still asks
    args: dict[str, object] = {"x": 100, "y": 100, "to_x": 200, "to_y": 200}
    args[missing] = None
    assert assess_call("drag", args, TERMINAL_DESK).always_ask == (
        "the points cannot be told from the arguments"
    )


def test_a_drag_into_a_terminal_or_among_unknown_windows_says_why_it_asks() -> None:
    drag = {"x": 100, "y": 100, "to_x": 700, "to_y": 100}
    assert assess_call("drag", drag, TERMINAL_DESK).always_ask == (
        "dropping onto a terminal pastes the dragged text into it"
    )
    assert assess_call("drag", drag, make_observation()).always_ask == (
        "a drag may drop text into a terminal (the windows are not known)"
    )


def test_a_value_set_in_a_terminal_is_not_a_typed_line() -> None:
    # set_value sets the control's text through the accessibility API: no key is typed, so no
    # line end runs in the terminal around it
    terminal = make_observation(
        [
            Element(1, "window", "alice@box: ~ — XTerm", (0, 0, 600, 600), focused=True),
            Element(2, "text", "Find", (10, 10, 200, 20)),
        ]
    )
    assert assess_call("set_value", {"element": 2, "value": "rm -rf ~\n"}, terminal) == (
        CallRisk("", Sensitivity.PLAIN)
    )


class _ChordArgs(BaseModel):
    keys: object = None
    text: str = ""


#: a tool with both traits: it presses a chord and types a text (a tool's traits are its spec's)
CHORD_THEN_TYPE = ToolSpec(
    "chord_then_type",
    "Press keys, then type a text.",
    _ChordArgs,
    Risk.INPUT,
    keyboard=True,
    presses_keys=True,
    text_field="text",
)


def test_unreadable_keys_keep_where_the_text_goes_unknown() -> None:
    # nothing is known to have the focus: the text may go into a password field and is hidden
    risk = assess_call(CHORD_THEN_TYPE, {"keys": "ctrl", "text": "hunter2"}, make_observation())
    assert risk == CallRisk("the keys 'ctrl' cannot be read", Sensitivity.UNKNOWN)


#: an editor that holds the focus, on whose toolbar a "Paste" button has the focus: pasting
#: here is ordinary work — unless the focus probe says a terminal has the focus now
PASTE = Element(2, "push button", "Paste", (10, 10, 80, 20), focused=True)
EDITOR_WITH_PASTE = make_observation([EDITOR, PASTE])


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("type_text", {"text": "a b"}),  # a space presses the focused button
        ("hotkey", {"keys": ["space"]}),
    ],
)
def test_a_paste_pressed_where_the_probe_says_a_terminal_has_the_focus_asks(
    tool: str, args: dict[str, object]
) -> None:
    # the probe's role is the word on where the keys go, not the observation's stale focus
    # (call_risk _line_risk 44/48, _pressed_target 19, assess_call 78/82)
    assert assess_call(tool, args, EDITOR_WITH_PASTE).always_ask == ""
    assert assess_call(tool, args, EDITOR_WITH_PASTE, "terminal").always_ask == (
        'the target push button "Paste" ("paste") pastes the clipboard into a terminal, '
        "where its line ends run"
    )


def test_a_paste_where_the_focused_window_is_not_known_says_so() -> None:
    # no windows listed: the paste may go into a terminal (call_risk _pressed_target 26)
    paste = make_observation([Element(2, "push button", "Paste", (10, 10, 80, 20))])
    assert assess_call("click", {"element": 2}, paste).always_ask == (
        'the target push button "Paste" ("paste") may paste the clipboard into a terminal, '
        "where its line ends run (the focused window is not known)"
    )


def test_a_drag_from_an_editors_paste_button_is_judged_on_the_turns_screen() -> None:
    # the press at the drag's start is judged where the windows are known (an editor: the
    # paste is ordinary work), not as if nothing were known (call_risk _drag_risk 19)
    paste = Element(2, "push button", "Paste", (10, 10, 80, 20))
    editor = make_observation([EDITOR, paste])
    args = {"x": 20, "y": 15, "to_x": 400, "to_y": 300}
    assert assess_call("drag", args, editor).always_ask == ""
