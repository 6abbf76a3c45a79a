"""The timeline model and the image loader on their own."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

from desktop_agent.core.models import StepKind, StepStatus, StepView
from desktop_agent.ui.timeline import (
    ROW_HEIGHT,
    ImageLoader,
    TimelineModel,
    TimelineView,
    format_duration,
)
from tests.fakes import jpeg

pytestmark = pytest.mark.gui

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def step(seq: int, turn: int, kind: StepKind, status: StepStatus, **fields: Any) -> StepView:
    return StepView(
        run_id="r1", seq=seq, index=turn, kind=kind, status=status, started_at=T0, **fields
    )


def test_a_started_then_finished_step_is_one_row_updated_in_place(qtbot: Any) -> None:
    model = TimelineModel()
    with qtbot.waitSignal(model.rowsInserted):
        model.upsert(step(1, 1, StepKind.OBSERVE, StepStatus.RUNNING))
    assert model.index(0, TimelineModel.DURATION).data() == "…"
    with qtbot.waitSignal(model.dataChanged):
        model.upsert(step(1, 1, StepKind.OBSERVE, StepStatus.OK, duration_ms=1500.0))
    assert model.rowCount() == 1
    assert model.index(0, TimelineModel.DURATION).data() == "1.5 s"
    assert model.index(0, TimelineModel.STATUS).data(Qt.ItemDataRole.AccessibleTextRole) == "ok"


def test_an_action_row_borrows_its_turns_screenshot_reason_and_target(qtbot: Any) -> None:
    model = TimelineModel()
    model.upsert(step(1, 1, StepKind.OBSERVE, StepStatus.OK, screenshot="runs/r1/0001.jpg"))
    model.upsert(step(2, 1, StepKind.DECIDE, StepStatus.OK, tool="click", reason="the OK button"))
    action = step(3, 1, StepKind.ACTION, StepStatus.OK, tool="click", target=(5, 6))
    model.upsert(action)
    decide = model.step_at(1)
    assert decide is not None
    assert model.screenshot_of(action) == "runs/r1/0001.jpg"
    assert model.reason_of(action) == "the OK button"
    assert model.target_of(decide) == (5, 6)
    assert model.index(1, TimelineModel.RESULT).data() == "the OK button"


def test_a_rows_strings_are_made_once_per_update_not_per_paint(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    display = TimelineModel._display

    def counted(model: TimelineModel, shown: StepView, column: int) -> str | None:
        made.append(column)
        return display(model, shown, column)

    monkeypatch.setattr(TimelineModel, "_display", counted)
    model = TimelineModel()
    model.upsert(step(1, 1, StepKind.ACTION, StepStatus.RUNNING, tool="click"))
    cells = [model.index(0, column) for column in range(model.columnCount())]
    roles = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
    for _paint in range(3):
        for cell in cells:
            for role in roles:
                cell.data(role)
    assert len(made) == model.columnCount()  # one row's strings, once

    model.upsert(step(1, 1, StepKind.ACTION, StepStatus.OK, tool="click", duration_ms=20.0))
    assert model.index(0, TimelineModel.DURATION).data() == "20 ms"  # made again, new
    assert len(made) == 2 * model.columnCount()


def test_a_failed_step_shows_its_error_as_the_result(qtbot: Any) -> None:
    model = TimelineModel()
    model.upsert(
        step(1, 1, StepKind.ACTION, StepStatus.DENIED, tool="click", error="denied by the user")
    )
    assert model.index(0, TimelineModel.RESULT).data() == "denied by the user"
    assert model.index(0, TimelineModel.RESULT).data(Qt.ItemDataRole.ForegroundRole) is not None


@pytest.mark.parametrize(
    ("ms", "text"), [(None, ""), (12.4, "12 ms"), (2345, "2.3 s"), (125_000, "2:05 min")]
)
def test_durations_read_naturally(ms: float | None, text: str) -> None:
    assert format_duration(ms) == text


def test_the_loader_decodes_off_thread_keeps_within_its_budget_and_knows_missing_files(
    qtbot: Any, tmp_path: Path
) -> None:
    for name in ("a.jpg", "b.jpg", "c.jpg"):
        (tmp_path / name).write_bytes(jpeg(320, 200))
    one_image = QImage(320, 200, QImage.Format.Format_RGB32).sizeInBytes()
    loader = ImageLoader(tmp_path, budget_bytes=2 * one_image)
    try:
        for name in ("a.jpg", "b.jpg", "c.jpg"):
            with qtbot.waitSignal(loader.loaded, timeout=5000) as blocker:
                loader.request(name)
            assert blocker.args == [name]
        assert loader.cached("a.jpg") is None  # least recently used, dropped for c
        assert isinstance(loader.cached("c.jpg"), QImage)
        with qtbot.waitSignal(loader.loaded, timeout=5000):
            key = loader.request("b.jpg", QSize(32, 20))
        thumb = loader.cached("b.jpg", QSize(32, 20))
        assert thumb is not None and (thumb.width(), thumb.height()) == (32, 20)
        with qtbot.waitSignal(loader.loaded, timeout=5000):
            key = loader.request("nope.jpg")
        assert loader.missing(key) and loader.cached("nope.jpg") is None
    finally:
        loader.shutdown()


def wait_shows_a_full_paint(qtbot: Any, view: QWidget) -> None:
    """Wait until the screen shows what a paint of all of `view` draws: the backing store
    (offscreen: what grabWindow reads) against `grab`, a paint of everything."""

    def same() -> bool:
        drawn = view.grab().toImage()
        on_screen = view.screen().grabWindow(view.winId()).toImage()
        return on_screen.convertToFormat(drawn.format()) == drawn

    qtbot.waitUntil(same, timeout=2000)


class _Painted(QObject):
    """The regions a widget was asked to paint (an event filter on it)."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.heights: list[int] = []
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Paint:
            self.heights.append(event.region().boundingRect().height())  # type: ignore[attr-defined]
        return False


