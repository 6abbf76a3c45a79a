"""The history table's narrow columns: sized to fit every run, without measuring every row."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem

from desktop_agent.core.models import RunStatus
from desktop_agent.ui.history import HistoryModel, HistoryPanel
from tests.gui.test_history_and_keys import run_view

pytestmark = [pytest.mark.gui]


class AskedRows(HistoryModel):
    """A HistoryModel that notes the rows the view asks to display."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[int] = set()

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            self.asked.add(index.row())
        return super().data(index, role)


def test_the_status_and_time_columns_fit_runs_off_screen_without_measuring_every_row(
    qtbot: Any,
) -> None:
    """The window loads up to 500 runs as it starts: Qt's ResizeToContents measured every row
    (up to 1000) for the two narrow columns, ~250 ms of the GUI thread twice. Now the rows on
    screen are measured, and the widest a status or a time can be: the interrupted runs of
    another day far below still fit."""
    today = datetime.now().astimezone()
    recent = [run_view(n, f"goal {n}", RunStatus.COMPLETED) for n in range(100)]
    older = [run_view(n, f"goal {n}", RunStatus.INTERRUPTED) for n in range(100, 500)]
    runs = [replace(run, created_at=today - timedelta(seconds=n)) for n, run in enumerate(recent)]
    runs += [
        replace(run, created_at=today - timedelta(days=40, minutes=n))
        for n, run in enumerate(older)
    ]
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    model = AskedRows()
    panel.model = model
    panel.proxy.setSourceModel(model)
    panel.resize(500, 400)
    panel.show()
    qtbot.waitExposed(panel)

    model.set_runs(runs)
    panel.view.executeDelayedItemsLayout()  # the layout after the reset, now
    QApplication.processEvents()
    assert model.asked, "the rows on screen are shown"
    assert len(model.asked) < 100, f"{len(model.asked)} rows measured"
    header = panel.view.horizontalHeader()

    option = QStyleOptionViewItem()
    panel.view.initViewItemOption(option)
    delegate = panel.view.itemDelegate()
    last = panel.proxy.index(499, HistoryModel.TIME)
    assert last.data().count("-") == 2  # another day: the long form
    for column in (HistoryModel.STATUS, HistoryModel.TIME):
        needed = delegate.sizeHint(option, panel.proxy.index(499, column)).width()
        assert header.sectionSize(column) >= needed
