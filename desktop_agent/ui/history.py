"""Run history: a table model of RunViews (newest first), a filter, and the panel showing them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QSortFilterProxyModel,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLineEdit,
    QMenu,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.core.statuses import RunStatus
from desktop_agent.ui.icons import status_icon
from desktop_agent.ui.text import one_line, plain_tooltip

if TYPE_CHECKING:
    from datetime import datetime

    from desktop_agent.core.events import TaskLoopEvent
    from desktop_agent.core.models import RunView
    from desktop_agent.ui.engine_client import EngineClient

Index = QModelIndex | QPersistentModelIndex


class HistoryModel(QAbstractTableModel):
    """Runs, newest first (by creation time); `upsert` keeps a run's row current."""

    STATUS, GOAL, TIME = range(3)
    HEADERS = (
        str(QT_TRANSLATE_NOOP("HistoryModel", "Status")),
        str(QT_TRANSLATE_NOOP("HistoryModel", "Goal")),
        str(QT_TRANSLATE_NOOP("HistoryModel", "Started")),
    )
    #: a run's status as the table shows it (the filter also matches the English word)
    STATUS_NAMES = {
        RunStatus.QUEUED: str(QT_TRANSLATE_NOOP("HistoryModel", "queued")),
        RunStatus.RUNNING: str(QT_TRANSLATE_NOOP("HistoryModel", "running")),
        RunStatus.PAUSED: str(QT_TRANSLATE_NOOP("HistoryModel", "paused")),
        RunStatus.COMPLETED: str(QT_TRANSLATE_NOOP("HistoryModel", "completed")),
        RunStatus.FAILED: str(QT_TRANSLATE_NOOP("HistoryModel", "failed")),
        RunStatus.STOPPED: str(QT_TRANSLATE_NOOP("HistoryModel", "stopped")),
        RunStatus.INTERRUPTED: str(QT_TRANSLATE_NOOP("HistoryModel", "interrupted")),
    }
    RUN_ROLE = Qt.ItemDataRole.UserRole + 1
    #: what the filter matches against: status, goal, model and id
    FILTER_ROLE = Qt.ItemDataRole.UserRole + 2

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runs: list[RunView] = []

    def set_runs(self, runs: list[RunView]) -> None:
        self.beginResetModel()
        self._runs = sorted(runs, key=lambda run: run.created_at, reverse=True)
        self.endResetModel()

    def upsert(self, run: RunView) -> None:
        for row, known in enumerate(self._runs):
            if known.id == run.id:
                self._runs[row] = run
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))
                return
        row = 0
        while row < len(self._runs) and self._runs[row].created_at > run.created_at:
            row += 1
        self.beginInsertRows(QModelIndex(), row, row)
        self._runs.insert(row, run)
        self.endInsertRows()

    def on_run_event(self, event: TaskLoopEvent) -> None:
        """Every event of every run of this process (RunsState's): a run's row follows its
        start, pauses and end."""
        from desktop_agent.core.events import RunFinished, RunPaused, RunResumed, RunStarted

        if isinstance(event, RunStarted | RunPaused | RunResumed | RunFinished):
            self.upsert(event.run)

    def runs(self) -> list[RunView]:
        return list(self._runs)

    def run_of(self, run_id: str) -> RunView | None:
        row = self.row_of(run_id)
        return self._runs[row] if row >= 0 else None

    def row_of(self, run_id: str) -> int:
        for row, run in enumerate(self._runs):
            if run.id == run_id:
                return row
        return -1

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._runs)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(  # noqa: N802
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.tr(self.HEADERS[section])
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        run = self._runs[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.STATUS:
                return self.tr(self.STATUS_NAMES[run.status])
            if column == self.GOAL:
                return one_line(run.goal)
            return format_time(run.started_at or run.created_at)
        if role == Qt.ItemDataRole.DecorationRole and column == self.STATUS:
            return status_icon(run.status.value)
        if role == Qt.ItemDataRole.ToolTipRole:
            # the goal may come from an API caller, the message is the model's: text only
            return plain_tooltip(_tooltip(run))
        if role == self.RUN_ROLE:
            return run
        if role == self.FILTER_ROLE:
            shown = self.tr(self.STATUS_NAMES[run.status])
            return f"{run.status.value} {shown} {run.goal} {run.model} {run.id}"
        return None


class HistoryFilter(QSortFilterProxyModel):
    """Keeps the runs whose status, goal, model or id contain every word of the filter text."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._words: list[str] = []

    def set_text(self, text: str) -> None:
        self.beginFilterChange()
        self._words = text.casefold().split()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:  # noqa: N802
        if not self._words:
            return True
        model = self.sourceModel()
        haystack = str(
            model.data(model.index(source_row, 0, source_parent), HistoryModel.FILTER_ROLE)
        ).casefold()
        return all(word in haystack for word in self._words)


class HistoryTable(QTableView):
    """The history's table. Its status and time columns are as wide as their widest content
    can be — every status with its icon, a time of another day (`format_time`) — measured once
    per font with the table's own delegate on sample runs, and the visible rows (the header's
    `resizeContentsPrecision` 0), not over every row: Qt's ResizeToContents measured up to 1000
    rows, and with the 500 runs the window loads at start that was 2 × ~250 ms of the GUI
    thread (benchmarks/README.md, "Issue 22, the app usable after its paint")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.horizontalHeader().setResizeContentsPrecision(0)  # the visible rows only
        self._widest: dict[tuple[str, int], int] = {}

    def sizeHintForColumn(self, column: int) -> int:  # noqa: N802
        hint = super().sizeHintForColumn(column)
        model = self.model()
        if column not in (HistoryModel.STATUS, HistoryModel.TIME) or not model.rowCount():
            return hint  # no run listed yet: nothing to measure (the first paint)
        key = (self.font().key(), column)
        if key not in self._widest:
            self._widest[key] = self._widest_content(column)
        return max(hint, self._widest[key])

    def _widest_content(self, column: int) -> int:
        from datetime import datetime

        from PySide6.QtWidgets import QStyleOptionViewItem

        from desktop_agent.core.models import RunView  # loaded: a run is listed

        another_day = datetime(2088, 8, 28, 8, 58).astimezone()
        samples = HistoryModel()
        samples.set_runs(
            [
                RunView(
                    id=status.value,
                    goal="",
                    status=status,
                    stop_reason=None,
                    step_count=0,
                    max_steps=1,
                    max_failures=1,
                    allowed_tools=(),
                    model="",
                    base_url="",
                    created_at=another_day,
                )  # fmt: skip
                for status in RunStatus
            ]
        )
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        delegate = self.itemDelegate()
        widest = max(
            delegate.sizeHint(option, samples.index(row, column)).width()
            for row in range(samples.rowCount())
        )
        return widest + 1 if self.showGrid() else widest  # as QTableView's own hint


class HistoryPanel(QWidget):
    """The run history with a filter box; choosing a run asks the window to show it.

    Signals:
        run_selected(str): the id of the run the user picked.
        save_routine_requested(str): "Save as routine…" in a completed run's context menu.

    Attributes:
        model: every run known (newest first).
        proxy: the runs the filter lets through.
        filter_edit: the filter box.
        view: the table.
    """

    run_selected = Signal(str)
    save_routine_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = HistoryModel(self)
        self.proxy = HistoryFilter(self)
        self.proxy.setSourceModel(self.model)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("historyFilter")
        self.filter_edit.setPlaceholderText(self.tr("Filter runs (status, goal, model)…"))
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setAccessibleName(self.tr("Filter the run history"))
        self.view = HistoryTable(self)
        self.view.setObjectName("history")
        self.view.setAccessibleName(self.tr("Run history"))
        self.view.setModel(self.proxy)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setWordWrap(False)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(HistoryModel.STATUS, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(HistoryModel.GOAL, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(HistoryModel.TIME, QHeaderView.ResizeMode.ResizeToContents)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.view)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.filter_edit.textChanged.connect(self.on_filter_changed)
        self.view.activated.connect(self.on_activated)
        self.view.clicked.connect(self.on_activated)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self.on_context_menu)

    def context_menu(self, run: RunView) -> QMenu:
        """The menu of a run's row: Save as routine… (a completed run only)."""
        menu = QMenu(self)
        save = menu.addAction(self.tr("Save as &routine…"))
        save.setEnabled(run.status is RunStatus.COMPLETED)
        save.setToolTip(self.tr("Run its steps again later without asking the model"))
        save.triggered.connect(lambda: self.save_routine_requested.emit(run.id))
        return menu

    @Slot(QPoint)
    def on_context_menu(self, point: QPoint) -> None:
        # a click's import (the models are loaded once a run is listed): not at the first paint
        from desktop_agent.core.models import RunView

        run = self.view.indexAt(point).data(HistoryModel.RUN_ROLE)
        if isinstance(run, RunView):
            self.context_menu(run).popup(self.view.viewport().mapToGlobal(point))

    @Slot(str)
    def on_filter_changed(self, text: str) -> None:
        self.proxy.set_text(text)

    @Slot(QModelIndex)
    def on_activated(self, index: QModelIndex) -> None:
        from desktop_agent.core.models import RunView

        run = index.data(HistoryModel.RUN_ROLE)
        if isinstance(run, RunView):
            self.run_selected.emit(run.id)

    def visible_runs(self) -> list[RunView]:
        """The runs the filter lets through, top to bottom."""
        return [
            self.proxy.index(row, 0).data(HistoryModel.RUN_ROLE)
            for row in range(self.proxy.rowCount())
        ]

    async def refresh(self, client: EngineClient, selected: str | None = None) -> None:
        """Read the newest 500 runs from the store again (DesktopAgentError when it cannot
        be read), keeping `selected`'s row highlighted."""
        self.model.set_runs(await client.ask(client.host.records.list_runs, 500))
        if selected is not None:
            self.select_run(selected)

    def select_run(self, run_id: str) -> None:
        """Highlight a run's row without emitting run_selected (e.g. the run just started)."""
        row = self.model.row_of(run_id)
        if row < 0:
            return
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if index.isValid():
            blocked = self.view.blockSignals(True)
            self.view.selectRow(index.row())
            self.view.blockSignals(blocked)


def format_time(value: datetime | None) -> str:
    # today by the value's own class: the datetime module is not imported by the first paint
    if value is None:
        return ""
    local = value.astimezone()
    today = value.now().astimezone().date()
    return f"{local:%H:%M:%S}" if local.date() == today else f"{local:%Y-%m-%d %H:%M}"


def _tooltip(run: RunView) -> str:
    translate = QCoreApplication.translate
    status = translate("HistoryModel", HistoryModel.STATUS_NAMES[run.status])
    status += f" ({run.stop_reason.value})" if run.stop_reason else ""
    lines = [run.goal, status]
    turns = QCoreApplication.translate("HistoryModel", "{count} of {limit} turns").format(
        count=run.step_count, limit=run.max_steps
    )
    lines.append(f"{turns} · {run.model}")
    if run.message:
        lines.append(run.message)
    lines.append(translate("HistoryModel", "id {run}").format(run=run.id))
    return "\n".join(lines)
