"""The doctor without a display: every item fails and says how to fix it; on a Wayland session
it checks the portal backend, part by part."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from desktop_agent.desktop.doctor import DoctorItem, run_doctor


def test_without_a_display_every_item_fails_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    monkeypatch.delenv("DESKTOP_AGENT_DESKTOP", raising=False)

    items = run_doctor()

    assert [item.name for item in items] == [
        "display",
        "capture",
        "input",
        "clipboard",
        "inventory",
        "hotkey",
    ]
    assert items[0] == DoctorItem(
        "display",
        False,
        "no X display: DISPLAY is not set",
        "run inside an X11 session (or XWayland), or start Xvfb and export DISPLAY",
    )
    assert all(not item.ok and item.fix for item in items)


def test_a_wayland_session_without_a_portal_says_so_part_by_part(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """XDG_SESSION_TYPE=wayland picks the portal backend: the doctor names it and says each
    part's state with its fix, never "no X display" (old main's only word on Wayland)."""
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("DESKTOP_AGENT_DESKTOP", raising=False)
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus'}")

    items = run_doctor()

    assert [item.name for item in items] == [
        "display",
        "capture",
        "input",
        "clipboard",
        "inventory",
        "hotkey",
        "takeover",
    ]
    display = items[0]
    assert not display.ok and "Wayland session wayland-0" in display.detail
    assert "xdg-desktop-portal" in display.detail and "no D-Bus session bus" in display.detail
    assert "xdg-desktop-portal-gnome" in display.fix and "X11 session" in display.fix
    assert all(not item.ok and item.fix for item in items)
    assert "stop-all" in items[5].fix


def test_on_wayland_the_doctor_names_the_capture_way_and_the_path_that_holds_the_stop(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A portal without ScreenCast but with Screenshot: capture says the Screenshot portal;
    one with GlobalShortcuts: the hotkey line says the portal holds the stop (no fix)."""
    from desktop_agent.desktop.doctor import wayland_doctor
    from desktop_agent.desktop.portal import PortalParts

    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus'}")
    items = {
        item.name: item
        for item in wayland_doctor(
            PortalParts(0, 0, 0, 0, shortcuts_version=1, screenshot_version=1)
        )
    }

    assert items["display"].ok and "Screenshot v1" in items["display"].detail
    assert items["capture"].ok and items["capture"].detail.startswith("Screenshot portal v1")
    assert not items["input"].ok and items["input"].fix
    hotkey = items["hotkey"]
    assert hotkey.ok and "GlobalShortcuts portal v1 holds the stop" in hotkey.detail

    screencast = {
        item.name: item for item in wayland_doctor(PortalParts(1, 3, 4, 1, screenshot_version=2))
    }
    assert "ScreenCast of the monitor" in screencast["capture"].detail
    assert "where it cannot start, the Screenshot portal v2" in screencast["capture"].detail
    assert not screencast["hotkey"].ok and "stop-all" in screencast["hotkey"].fix
