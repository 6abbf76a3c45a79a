"""The step detail's text fields: selectable with the mouse while the pointer is over them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication

from desktop_agent.core.models import StepKind, StepStatus, StepView
from desktop_agent.ui.step_detail import StepDetail
from desktop_agent.ui.timeline import ImageLoader

pytestmark = [pytest.mark.gui]

SELECTABLE = Qt.TextInteractionFlag.TextSelectableByMouse
NONE = Qt.TextInteractionFlag.NoTextInteraction


def test_the_fields_are_selectable_while_the_pointer_is_over_them_or_text_is_selected(
    qtbot: Any, tmp_path: Path
) -> None:
    # a selectable label lays its text out in a document at every change, twice the cost of
    # a plain one, and a live run changes the fields with every step: the fields are plain
    # text until the pointer comes to them
    loader = ImageLoader(tmp_path)
    detail = StepDetail(loader)
    qtbot.addWidget(detail)
    step = StepView(
        run_id="r1",
        seq=1,
        index=1,
        kind=StepKind.ACTION,
        status=StepStatus.OK,
        started_at=datetime(2026, 5, 1, tzinfo=UTC),
        tool="click",
        summary="clicked",
    )
    labels = list(detail.labels.values())
    reason = detail.labels["reason"]
    fields = reason.parentWidget()
    try:
        detail.show_step(step, reason="the Save button")
        assert {label.textInteractionFlags() for label in labels} == {NONE}

        point = QPointF(4, 4)
        QApplication.sendEvent(fields, QEnterEvent(point, point, point))
        assert {label.textInteractionFlags() for label in labels} == {SELECTABLE}
        reason.setSelection(0, 3)
        assert reason.selectedText() == "the"

        QApplication.sendEvent(fields, QEvent(QEvent.Type.Leave))
        assert {label.textInteractionFlags() for label in labels} == {SELECTABLE}, "kept"

        reason.setSelection(0, 0)  # the selection given up (a click)
        QApplication.sendEvent(fields, QEvent(QEvent.Type.Leave))
        assert {label.textInteractionFlags() for label in labels} == {NONE}
    finally:
        loader.shutdown()
