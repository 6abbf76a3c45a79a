"""A control that pastes the clipboard (a terminal's context menu, Edit › Paste) asks every
time it is pressed where the focus is in a terminal, or where nobody can tell: a click on
"Paste" in a terminal runs the clipboard's lines there, where typing the same line, or
ctrl+shift+v, would have asked (red team, a sibling of the paste keys' and the terminal's
rules). In an editor it is ordinary work (the eval's copy-and-paste tasks paste through Edit
› Paste). Parametrised over call_risk's own list, so an entry cannot lack its test."""

from __future__ import annotations

import pytest

from desktop_agent.core.call_risk import PASTE_TARGETS
from desktop_agent.core.models import Element
from tests.fakes import make_observation, tool
from tests.unit.core.test_pinned_name_lists import focused_window, through_the_gate

TERMINAL = "~/work — gnome-terminal-server"
#: an open menu, its Paste item at (400, 300)-(520, 330)
MENU_BOX = (400, 300, 120, 30)


def item(name: str, *, focused: bool = False) -> Element:
    return Element(2, "menu item", name, MENU_BOX, focused=focused)


def reason(name: str, word: str) -> str:
    return (
        f'the target menu item "{name}" ("{word}") pastes the clipboard into a terminal, '
        "where its line ends run"
    )


@pytest.mark.parametrize("word", PASTE_TARGETS)
async def test_a_click_on_each_paste_control_in_a_terminal_asks_though_clicks_are_allowed(
    word: str,
) -> None:
    name = word.capitalize()
    asked, ran = await through_the_gate(
        focused_window(TERMINAL, item(name)), tool("click", x=460, y=315)
    )
    assert asked == [reason(name, word)] and ran == []


@pytest.mark.parametrize(
    "call",
    [
        tool("click", element=2),
        tool("invoke", element=2),
        tool("hotkey", keys=["enter"]),  # enter presses the focused item
        tool("hotkey", keys=["space"]),
    ],
    ids=["click-element", "invoke", "enter", "space"],
)
async def test_every_way_of_pressing_a_paste_control_in_a_terminal_asks(call: object) -> None:
    screen = focused_window("~ — xterm", item("Paste", focused=True))
    asked, ran = await through_the_gate(screen, call)  # type: ignore[arg-type]
    # enter in a terminal asks for its own reason (a line end) before the item is judged
    assert len(asked) == 1 and ran == []
    assert "terminal" in asked[0]


async def test_typing_a_space_onto_a_focused_paste_button_in_a_terminal_asks() -> None:
    button = Element(2, "push button", "Paste", MENU_BOX, focused=True)
    asked, ran = await through_the_gate(
        focused_window("~ — xterm", button), tool("type_text", text="a b")
    )
    assert asked == [
        'the target push button "Paste" ("paste") pastes the clipboard into a terminal, '
        "where its line ends run"
    ]
    assert ran == []


async def test_a_paste_where_no_window_is_known_asks() -> None:
    asked, ran = await through_the_gate(
        make_observation([item("Paste")]), tool("click", x=460, y=315)
    )
    assert len(asked) == 1 and "the focused window is not known" in asked[0] and ran == []


async def test_an_editors_paste_and_a_terminals_copy_ask_nothing() -> None:
    # Edit › Paste in a text editor: ordinary work, as the eval's copy-and-paste tasks do
    asked, ran = await through_the_gate(
        focused_window("total.txt — L3afpad", item("Paste")), tool("click", x=460, y=315)
    )
    assert asked == [] and ran == ["click"]
    asked, ran = await through_the_gate(
        focused_window(TERMINAL, item("Copy")), tool("click", x=460, y=315)
    )
    assert asked == [] and ran == ["click"]
    # a Paste button elsewhere on the screen does not make a tab and enter typed in a
    # spreadsheet's cell ask: nobody presses it
    sheet = focused_window(
        "Book1.gnumeric — Gnumeric",
        Element(3, "push button", "Paste", (10, 40, 30, 30)),
        Element(4, "table cell", "A1", (100, 200, 80, 20), focused=True),
    )
    asked, ran = await through_the_gate(sheet, tool("type_text", text="1\t2", enter=True))
    assert asked == [] and ran == ["type_text"]
