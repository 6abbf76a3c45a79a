"""The app's windows go on the AT-SPI bus on a Wayland session (the focus probe's only view of
them there); elsewhere nothing is set, and a value the user set is kept."""

from __future__ import annotations

import sys
from pathlib import Path

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


class MadeApp(Exception):
    """Raised by the stand-in QApplication: the environment it was made under is `env`."""

    def __init__(self, env: dict[str, str]) -> None:
        super().__init__("QApplication made")
        self.env = env


class NoAppYet:
    """Stands in for PySide6's QApplication (the port calibrate makes its window's app with):
    `instance()` is None before any is made, as QCoreApplication::instance() is
    (qtbase src/corelib/kernel/qcoreapplication.h: `static QCoreApplication *instance()
    noexcept { return self; }`, self null until the constructor runs); the constructor
    records the environment Qt would read its platform settings from, and stops there."""

    @staticmethod
    def instance() -> None:
        return None

    def __init__(self, _argv: list[str]) -> None:
        import os

        raise MadeApp(dict(os.environ))


def test_the_calibration_window_goes_on_the_bus_as_the_apps_windows_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # `doctor --calibrate` makes its own QApplication: on Wayland it was not on the AT-SPI bus,
    # so the focus probe could not see that window as the app's own
    import PySide6.QtWidgets

    from desktop_agent.launch.commands import calibrate
    from desktop_agent.settings import Settings

    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    monkeypatch.setenv(QT_ACCESSIBILITY_ON, "")  # recorded, so the test's value is undone
    monkeypatch.delenv(QT_ACCESSIBILITY_ON)
    monkeypatch.setattr(PySide6.QtWidgets, "QApplication", NoAppYet)
    with pytest.raises(MadeApp) as made:
        calibrate(Settings(), tmp_path)
    assert made.value.env.get(QT_ACCESSIBILITY_ON) == "1"
