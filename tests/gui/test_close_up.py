"""The approval dialog's picture: a close-up of the target, magnified, marked, the field a
text goes to outlined; the whole screen one click away."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QImage

from desktop_agent.core.models import ApprovalRequest, ElementRef, Risk
from desktop_agent.ui.approval import ApprovalDialog
from desktop_agent.ui.close_up import MIN_ZOOM_WIDTH, OUTLINE_COLOR, zoom_region

pytestmark = [pytest.mark.gui]

SCREEN = QSize(1280, 720)


def test_the_close_up_is_centred_on_the_target_and_kept_inside_the_screen() -> None:
    assert zoom_region(SCREEN, (640, 360), None) == (460, 259, 360, 202)
    # near a corner: moved inside, never cut
    assert zoom_region(SCREEN, (5, 700), None) == (0, 518, 360, 202)


def test_the_close_up_holds_the_whole_element_with_room_around_it() -> None:
    left, top, width, height = zoom_region(SCREEN, None, (100, 100, 500, 30)) or (0, 0, 0, 0)
    assert width >= 500 + 2 * 80 and left <= 100 and left + width >= 600
    assert top <= 100 and top + height >= 130


def test_no_close_up_without_a_target_or_when_it_would_be_the_whole_screen() -> None:
    assert zoom_region(SCREEN, None, None) is None
    assert zoom_region(SCREEN, None, (0, 0, 1200, 700)) is None
    assert zoom_region(QSize(MIN_ZOOM_WIDTH, 200), (10, 10), None) is None


def _screenshot(tmp_path: Path) -> str:
    image = QImage(SCREEN, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    (tmp_path / "runs" / "run1").mkdir(parents=True)
    assert image.save(str(tmp_path / "runs/run1/0003.png"))
    return "runs/run1/0003.png"


def _orange(image: QImage) -> int:
    found = 0
    for y in range(0, image.height(), 2):
        for x in range(0, image.width(), 2):
            color = image.pixelColor(x, y)
            near = abs(color.red() - OUTLINE_COLOR.red()) + abs(
                color.green() - OUTLINE_COLOR.green()
            )
            found += near < 60 and color.blue() < 80
    return found


def test_a_typed_texts_field_is_outlined_in_a_close_up_and_the_whole_screen_is_a_click_away(
    qtbot: Any, tmp_path: Path
) -> None:
    field = ElementRef("focus", "edit", "Name", "Sign up", (600, 340, 120, 24))
    request = ApprovalRequest(
        "a1", "run1", 3, "type_text", {"text": "Ada"}, "", Risk.INPUT, True, 30.0,
        screenshot=_screenshot(tmp_path), element=field,
    )  # fmt: skip
    dialog = ApprovalDialog(None, request, tmp_path)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    view, button = dialog.close_up.view, dialog.close_up.whole_button
    qtbot.waitUntil(lambda: view.image is not None, timeout=3000)

    assert view.zoom is not None and view.outline == (600, 340, 120, 24)
    assert button.isVisible() and button.text() == "Whole screen"
    close = view.grab().toImage()
    button.click()
    assert view.zoom is None and button.text() == "Close-up"
    whole = view.grab().toImage()
    # the outline drawn magnified is longer than on the whole screen
    assert _orange(close) > 2 * _orange(whole) > 0
