"""The stop through the GlobalShortcuts portal on a Wayland session (desktop/hotkey.py), the
portal the test's own on a private session bus (tests/support/global_shortcuts.py: no desktop
here has one); without it, today's path (the X grab) on the test's X server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from desktop_agent.desktop.hotkey import (
    PORTAL_SHORTCUT_ID,
    HotkeyUnavailable,
    start_global_hotkey,
)
from tests.support.global_shortcuts import GlobalShortcutsPortal, private_session_bus
from tests.support.xdisplay import XSession


@pytest.fixture
def wayland_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A Wayland session (as this process sees it) on a private session bus."""
    with private_session_bus() as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
        monkeypatch.delenv("DESKTOP_AGENT_DESKTOP", raising=False)
        yield address


async def test_only_the_portals_activated_of_our_shortcut_in_our_session_fires_the_stop(
    wayland_bus: str,
) -> None:
    portal = GlobalShortcutsPortal(wayland_bus)
    loop = asyncio.get_running_loop()
    fired = asyncio.Event()
    try:
        handle = await asyncio.to_thread(start_global_hotkey, "ctrl+alt+esc", fired.set, loop)
        try:
            assert handle.armed
            assert portal.bound == [
                {
                    PORTAL_SHORTCUT_ID: {
                        "description": ("s", "Stop desktop-agent (all runs)"),
                        "preferred_trigger": ("s", "CTRL+ALT+Escape"),
                    }
                }
            ]
            # another session's, and another shortcut of ours: not the stop
            portal.activate(PORTAL_SHORTCUT_ID, session="/org/freedesktop/portal/desktop/x")
            portal.activate("something-else")
            portal.activate(PORTAL_SHORTCUT_ID)
            await asyncio.wait_for(fired.wait(), timeout=10)
        finally:
            await asyncio.to_thread(handle.stop)
        assert not handle.armed
        assert len(portal.closed) == 1  # the portal's session is closed
    finally:
        portal.close()


async def test_a_stop_the_desktop_does_not_bind_is_reported_never_a_silent_x_grab(
    wayland_bus: str,
) -> None:
    portal = GlobalShortcutsPortal(wayland_bus, binds=False)
    try:
        with pytest.raises(HotkeyUnavailable, match="did not bind the stop"):
            await asyncio.to_thread(
                start_global_hotkey, "ctrl+alt+esc", lambda: None, asyncio.get_running_loop()
            )
    finally:
        portal.close()


async def test_a_wayland_desktop_without_the_portal_keeps_the_x_grab(
    wayland_bus: str, xsession: XSession
) -> None:
    fired = asyncio.Event()
    handle = await asyncio.to_thread(
        start_global_hotkey, "ctrl+alt+esc", fired.set, asyncio.get_running_loop()
    )
    try:
        assert type(handle).__name__ == "_X11Hotkey"
        process = await asyncio.create_subprocess_exec(
            "xdotool", "key", "ctrl+alt+Escape", env=xsession.child_env()
        )
        assert await process.wait() == 0
        await asyncio.wait_for(fired.wait(), timeout=10)
    finally:
        handle.stop()
