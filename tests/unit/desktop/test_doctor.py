"""The doctor without a display: every item fails and says how to fix it."""

from __future__ import annotations

import sys

import pytest

from desktop_agent.desktop.doctor import DoctorItem, run_doctor


def test_without_a_display_every_item_fails_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")

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
        "no X display: DISPLAY is not set (a Wayland session without XWayland)",
        "run inside an X11 session (or XWayland), or start Xvfb and export DISPLAY",
    )
    assert all(not item.ok and item.fix for item in items)
