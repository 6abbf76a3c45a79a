"""The step detail and the acting panel show the model's and the screen's words as text."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop_agent.core.models import StepKind, StepStatus, StepView
from desktop_agent.ui.acting_panel import ActingPanel
from desktop_agent.ui.step_detail import StepDetail
from desktop_agent.ui.timeline import ImageLoader

pytestmark = [
    pytest.mark.gui,
    pytest.mark.usefixtures("collect_qt_garbage_on_the_gui_thread"),
    pytest.mark.qt_log_ignore(r"^This plugin does not support (propagateSizeHints|raise)\(\)"),
]

RICH = '<h1>All clear</h1><a href="https://evil.example">ok</a>'


def test_the_step_detail_shows_reason_arguments_and_result_literally(
    qtbot: Any, tmp_path: Path
) -> None:
    loader = ImageLoader(tmp_path)
    detail = StepDetail(loader)
    qtbot.addWidget(detail)
    step = StepView(
        run_id="r1",
        seq=3,
        index=1,
        kind=StepKind.ACTION,
        status=StepStatus.OK,
        started_at=datetime(2026, 5, 1, tzinfo=UTC),
        tool="click",
        args={"element": 4, "note": "\u202eevil"},
        summary=f"clicked button {RICH!r}\x1b[31m",
    )
    try:
        detail.show_step(step, reason=f"{RICH}\n\u2066next")

        labels = detail.labels
        assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels.values())
        assert labels["reason"].text() == f"{RICH}\n\\u2066next"
        assert labels["result"].text() == f"clicked button {RICH!r}\\x1b[31m"
        assert '"note": "\\u202eevil"' in labels["args"].text()
    finally:
        loader.shutdown()


def test_the_acting_panel_shows_goal_and_step_literally(qtbot: Any) -> None:
    panel = ActingPanel()
    qtbot.addWidget(panel)
    panel.show_for(f"<b>{RICH}")
    panel.set_step("1/20 type_text \u202e<i>x</i>")

    assert panel.goal_label.textFormat() == Qt.TextFormat.PlainText
    assert panel.step_label.textFormat() == Qt.TextFormat.PlainText
    assert panel.goal_label.text().startswith("<b><h1>All")
    assert panel.step_label.text() == "1/20 type_text \\u202e<i>x</i>"
