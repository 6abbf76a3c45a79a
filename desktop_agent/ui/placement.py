"""Where the app's own windows open on a desktop of several monitors: on the action's."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QWidget

from desktop_agent.core.models import MonitorArea
from desktop_agent.ui.dpi import QtScreen, shape_of


def screen_index(monitor: MonitorArea, screens: Sequence[QtScreen]) -> int | None:
    """The index of the screen holding the centre of `monitor` (physical px), or None; the
    match is in physical pixels (ui/dpi.py: Qt keeps a screen's native top-left)."""
    x = monitor.left + monitor.width // 2
    y = monitor.top + monitor.height // 2
    return next((i for i, screen in enumerate(screens) if screen.holds_native(x, y)), None)


def screen_of(monitor: MonitorArea | None) -> QScreen | None:
    """The Qt screen holding `monitor`'s centre; None when none does (a monitor unplugged
    since the action was seen) or there is no monitor."""
    if monitor is None:
        return None
    screens = QGuiApplication.screens()
    index = screen_index(monitor, [shape_of(screen) for screen in screens])
    return None if index is None else screens[index]


def place_on_monitor(widget: QWidget, monitor: MonitorArea | None) -> bool:
    """Centre `widget` on the Qt screen of `monitor` (device-independent px); False, and the
    widget left where Qt put it, when no screen holds it (or there is no monitor)."""
    screen = screen_of(monitor)
    if screen is None:
        return False
    area = screen.availableGeometry()
    frame = widget.frameGeometry()
    frame.moveCenter(area.center())
    widget.move(frame.topLeft())
    return True
