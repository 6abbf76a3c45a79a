"""Every entry of the gate's name lists is judged as its rule says, through the loop's gate:
the tests are parametrised over the lists themselves, so an entry cannot lack its test
(issue #36 item 4)."""

from __future__ import annotations

import pytest

from desktop_agent.core.call_risk import (
    DEFAULT_SENSITIVE_TARGETS,
    DESKTOP_CLASSES,
    DESKTOP_TITLES,
    LAUNCHER_CLASSES,
    LINE_END_COMBOS,
    LOOKALIKE_LETTERS,
    PASTE_COMBOS,
    SYSTEM_COMBOS,
    TERMINAL_CLASSES,
    TERMINAL_NAMES,
    TERMINAL_WORDS,
)
from desktop_agent.core.models import ApprovalDecision, Decision, Element, Observation, Policy
from tests.fakes import ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import make_harness

#: the order a person presses a combo's keys in: modifiers first
_KEY_ORDER = ("ctrl", "alt", "shift", "win")


def focused_window(label: str, *controls: Element) -> Observation:
    """A screen whose one window, labelled `label` ("title — class"), has the focus."""
    return make_observation(
        [Element(1, "window", label, (0, 0, 1000, 700), focused=True), *controls]
    )


EDITOR = focused_window("notes.txt — L3afpad")


def keys_of(combo: frozenset[str]) -> list[str]:
    return sorted(combo, key=lambda key: (_KEY_ORDER.index(key) if key in _KEY_ORDER else 9, key))


async def through_the_gate(observation: Observation, call: Decision) -> tuple[list[str], list[str]]:
    """One run of `call` on `observation` with its tool allowed by policy (so only a rule of
    the gate can ask); the person asked denies. (the cautions asked, the tools that ran)"""
    h = make_harness(answers=[ApprovalDecision.DENY], policies={call.tool or "": Policy.ALLOW})
    h.observer.observation = observation
    run = await h.create(allowed_tools=(call.tool or "",))
    await h.collect(run, ScriptedPlanner([call], then=done()))
    return [request.caution for request in h.gate.requests], [name for name, _ in h.executor.calls]


# ── terminals, shells and launchers: a line end asks there ───────────────────


@pytest.mark.parametrize("name", TERMINAL_NAMES)
async def test_enter_asks_in_a_window_holding_each_terminal_name(name: str) -> None:
    asked, ran = await through_the_gate(
        focused_window(f"~/work — {name}"), tool("hotkey", keys=["enter"])
    )
    assert asked == ["enter runs the typed line in a terminal"] and ran == []


@pytest.mark.parametrize("name", TERMINAL_NAMES)
async def test_each_terminal_name_is_found_anywhere_in_the_label_in_any_case(name: str) -> None:
    # gnome-terminal-server, org.kde.konsole, WindowsTerminal.exe: found inside a class
    asked, _ = await through_the_gate(
        focused_window(f"~/work — org.{name.upper()}-server"),
        tool("type_text", text="ls", enter=True),
    )
    assert asked == ["typing a line that ends with Enter into a terminal runs it"]


@pytest.mark.parametrize("word", TERMINAL_WORDS)
async def test_enter_asks_in_a_window_named_by_each_terminal_word(word: str) -> None:
    asked, ran = await through_the_gate(
        focused_window(f"~/work — {word.upper()}"), tool("hotkey", keys=["enter"])
    )
    assert asked == ["enter runs the typed line in a terminal"] and ran == []


@pytest.mark.parametrize("word", TERMINAL_WORDS)
async def test_each_terminal_word_inside_a_longer_word_is_not_a_terminal(word: str) -> None:
    # "footnotes", "selfish": the short names count only as whole words
    asked, ran = await through_the_gate(
        focused_window(f"{word}notes.txt — L3afpad"), tool("hotkey", keys=["enter"])
    )
    assert asked == [] and ran == ["hotkey"]


@pytest.mark.parametrize("window_class", TERMINAL_CLASSES + LAUNCHER_CLASSES)
async def test_a_line_typed_into_each_window_known_by_its_class_asks(window_class: str) -> None:
    asked, ran = await through_the_gate(
        focused_window(f"drun — {window_class}"), tool("type_text", text="xterm", enter=True)
    )
    assert asked == ["typing a line that ends with Enter into a terminal runs it"] and ran == []


