"""The global stop hotkey on a real X server (XGrabKey), driven by xdotool."""

from __future__ import annotations

import asyncio

import pytest

from desktop_agent.desktop.hotkey import HotkeyUnavailable, start_global_hotkey
from tests.desktop.conftest import Editor
from tests.support.xdisplay import XSession


async def press(xsession: XSession, combo: str) -> None:
    process = await asyncio.create_subprocess_exec(
        "xdotool", "key", combo, env=xsession.child_env()
    )
    assert await process.wait() == 0


def num_lock_on(xsession: XSession) -> bool:
    """Whether the server's keyboard state has the modifier Num_Lock is mapped to."""
    from Xlib import XK, display

    connection = display.Display(xsession.display)
    try:
        code = connection.keysym_to_keycode(XK.string_to_keysym("Num_Lock"))
        masks = [
            1 << i for i, codes in enumerate(connection.get_modifier_mapping()) if code in codes
        ]
        state = connection.screen().root.query_pointer().mask
        return any(state & mask for mask in masks)
    finally:
        connection.close()


async def test_hotkey_fires_on_ctrl_alt_escape_while_an_editor_has_the_focus(
    xsession: XSession, l3afpad: Editor
) -> None:
    fired = asyncio.Event()
    loop = asyncio.get_running_loop()
    threads: list[asyncio.AbstractEventLoop] = []

    def on_stop() -> None:
        threads.append(asyncio.get_running_loop())
        fired.set()

    handle = start_global_hotkey("ctrl+alt+esc", on_stop, loop)
    try:
        await press(xsession, "ctrl+alt+Escape")
        await asyncio.wait_for(fired.wait(), 5)
    finally:
        handle.stop()

    assert threads == [loop]  # delivered on the loop, not on the listener thread


async def test_hotkey_fires_with_num_lock_on(xsession: XSession) -> None:
    assert not num_lock_on(xsession)
    fired = asyncio.Event()
    handle = start_global_hotkey("ctrl+alt+esc", fired.set, asyncio.get_running_loop())
    try:
        await press(xsession, "Num_Lock")
        assert num_lock_on(xsession)  # else this would be the plain case again
        await press(xsession, "ctrl+alt+Escape")
        await asyncio.wait_for(fired.wait(), 5)
    finally:
        await press(xsession, "Num_Lock")
        handle.stop()

    assert not num_lock_on(xsession)  # left as found for the other tests


async def test_other_keys_do_not_fire_it(xsession: XSession) -> None:
    fired = asyncio.Event()
    other = asyncio.Event()
    loop = asyncio.get_running_loop()
    # (not ctrl+alt+F1-F12: XKB turns those into VT switches)
    marker = start_global_hotkey("ctrl+alt+m", other.set, loop)
    handle = start_global_hotkey("ctrl+alt+esc", fired.set, loop)
    try:
        await press(xsession, "ctrl+Escape")
        await press(xsession, "alt+shift+Escape")
        # the keys are handled in order: once the marker fired, the others were seen
        await press(xsession, "ctrl+alt+m")
        await asyncio.wait_for(other.wait(), 5)
    finally:
        handle.stop()
        marker.stop()

    assert not fired.is_set()


async def test_a_combination_already_grabbed_is_reported_not_a_crash() -> None:
    loop = asyncio.get_running_loop()
    first = start_global_hotkey("ctrl+alt+esc", lambda: None, loop)
    try:
        with pytest.raises(HotkeyUnavailable, match="ctrl\\+alt\\+esc is taken by another program"):
            start_global_hotkey("ctrl+alt+esc", lambda: None, loop)
    finally:
        first.stop()

    # stopping released the grab: it can be taken again
    start_global_hotkey("ctrl+alt+esc", lambda: None, loop).stop()


def test_a_key_this_keyboard_lacks_is_reported(xsession: XSession) -> None:
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(HotkeyUnavailable, match="'f24' is not on this keyboard"):
            start_global_hotkey("ctrl+f24", lambda: None, loop)
    finally:
        loop.close()


async def test_a_hotkey_whose_x_server_goes_away_says_it_is_not_armed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support.xdisplay import start_xsession

    session = await asyncio.to_thread(start_xsession, 640, 480, atspi=False)
    changes: list[tuple[bool, str]] = []
    told = asyncio.Event()

    def on_change(armed: bool, why: str) -> None:
        changes.append((armed, why))
        told.set()

    try:
        monkeypatch.setenv("DISPLAY", session.display)
        handle = await asyncio.to_thread(
            start_global_hotkey,
            "ctrl+alt+f9",
            lambda: None,
            asyncio.get_running_loop(),
            on_change=on_change,
        )
        assert handle.armed
    finally:
        await asyncio.to_thread(session.close)  # the X server ends under the listener
    await asyncio.wait_for(told.wait(), 10)
    await asyncio.to_thread(handle.stop)

    ((armed, why),) = changes
    assert not armed and not handle.armed
    assert why.startswith("its X11 listener ended:")
