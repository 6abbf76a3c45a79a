"""The app's windows go on the AT-SPI bus on a Wayland session (the focus probe's only view of
them there); elsewhere nothing is set, and a value the user set is kept."""

from __future__ import annotations

import sys

import pytest

from desktop_agent.host.display import QT_ACCESSIBILITY_ON, windows_on_the_accessibility_bus

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux desktops")


def test_on_wayland_qt_is_told_to_put_the_windows_on_the_bus() -> None:
    env = {"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}
    windows_on_the_accessibility_bus(env)
    assert env[QT_ACCESSIBILITY_ON] == "1"


def test_on_x11_nothing_is_set_and_the_users_value_is_kept() -> None:
    env = {"XDG_SESSION_TYPE": "x11", "DISPLAY": ":0"}
    windows_on_the_accessibility_bus(env)
    assert QT_ACCESSIBILITY_ON not in env
    env = {"XDG_SESSION_TYPE": "wayland", QT_ACCESSIBILITY_ON: "0"}
    windows_on_the_accessibility_bus(env)
    assert env[QT_ACCESSIBILITY_ON] == "0"
