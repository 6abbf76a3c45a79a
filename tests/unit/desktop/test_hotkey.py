"""Hotkey combinations, and the Windows backend over a fake `keyboard` module."""

from __future__ import annotations

import asyncio
import sys
import types
from collections.abc import Callable

import pytest

from desktop_agent.desktop.hotkey import (
    Combo,
    HotkeyUnavailable,
    parse_combo,
    start_global_hotkey,
)


@pytest.mark.parametrize(
    ("text", "combo"),
    [
        ("ctrl+alt+esc", Combo(frozenset({"ctrl", "alt"}), "esc")),
        ("Control + Alt + Escape", Combo(frozenset({"ctrl", "alt"}), "esc")),
        ("super+shift+F12", Combo(frozenset({"win", "shift"}), "f12")),
        ("ctrl+q", Combo(frozenset({"ctrl"}), "q")),
    ],
)
def test_combos_parse_with_aliases(text: str, combo: Combo) -> None:
    assert parse_combo(text) == combo


def test_combo_prints_modifiers_in_a_fixed_order() -> None:
    assert str(parse_combo("alt+ctrl+esc")) == "ctrl+alt+esc"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "invalid hotkey '': write it like 'ctrl\\+alt\\+esc'"),
        ("ctrl++esc", "write it like"),
        ("ctrl+alt+foo", "unknown key 'foo'"),
        ("a+esc", "'a' is not a modifier"),
        ("ctrl+alt", "it must end with a non-modifier key"),
        ("esc", "a global hotkey needs a modifier"),
    ],
)
def test_bad_combos_are_refused_naming_them(text: str, message: str) -> None:
    with pytest.raises(HotkeyUnavailable, match=message):
        parse_combo(text)


def test_x11_hotkey_without_a_display_is_unavailable_not_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(HotkeyUnavailable, match="DISPLAY is not set"):
            start_global_hotkey("ctrl+alt+esc", lambda: None, loop)
    finally:
        loop.close()


#: key names the real `keyboard` package knows on Windows (_winkeyboard's official virtual
#: keys) and the aliases of its _canonical_names.py that our names can reach; it raises
#: ValueError("Key ... is not mapped to any known key.") for anything else
KEYBOARD_KNOWS = {
    *"abcdefghijklmnopqrstuvwxyz0123456789",
    *(f"f{n}" for n in range(1, 25)),
    "esc", "enter", "tab", "space", "backspace", "delete", "insert", "home", "end",
    "page up", "page down", "up", "down", "left", "right", "pause", "print screen",
    "scroll lock", "caps lock", "num lock", "menu", "ctrl", "alt", "shift", "windows",
}  # fmt: skip
KEYBOARD_ALIASES = {
    "escape": "esc", "return": "enter", "del": "delete", "control": "ctrl", "win": "windows",
    "pagedown": "page down", "pageup": "page up", "scrlk": "scroll lock",
    "prtscn": "print screen", "snapshot": "print screen", "ins": "insert",
}  # fmt: skip


class FakeKeyboard(types.ModuleType):
    def __init__(self) -> None:
        super().__init__("keyboard")
        self.hotkeys: dict[str, Callable[[], None]] = {}

    def add_hotkey(self, combo: str, callback: Callable[[], None]) -> str:
        for part in combo.split("+"):
            if KEYBOARD_ALIASES.get(part, part) not in KEYBOARD_KNOWS:
                raise ValueError(f"Key {part!r} is not mapped to any known key.")
        self.hotkeys[combo] = callback
        return combo

    def remove_hotkey(self, handle: str) -> None:
        del self.hotkeys[handle]


@pytest.fixture
def keyboard(monkeypatch: pytest.MonkeyPatch) -> FakeKeyboard:
    fake = FakeKeyboard()
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "keyboard", fake)
    return fake


async def test_windows_hotkey_reaches_the_loop_from_the_hook_thread(keyboard: FakeKeyboard) -> None:
    fired = asyncio.Event()
    loop = asyncio.get_running_loop()

    handle = start_global_hotkey("ctrl+alt+esc", fired.set, loop)
    # the keyboard package calls back on its own hook thread
    await asyncio.to_thread(keyboard.hotkeys["ctrl+alt+esc"])
    await asyncio.wait_for(fired.wait(), 1)
    handle.stop()
    handle.stop()

    assert keyboard.hotkeys == {}


async def test_windows_key_names_are_translated(keyboard: FakeKeyboard) -> None:
    handle = start_global_hotkey("win+shift+pageup", lambda: None, asyncio.get_running_loop())

    assert list(keyboard.hotkeys) == ["shift+windows+page up"]
    handle.stop()


async def test_windows_key_names_are_the_keyboard_packages_own(keyboard: FakeKeyboard) -> None:
    loop = asyncio.get_running_loop()
    combos = ["ctrl+printscreen", "ctrl+alt+scrolllock", "ctrl+f13", "ctrl+shift+f24"]

    handles = [start_global_hotkey(combo, lambda: None, loop) for combo in combos]

    assert list(keyboard.hotkeys) == [
        "ctrl+print screen",
        "ctrl+alt+scroll lock",
        "ctrl+f13",
        "ctrl+shift+f24",
    ]
    for handle in handles:
        handle.stop()


async def test_windows_hotkey_the_package_refuses_is_unavailable(
    keyboard: FakeKeyboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a keyboard layout without an F13 key: the package refuses the name
    monkeypatch.setitem(globals(), "KEYBOARD_KNOWS", KEYBOARD_KNOWS - {"f13"})

    with pytest.raises(HotkeyUnavailable, match="cannot register the stop hotkey ctrl\\+f13"):
        start_global_hotkey("ctrl+f13", lambda: None, asyncio.get_running_loop())


async def test_windows_without_the_keyboard_package_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "keyboard", None)

    with pytest.raises(HotkeyUnavailable, match="pip install keyboard"):
        start_global_hotkey("ctrl+alt+esc", lambda: None, asyncio.get_running_loop())
