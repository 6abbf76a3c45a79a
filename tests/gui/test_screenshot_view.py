"""The screenshot view (step detail, approval dialog): what it paints and what a paint costs."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QImage

from desktop_agent.ui import widgets
from desktop_agent.ui.widgets import ScreenshotView

pytestmark = pytest.mark.gui


def white(width: int, height: int) -> QImage:
    image = QImage(QSize(width, height), QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    return image


def test_a_screenshot_is_scaled_once_per_image_and_size_not_at_every_paint(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scaled: list[QSize] = []
    scale = widgets.scaled_to_fit

    def counted(image: QImage, *args: Any) -> Any:
        scaled.append(image.size())
        return scale(image, *args)

    monkeypatch.setattr(widgets, "scaled_to_fit", counted)
    view = ScreenshotView()
    qtbot.addWidget(view)
    view.resize(400, 200)
    view.set_image(white(200, 100), (150, 25))

    shot = view.grab().toImage()
    view.grab()
    assert len(scaled) == 1  # the second paint drew the kept pixmap
    # the image fills the view at 2x with the target marked on it: (150, 25) → (301, 51)
    centre = shot.pixelColor(301, 51)
    assert centre.red() > 200 and centre.green() < 80, centre.name()
    assert shot.pixelColor(50, 150).name() == "#ffffff"

    view.resize(600, 300)
    shot = view.grab().toImage()
    assert len(scaled) == 2  # a new size: scaled anew, the target where it now is
    centre = shot.pixelColor(451, 76)
    assert centre.red() > 200 and centre.green() < 80, centre.name()

    view.set_image(white(100, 100), None)
    view.grab()
    assert scaled == [QSize(200, 100), QSize(200, 100), QSize(100, 100)]


def test_the_same_screenshot_and_target_again_asks_for_no_paint(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the step detail sets its screenshot for each step of a turn, the turn's one image
    view = ScreenshotView()
    qtbot.addWidget(view)
    image = white(200, 100)
    view.set_image(image, (150, 25))
    asked: list[int] = []
    monkeypatch.setattr(view, "update", lambda: asked.append(1))

    view.set_image(image, (150, 25))
    assert asked == []
    view.set_image(image, (10, 10))  # another target on it
    view.set_image(white(200, 100), (10, 10))  # another image, equal in every pixel
    assert asked == [1, 1]
    assert view.target == (10, 10)
