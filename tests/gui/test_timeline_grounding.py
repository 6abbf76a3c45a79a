"""A turn with a grounding in the timeline and the detail view: the ground row shows its crop,
and the turn's screenshot is drawn with the crop, the first point and the final one (#19)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QImage

from desktop_agent.core.models import StepKind, StepStatus, StepView
from desktop_agent.ui.timeline import TimelineModel
from desktop_agent.ui.widgets import (
    FIRST_POINT_COLOR,
    MARKER_COLOR,
    Grounded,
    render_marked,
)

pytestmark = pytest.mark.gui

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def step(seq: int, kind: StepKind, **fields: Any) -> StepView:
    return StepView(
        run_id="r1", seq=seq, index=1, kind=kind, status=StepStatus.OK, started_at=T0, **fields
    )


def turn(model: TimelineModel) -> tuple[StepView, StepView]:
    model.upsert(step(1, StepKind.OBSERVE, screenshot="runs/r1/0001.jpg"))
    model.upsert(step(2, StepKind.DECIDE, tool="click", args={"x": 150, "y": 115}))
    ground = step(
        3,
        StepKind.GROUND,
        tool="click",
        args={"target": "Pay now", "x": 150, "y": 115, "crop": [100, 60, 320, 180]},
        target=(160, 118),
        screenshot="runs/r1/0001.ground.jpg",
        summary="refined 150,115 → 160,118 on a 320x180 crop at 100,60",
    )
    model.upsert(ground)
    action = step(4, StepKind.ACTION, tool="click", args={"x": 160, "y": 118}, target=(160, 118))
    model.upsert(action)
    return ground, action


def test_every_row_of_a_grounded_turn_shows_the_screen_with_both_points_and_the_crop(
    qtbot: Any,
) -> None:
    model = TimelineModel()
    ground, action = turn(model)

    for row in (ground, action):
        assert model.screenshot_of(row) == "runs/r1/0001.jpg"  # not the crop: the screen
        assert model.target_of(row) == (160, 118)
        assert model.grounding_of(row) == ((150, 115), (100, 60, 320, 180))
    # the ground row's own thumbnail is the crop it looked at
    assert model.index(2, TimelineModel.KIND).data() == "ground"


def test_a_turn_without_grounding_draws_only_its_target(qtbot: Any) -> None:
    model = TimelineModel()
    model.upsert(step(1, StepKind.OBSERVE, screenshot="runs/r1/0001.jpg"))
    action = step(2, StepKind.ACTION, tool="click", args={"element": 3}, target=(5, 6))
    model.upsert(action)

    assert model.grounding_of(action) == (None, None)


def _near(image: QImage, x: int, y: int, color: QColor, radius: int = 2) -> bool:
    for dx in range(-radius, radius + 1):
        for dy in range(-radius, radius + 1):
            seen = image.pixelColor(x + dx, y + dy)
            if (
                abs(seen.red() - color.red()) < 40
                and abs(seen.green() - color.green()) < 40
                and abs(seen.blue() - color.blue()) < 40
            ):
                return True
    return False


def test_the_first_point_and_the_final_point_are_both_drawn(qtbot: Any) -> None:
    screen = QImage(640, 360, QImage.Format.Format_RGB32)
    screen.fill(QColor(255, 255, 255))

    drawn = render_marked(
        screen, (400, 200), QSize(640, 360), grounded=Grounded((200, 100), (150, 50, 320, 180))
    )

    # the first point's grey ring (radius 7) and the final point's red ring (radius 12)
    assert _near(drawn, 200 + 7, 100, FIRST_POINT_COLOR)
    assert _near(drawn, 400 + 12, 200, MARKER_COLOR)
    # the crop's dashed frame on its left edge somewhere between its corners
    assert any(_near(drawn, 150, y, QColor(40, 110, 230), radius=1) for y in range(60, 220, 4))
    # nothing is drawn where neither point nor frame is
    assert drawn.pixelColor(20, 300) == QColor(255, 255, 255)


def test_the_acting_panel_says_it_looks_closer_for_the_target(qtbot: Any) -> None:
    from desktop_agent.ui.acting import describe_step

    ground, _ = turn(TimelineModel())

    assert describe_step(ground, {}) == "Turn 1 · looking closer for Pay now"
