"""Mixed DPI on Windows (per-monitor v2): four monitors at 100/125/150/200 %, one left of the
primary; a click in the model's image lands on the aimed physical pixel of each, and Qt's own
windows are told apart from physical pixels around each screen's own origin (issue 33 item 3)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QRect

from desktop_agent.desktop import win_input
from desktop_agent.desktop.geometry import mapping_for, order_monitors
from desktop_agent.ui.acting_panel import ActingPanel
from desktop_agent.ui.dpi import QtScreen, physical_rect, to_logical, to_physical

#: name → (physical left, top, width, height, scale): what EnumDisplayMonitors reports to a
#: per-monitor-v2 process (physical rectangles) and the scale Settings shows
LAYOUT = {
    "left 150 %": (-2880, 0, 2880, 1620, 1.5),
    "primary 100 %": (0, 0, 1920, 1080, 1.0),
    "right 125 %": (1920, 0, 2560, 1440, 1.25),
    "far right 200 %": (4480, -200, 3840, 2160, 2.0),
}
IMAGE = (1280, 720)


def mss_monitors() -> list[dict[str, Any]]:
    """mss's `monitors` on Windows (mss/windows/gdi.py:282-331, 10.2.0): [0] the union, then
    each EnumDisplayMonitors rectangle as left/top/width/height, is_primary from
    MONITORINFOF_PRIMARY; in a DPI-aware process the rectangles are physical."""
    each = [
        {"left": x, "top": t, "width": w, "height": h, "is_primary": x == t == 0}
        for x, t, w, h, _ in LAYOUT.values()
    ]
    left = min(m["left"] for m in each)
    top = min(m["top"] for m in each)
    right = max(m["left"] + m["width"] for m in each)
    bottom = max(m["top"] + m["height"] for m in each)
    union = {"left": left, "top": top, "width": right - left, "height": bottom - top}
    return [union, *each]


def qt_screens() -> list[QtScreen]:
    """QScreen.geometry() as Qt 6 reports it per-monitor v2: the native top-left kept, the
    size divided by the factor (qhighdpiscaling_p.h fromNativeScreenGeometry)."""
    return [QtScreen(x, t, round(w / s), round(h / s), s) for x, t, w, h, s in LAYOUT.values()]  # noqa: E741


def landed(dx: int, dy: int, desk: tuple[int, int, int, int]) -> tuple[int, int]:
    """Where Windows puts an absolute MOUSEEVENTF_VIRTUALDESK move: origin + n * size // 65536
    (learn.microsoft.com, "MOUSEINPUT structure", Remarks)."""
    left, top, width, height = desk
    return left + dx * width // 65536, top + dy * height // 65536


@pytest.mark.parametrize("name", list(LAYOUT))
def test_a_click_in_the_image_lands_on_the_aimed_physical_pixel_of_each_monitor(
    name: str,
) -> None:
    monitors = order_monitors(mss_monitors())
    union = monitors[0]
    desk = (union.left, union.top, union.width, union.height)
    left, top, width, height, _ = LAYOUT[name]
    monitor = next(m for m in monitors[1:] if (m.left, m.top) == (left, top))
    mapping = mapping_for(monitor, IMAGE)
    for image_point in ((0, 0), (640, 360), (1279, 719), (37, 700)):
        x, y = mapping.to_screen(*image_point)
        aimed = (
            left + int(image_point[0] * width / IMAGE[0]),
            top + int(image_point[1] * height / IMAGE[1]),
        )
        assert abs(x - aimed[0]) <= 2 and abs(y - aimed[1]) <= 2  # within one image pixel
        event = win_input.pointer_input(x, y, desk)
        assert landed(event.mi.dx, event.mi.dy, desk) == (x, y)
        assert left <= x < left + width and top <= y < top + height


def test_qt_points_map_to_physical_pixels_around_each_screens_own_origin() -> None:
    screens = qt_screens()
    right = screens[2]  # 125 % at x = 1920: Qt's geometry 1920, 0, 2048 x 1152
    assert (right.left, right.width) == (1920, 2048)
    assert to_physical(right, 1920 + 100, 80) == (1920 + 125, 100)
    left = screens[0]  # 150 % at x = -2880
    assert to_physical(left, -2880 + 100, 100) == (-2880 + 150, 150)
    for screen in screens:
        native = screen.native
        for px, py in ((native[0], native[1]), (native[0] + 999, native[1] + 555)):
            found = to_logical(screens, px, py)
            assert found is not None and found[0] == screen
            # back within the one logical pixel that covers it (no finer place exists)
            back = to_physical(screen, found[1], found[2])
            assert 0 <= px - back[0] < screen.ratio and 0 <= py - back[1] < screen.ratio
    assert to_logical(screens, 20_000, 0) is None  # on no monitor: never placed elsewhere


def test_a_dialog_placed_for_a_physical_point_sits_over_it_on_the_200_percent_monitor() -> None:
    screens = qt_screens()
    target = (4480 + 3000, -200 + 1000)  # an action's point on the far-right monitor
    found = to_logical(screens, *target)
    assert found is not None
    screen, x, y = found
    assert screen.ratio == 2.0 and (x, y) == (4480 + 1500, -200 + 500)
    assert physical_rect(screen, (x, y, 400, 300)) == (*target, 800, 600)


class _Screen:
    """What ActingPanel reads of its QScreen."""

    def __init__(self, qt: QtScreen) -> None:
        self._qt = qt

    def geometry(self) -> QRect:
        return QRect(self._qt.left, self._qt.top, self._qt.width, self._qt.height)

    def devicePixelRatio(self) -> float:  # noqa: N802 - Qt's name
        return self._qt.ratio


def test_the_acting_panel_on_a_125_percent_monitor_right_of_the_primary_is_where_it_is(
    qapp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # on old main its Qt rectangle was multiplied by 1.25 whole: x 2400 physical became
    # 3000, the planner told to ignore a part of the screenshot the panel is not on
    panel = ActingPanel()
    right = qt_screens()[2]
    monkeypatch.setattr(panel, "isVisible", lambda: True)
    monkeypatch.setattr(panel, "screen", lambda: _Screen(right))
    monkeypatch.setattr(panel, "frameGeometry", lambda: QRect(1920 + 384, 16, 320, 120))
    try:
        assert panel.geometry_in_screen() == (1920 + 480, 20, 400, 150)
    finally:
        panel.deleteLater()
