"""On several monitors the approval dialog says which monitor the action is on and opens on
the Qt screen holding it (device-independent pixels; ui/placement.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication

from desktop_agent.core.models import ApprovalRequest, MonitorArea, Risk
from desktop_agent.ui.approval import ApprovalDialog
from desktop_agent.ui.dpi import QtScreen
from desktop_agent.ui.placement import screen_index

pytestmark = [pytest.mark.gui]


def request(**changes: Any) -> ApprovalRequest:
    fields: dict[str, Any] = {
        "id": "a1", "run_id": "run1", "index": 3, "tool": "click",
        "args": {"x": 40, "y": 30, "button": "left"}, "reason": "Press Save",
        "risk": Risk.INPUT, "offer_run_grant": True, "timeout_s": 30.0,
    }  # fmt: skip
    fields.update(changes)
    return ApprovalRequest(**fields)


def test_the_dialog_says_which_monitor_and_opens_on_its_screen(qtbot: Any, tmp_path: Path) -> None:
    screen = QGuiApplication.primaryScreen()
    rect = screen.geometry()
    ratio = screen.devicePixelRatio()
    # the one offscreen screen, as the monitor it is in physical pixels
    width, height = round(rect.width() * ratio), round(rect.height() * ratio)
    here = MonitorArea(2, rect.x(), rect.y(), width, height)
    dialog = ApprovalDialog(None, request(monitor=here), tmp_path)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitUntil(dialog.isVisible)

    label = dialog.monitor_label
    assert label.isVisible()
    assert label.text() == f"monitor 2, {width}x{height} at {rect.x()},{rect.y()}"
    centre = dialog.frameGeometry().center()
    assert abs(centre.x() - screen.availableGeometry().center().x()) <= 1
    plain = ApprovalDialog(None, request(), tmp_path)
    qtbot.addWidget(plain)
    plain.open()
    assert not plain.monitor_label.isVisible()


def test_a_monitor_is_found_on_the_screen_holding_its_centre_at_each_scale() -> None:
    # three Qt screens: 100 % at 0,0; 150 % right of it (2880x1620 physical, its size in
    # device-independent px divided by 1.5, its top-left kept); 200 % below the first
    screens = [QtScreen(0, 0, 1920, 1080), QtScreen(1920, 0, 1920, 1080, 1.5),
               QtScreen(0, 1080, 1280, 720, 2.0)]  # fmt: skip
    second = MonitorArea(2, 1920, 0, 2880, 1620)
    third = MonitorArea(3, 0, 1080, 2560, 1440)
    assert screen_index(MonitorArea(1, 0, 0, 1920, 1080), screens) == 0
    # its centre 3360,810 is past the 150 % screen's 1920 device-independent px
    assert screen_index(second, screens) == 1
    assert screen_index(third, screens) == 2
    assert screen_index(MonitorArea(4, 9000, 0, 800, 600), screens) is None
