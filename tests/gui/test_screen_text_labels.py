"""The step detail, the timeline, the history and the acting panel show the model's and the
screen's words as text, tooltips included (Qt takes a tooltip that looks like HTML for it);
the step detail's fields are selectable while the pointer is over them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication

from desktop_agent.core.models import RunStatus, RunView, StepKind, StepStatus, StepView
from desktop_agent.ui.acting_panel import ActingPanel
from desktop_agent.ui.history import HistoryModel
from desktop_agent.ui.step_detail import StepDetail
from desktop_agent.ui.timeline import TimelineModel

pytestmark = [pytest.mark.gui]

RICH = '<h1>All clear</h1><a href="https://evil.example">ok</a>'
ESCAPED = '&lt;h1&gt;All clear&lt;/h1&gt;&lt;a href="https://evil.example"&gt;ok&lt;/a&gt;'
T0 = datetime(2026, 5, 1, tzinfo=UTC)


def action(**fields: Any) -> StepView:
    return StepView(
        run_id="r1",
        seq=3,
        index=1,
        kind=StepKind.ACTION,
        status=StepStatus.OK,
        started_at=datetime(2026, 5, 1, tzinfo=UTC),
        tool="click",
        **fields,
    )


def test_the_step_detail_shows_reason_arguments_and_result_literally(detail: StepDetail) -> None:
    step = action(
        args={"element": 4, "note": "\u202eevil"}, summary=f"clicked button {RICH!r}\x1b[31m"
    )
    detail.show_step(step, reason=f"{RICH}\n\u2066next")

    labels = detail.labels
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels.values())
    assert labels["reason"].text() == f"{RICH}\n\\u2066next"
    assert labels["result"].text() == f"clicked button {RICH!r}\\x1b[31m"
    assert '"note": "\\u202eevil"' in labels["args"].text()


def test_the_step_details_fields_are_selectable_while_the_pointer_is_over_them(
    detail: StepDetail,
) -> None:
    # a selectable label lays its text out in a document at every change, twice the cost of
    # a plain one, and a live run changes the fields with every step: the fields are plain
    # text until the pointer comes to them, and stay selectable while text is selected
    selectable, plain = (
        Qt.TextInteractionFlag.TextSelectableByMouse,
        Qt.TextInteractionFlag.NoTextInteraction,
    )
    labels = list(detail.labels.values())
    reason = detail.labels["reason"]
    fields = reason.parentWidget()
    assert fields is not None
    detail.show_step(action(summary="clicked"), reason="the Save button")
    assert {label.textInteractionFlags() for label in labels} == {plain}

    point = QPointF(4, 4)
    QApplication.sendEvent(fields, QEnterEvent(point, point, point))
    assert {label.textInteractionFlags() for label in labels} == {selectable}
    reason.setSelection(0, 3)
    assert reason.selectedText() == "the"

    QApplication.sendEvent(fields, QEvent(QEvent.Type.Leave))
    assert {label.textInteractionFlags() for label in labels} == {selectable}, "kept"

    reason.setSelection(0, 0)  # the selection given up (a click)
    QApplication.sendEvent(fields, QEvent(QEvent.Type.Leave))
    assert {label.textInteractionFlags() for label in labels} == {plain}


def test_the_acting_panel_shows_goal_and_step_literally(qtbot: Any) -> None:
    panel = ActingPanel()
    qtbot.addWidget(panel)
    panel.show_for(f"<b>{RICH}")
    panel.set_step("1/20 type_text \u202e<i>x</i>")

    assert panel.goal_label.textFormat() == Qt.TextFormat.PlainText
    assert panel.step_label.textFormat() == Qt.TextFormat.PlainText
    assert panel.goal_label.text().startswith("<b><h1>All")
    assert panel.step_label.text() == "1/20 type_text \\u202e<i>x</i>"
    assert panel.step_label.toolTip() == "<qt>1/20 type_text \\u202e&lt;i&gt;x&lt;/i&gt;</qt>"


def test_timeline_cells_and_tooltips_show_the_models_reason_literally(qtbot: Any) -> None:
    model = TimelineModel()
    model.upsert(
        StepView(
            run_id="r1",
            seq=2,
            index=1,
            kind=StepKind.DECIDE,
            status=StepStatus.OK,
            started_at=T0,
            tool="click",
            summary="click",
            reason=f"{RICH}\n\u202eevil",
        )
    )
    tool_tip = model.index(0, TimelineModel.ACTION).data(Qt.ItemDataRole.ToolTipRole)
    assert tool_tip == f"<qt>{ESCAPED}<br>\\u202eevil</qt>"
    result = model.index(0, TimelineModel.RESULT).data()
    assert result == f"click — {RICH} \\u202eevil"


def test_history_tooltips_show_goal_and_message_literally(qtbot: Any) -> None:
    model = HistoryModel()
    run = RunView(
        id="r1",
        goal=f"{RICH}\u2066",
        status=RunStatus.COMPLETED,
        stop_reason=None,
        step_count=1,
        max_steps=20,
        max_failures=3,
        allowed_tools=(),
        model="m",
        base_url="http://m/v1",
        created_at=T0,
        message="<b>done</b>",
    )
    model.set_runs([run])
    tip = model.index(0, HistoryModel.GOAL).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith(f"<qt>{ESCAPED}\\u2066<br>completed<br>")
    assert "&lt;b&gt;done&lt;/b&gt;" in tip
    assert model.index(0, HistoryModel.GOAL).data() == f"{RICH}\\u2066"