def test_an_appended_row_repaints_the_new_rows_and_the_screen_shows_every_row(
    qtbot: Any,
) -> None:
    # the view follows the newest row with it selected, as in a live run; each append must
    # paint at most the rows that changed (the new one and the one that lost the selection),
    # not the whole viewport, and what is on the screen is what a full paint draws
    model = TimelineModel()
    view = TimelineView(model)
    qtbot.addWidget(view)
    view.resize(700, 8 * ROW_HEIGHT)
    view.show()
    qtbot.waitExposed(view)

    def shows_what_a_full_paint_draws() -> None:
        wait_shows_a_full_paint(qtbot, view)

    for seq in range(1, 4):  # fewer than fill the view: nothing scrolls, the new rows paint
        model.upsert(step(seq, seq, StepKind.ACTION, StepStatus.OK, tool="wait", summary=f"{seq}"))
        shows_what_a_full_paint_draws()
    for seq in range(4, 31):
        model.upsert(step(seq, seq, StepKind.ACTION, StepStatus.OK, tool="wait", summary=f"{seq}"))
    view.selectRow(29)
    qtbot.waitUntil(lambda: view.verticalScrollBar().value() == view.verticalScrollBar().maximum())
    shows_what_a_full_paint_draws()  # the scroll to row 30 painted
    painted = _Painted(view.viewport())
    for seq in range(31, 37):
        model.upsert(step(seq, seq, StepKind.ACTION, StepStatus.RUNNING, tool="wait"))
        view.selectRow(seq - 1)
        qtbot.waitUntil(lambda: bool(painted.heights))
        if seq > 31:  # the first append's paint may carry an update of the scroll before it
            assert max(painted.heights) <= 2 * ROW_HEIGHT, painted.heights
        painted.heights.clear()
    qtbot.waitUntil(lambda: view.verticalScrollBar().value() == view.verticalScrollBar().maximum())
    shows_what_a_full_paint_draws()
    model.clear()  # another run on show: laid out and painted whole
    model.upsert(step(1, 1, StepKind.OBSERVE, StepStatus.RUNNING))
    shows_what_a_full_paint_draws()


def test_selecting_rows_leaves_the_column_header_unpainted(qtbot: Any) -> None:
    # the header shares the table's selection model; it shows nothing of the selection, so a
    # new row selected (a live run's newest, at every step) must not repaint it
    model = TimelineModel()
    view = TimelineView(model)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    for seq in range(1, 6):
        model.upsert(step(seq, seq, StepKind.ACTION, StepStatus.OK, tool="wait"))
    view.selectRow(0)
    wait_shows_a_full_paint(qtbot, view)
    header = _Painted(view.horizontalHeader().viewport())
    rows = _Painted(view.viewport())
    for row in range(1, 5):
        view.selectRow(row)
        qtbot.waitUntil(lambda: bool(rows.heights))  # the rows' paint came
        rows.heights.clear()
    assert header.heights == []
