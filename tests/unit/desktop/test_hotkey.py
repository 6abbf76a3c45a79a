"""Hotkey combinations, and the Windows backend (RegisterHotKey) over a fake of user32."""

from __future__ import annotations

import asyncio
import sys

import pytest

from desktop_agent.desktop.hotkey import (
    MOD_ALT,
    MOD_CONTROL,
    MOD_SHIFT,
    MOD_WIN,
    Combo,
    HotkeyUnavailable,
    parse_combo,
    start_global_hotkey,
)
from tests.unit.desktop import fake_ctypes
from tests.unit.desktop.fake_windows import FakeWindows


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


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> FakeWindows:
    fake = FakeWindows()
    monkeypatch.setattr(sys, "platform", "win32")
    fake_ctypes.install(monkeypatch, fake, fake.errors)
    return fake


CTRL_ALT = MOD_CONTROL | MOD_ALT
VK_ESCAPE = 0x1B


async def test_windows_hotkey_reaches_the_loop_from_its_own_thread(windows: FakeWindows) -> None:
    fired = asyncio.Event()

    handle = await asyncio.to_thread(
        start_global_hotkey, "ctrl+alt+esc", fired.set, asyncio.get_running_loop()
    )
    windows.press(VK_ESCAPE, CTRL_ALT)
    await asyncio.wait_for(fired.wait(), 5)

    assert handle.armed
    await asyncio.to_thread(handle.stop)
    await asyncio.to_thread(handle.stop)  # twice is harmless
    assert windows.hotkeys == {}
    assert not handle.armed


async def test_windows_hotkey_needs_no_hook_so_windows_cannot_drop_it_under_load(
    windows: FakeWindows,
) -> None:
    # Windows silently removes a low-level hook that answered later than
    # LowLevelHooksTimeout (what the keyboard package's hook did under load); a registered
    # hotkey is matched by the system and waits in the thread's queue
    presses: list[None] = []
    fired = asyncio.Event()

    def on_press() -> None:
        presses.append(None)
        if len(presses) == 2:
            fired.set()

    handle = await asyncio.to_thread(
        start_global_hotkey, "ctrl+alt+esc", on_press, asyncio.get_running_loop()
    )
    try:
        windows.press(VK_ESCAPE, CTRL_ALT)
        windows.hooks_time_out()
        windows.press(VK_ESCAPE, CTRL_ALT)
        await asyncio.wait_for(fired.wait(), 5)
    finally:
        await asyncio.to_thread(handle.stop)

    assert windows.hooks == {}  # none was ever installed
    assert handle.armed is False  # stopped


async def test_windows_key_names_become_virtual_keys_and_modifiers(windows: FakeWindows) -> None:
    loop = asyncio.get_running_loop()
    combos = ["win+shift+pageup", "ctrl+printscreen", "ctrl+alt+scrolllock", "ctrl+f13",
              "ctrl+shift+f24", "ctrl+menu", "alt+q"]  # fmt: skip

    handles = [await asyncio.to_thread(start_global_hotkey, c, lambda: None, loop) for c in combos]

    assert sorted(windows.hotkeys) == sorted(
        [(MOD_WIN | MOD_SHIFT, 0x21), (MOD_CONTROL, 0x2C), (CTRL_ALT, 0x91), (MOD_CONTROL, 0x7C),
         (MOD_CONTROL | MOD_SHIFT, 0x87), (MOD_CONTROL, 0x5D), (MOD_ALT, ord("Q"))]
    )  # fmt: skip
    for handle in handles:
        await asyncio.to_thread(handle.stop)


async def test_a_windows_key_shortcut_of_the_shell_is_said_reserved_not_taken(
    windows: FakeWindows,
) -> None:
    # issue 37 item 9: error 1409 for win+E is Windows' own, not "another program"
    with pytest.raises(HotkeyUnavailable, match=r"win\+e is reserved by Windows") as refused:
        await asyncio.to_thread(
            start_global_hotkey, "win+e", lambda: None, asyncio.get_running_loop()
        )
    assert "another program" not in str(refused.value)


async def test_windows_hotkey_another_program_holds_is_unavailable(windows: FakeWindows) -> None:
    windows.taken_by_others.add((CTRL_ALT, VK_ESCAPE))

    with pytest.raises(HotkeyUnavailable, match="ctrl\\+alt\\+esc is taken by another program"):
        await asyncio.to_thread(
            start_global_hotkey, "ctrl+alt+esc", lambda: None, asyncio.get_running_loop()
        )


async def test_the_reason_is_the_error_registerhotkey_left_whatever_python_did_since(
    windows: FakeWindows,
) -> None:
    # issue 37 item 9: the interpreter's own work after the failed call clears the thread's
    # error (fake_ctypes: `clobbered`); ctypes' use_last_error copy, taken right after the
    # call, still holds 1409, which a separate GetLastError call no longer reads
    windows.taken_by_others.add((CTRL_ALT, VK_ESCAPE))
    windows.errors.clobbered = True

    with pytest.raises(HotkeyUnavailable, match=r"ctrl\+alt\+esc is taken by another program"):
        await asyncio.to_thread(
            start_global_hotkey, "ctrl+alt+esc", lambda: None, asyncio.get_running_loop()
        )
