"""Which platform theme the app asks Qt for (app.qt_theme_arguments): Qt's own GNOME theme where
Qt would take GTK 3's, the desktop read as Qt reads it, the user's choice kept."""

from __future__ import annotations

import sys

import pytest

from desktop_agent.app import qt_theme_arguments

pytestmark = pytest.mark.skipif(
    sys.platform in ("win32", "darwin"), reason="Qt's Unix themes: X11 and Wayland only"
)

GNOME = ["-platformtheme", "gnome"]


@pytest.mark.parametrize(
    "env",
    [
        {"XDG_CURRENT_DESKTOP": "GNOME"},
        {"XDG_CURRENT_DESKTOP": "ubuntu:GNOME"},
        {"XDG_CURRENT_DESKTOP": "X-Cinnamon"},
        {"XDG_CURRENT_DESKTOP": "XFCE"},
        {"XDG_CURRENT_DESKTOP": "MATE", "KDE_FULL_SESSION": "true"},
        {"GNOME_DESKTOP_SESSION_ID": "this-is-deprecated"},
        {"DESKTOP_SESSION": "gnome"},
        {"DESKTOP_SESSION": "/usr/share/xsessions/xfce"},
    ],
)
def test_where_qt_would_take_gtks_theme_the_app_asks_for_qts_gnome_theme(
    env: dict[str, str],
) -> None:
    assert qt_theme_arguments(env, []) == GNOME


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"XDG_CURRENT_DESKTOP": "KDE"},
        {"XDG_CURRENT_DESKTOP": "LXQt"},
        {"KDE_FULL_SESSION": "true", "DESKTOP_SESSION": "gnome"},
        {"DESKTOP_SESSION": "ubuntu"},  # Qt reads no more from it (its XDG_CURRENT_DESKTOP says)
        {"XDG_CURRENT_DESKTOP": "", "DESKTOP_SESSION": "plasma"},
    ],
)
def test_elsewhere_qt_chooses(env: dict[str, str]) -> None:
    assert qt_theme_arguments(env, []) == []


def test_a_theme_the_user_chose_is_kept() -> None:
    gnome = {"XDG_CURRENT_DESKTOP": "GNOME"}
    assert qt_theme_arguments(gnome | {"QT_QPA_PLATFORMTHEME": "gtk3"}, []) == []
    assert qt_theme_arguments(gnome, ["-platformtheme", "gtk3"]) == []
    assert qt_theme_arguments(gnome, ["--platformtheme", "gtk3"]) == []