@pytest.mark.parametrize("window_class", TERMINAL_CLASSES + LAUNCHER_CLASSES)
async def test_each_class_name_in_a_title_is_not_that_window(window_class: str) -> None:
    # only the whole window class names it: a document may be called "albert" or "st"
    asked, ran = await through_the_gate(
        focused_window(f"{window_class} — L3afpad"), tool("hotkey", keys=["enter"])
    )
    assert asked == [] and ran == ["hotkey"]


# ── key combinations ──────────────────────────────────────────────────────────


@pytest.mark.parametrize("combo", SYSTEM_COMBOS, ids="+".join)
async def test_each_system_combo_asks_wherever_the_focus_is(combo: frozenset[str]) -> None:
    asked, ran = await through_the_gate(EDITOR, tool("hotkey", keys=keys_of(combo)))
    assert asked == [SYSTEM_COMBOS[combo]] and ran == []


@pytest.mark.parametrize("combo", PASTE_COMBOS, ids="+".join)
async def test_each_paste_combo_asks_wherever_the_focus_is(combo: frozenset[str]) -> None:
    keys = keys_of(combo)
    asked, ran = await through_the_gate(EDITOR, tool("hotkey", keys=keys))
    assert asked == [f"{'+'.join(keys)} pastes the user's clipboard"] and ran == []


@pytest.mark.parametrize("combo", LINE_END_COMBOS, ids="+".join)
async def test_each_line_end_combo_asks_in_a_terminal(combo: frozenset[str]) -> None:
    keys = keys_of(combo)
    asked, ran = await through_the_gate(
        focused_window("alice@box: ~ — XTerm"), tool("hotkey", keys=keys)
    )
    assert asked == [f"{'+'.join(keys)} runs the typed line in a terminal"] and ran == []


@pytest.mark.parametrize("combo", LINE_END_COMBOS, ids="+".join)
async def test_each_line_end_combo_runs_in_an_editor(combo: frozenset[str]) -> None:
    asked, ran = await through_the_gate(EDITOR, tool("hotkey", keys=keys_of(combo)))
    assert asked == [] and ran == ["hotkey"]


# ── the desktop: alt+f4 there shuts down ──────────────────────────────────────


@pytest.mark.parametrize("title", DESKTOP_TITLES)
async def test_alt_f4_asks_on_a_window_titled_as_the_desktop(title: str) -> None:
    asked, ran = await through_the_gate(
        focused_window(f"{title.title()} — explorer"), tool("hotkey", keys=["alt", "f4"])
    )
    assert asked == ["alt+f4 on the desktop opens the shut-down dialog"] and ran == []


@pytest.mark.parametrize("window_class", DESKTOP_CLASSES)
async def test_alt_f4_asks_on_each_desktop_window_class(window_class: str) -> None:
    asked, ran = await through_the_gate(
        focused_window(f"untitled — {window_class}"), tool("hotkey", keys=["alt", "f4"])
    )
    assert asked == ["alt+f4 on the desktop opens the shut-down dialog"] and ran == []


async def test_alt_f4_on_an_ordinary_window_runs() -> None:
    asked, ran = await through_the_gate(EDITOR, tool("hotkey", keys=["alt", "f4"]))
    assert asked == [] and ran == ["hotkey"]


# ── sensitive words and look-alike letters ────────────────────────────────────


def button(name: str) -> Element:
    return Element(2, "button", name, (400, 300, 120, 40))


@pytest.mark.parametrize("word", DEFAULT_SENSITIVE_TARGETS)
async def test_a_click_on_a_button_named_by_each_sensitive_word_asks(word: str) -> None:
    name = f"{word[0].upper()}{word[1:]} now"
    asked, ran = await through_the_gate(
        focused_window("Shop — Firefox", button(name)), tool("click", x=460, y=320)
    )
    assert asked == [f'the target button "{name}" is sensitive ("{word}")'] and ran == []


@pytest.mark.parametrize(("letter", "latin"), LOOKALIKE_LETTERS.items())
async def test_a_sensitive_word_spelled_with_each_lookalike_letter_asks(
    letter: str, latin: str
) -> None:
    word = next(word for word in DEFAULT_SENSITIVE_TARGETS if latin in word)
    name = word.replace(latin, letter, 1)
    assert name != word
    asked, ran = await through_the_gate(
        focused_window("Shop — Firefox", button(name)), tool("click", x=460, y=320)
    )
    assert asked == [f'the target button "{name}" is sensitive ("{word}")'] and ran == []
