"""Where a person reads an action, it is the call's sentence (core/sentences.py): the
timeline's Action column, the step's detail, the acting panel; the JSON stays near."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop_agent.core.models import ElementRef, StepKind, StepStatus, StepView
from desktop_agent.ui.acting import describe_step
from desktop_agent.ui.step_detail import StepDetail
from desktop_agent.ui.timeline import TimelineModel

pytestmark = [pytest.mark.gui]

#: the screen's name for a field, written as markup: it stays text everywhere
FIELD = ElementRef("focus", "edit", "<b>Name</b>", "Sign up — Firefox", (1, 2, 3, 4))
TYPED = StepView(
    run_id="r1", seq=3, index=2, kind=StepKind.ACTION, status=StepStatus.OK,
    started_at=datetime(2026, 5, 1, tzinfo=UTC), tool="type_text",
    args={"text": "Ada\u202e", "enter": True}, element=FIELD,
)  # fmt: skip
SAID = (
    "Type “Ada\\u202e” into the text field “<b>Name</b>” in “Sign up — Firefox”, then press Enter"
)


def test_the_timeline_says_an_action_in_words_and_keeps_its_json_in_the_tooltip(
    qtbot: Any,
) -> None:
    model = TimelineModel()
    model.upsert(TYPED)

    assert model.headerData(TimelineModel.ACTION, Qt.Orientation.Horizontal) == "Action"
    assert model.index(0, TimelineModel.ACTION).data() == SAID
    tip = model.index(0, TimelineModel.ACTION).data(Qt.ItemDataRole.ToolTipRole)
    assert tip == 'type_text {"text":"Ada\\u202e","enter":true}'  # the call as the program sees it


def test_the_step_detail_says_the_action_above_its_json(detail: StepDetail) -> None:
    detail.show_step(TYPED, reason="")

    assert detail.labels["action"].text() == SAID
    assert detail.labels["action"].textFormat() is Qt.TextFormat.PlainText
    assert '"enter": true' in detail.labels["args"].text()


def test_the_acting_panel_says_the_action_in_words() -> None:
    assert describe_step(TYPED, {}) == f"Turn 2 · {SAID}"
