"""The step timeline: a table model of StepViews, its view, and the off-thread image loader."""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractTableModel,
    QCoreApplication,
    QEvent,
    QItemSelection,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSize,
    Qt,
    QThreadPool,
    QTimer,
    Signal,
)
from PySide6.QtGui import QImage, QImageReader, QPixmap, QRegion
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from desktop_agent.core.statuses import StepKind, StepStatus
from desktop_agent.core.text import printable
from desktop_agent.ui.icons import status_color, status_icon
from desktop_agent.ui.text import in_words, plain_tooltip

if TYPE_CHECKING:
    from desktop_agent.core.models import StepView

log = logging.getLogger(__name__)

THUMB_SIZE = QSize(72, 40)
ROW_HEIGHT = THUMB_SIZE.height() + 6

Index = QModelIndex | QPersistentModelIndex


class ImageLoader(QObject):
    """Reads screenshots from the data dir on a thread pool and keeps the recent ones.

    The GUI thread never decodes a file: `request` queues the work and returns at once,
    `loaded` fires (queued onto the GUI thread) when the image is ready, and `cached`
    answers from memory afterwards, within a memory budget (least recently used out).
    Thumbnails are decoded at their small size (QImageReader.setScaledSize), which for
    JPEG skips most of the work.

    Signals:
        loaded(str): the image with this key is in the cache now, or could not be read
            (then `missing(key)` is True).

    Attributes:
        data_dir: the directory screenshot paths are relative to.
    """

    loaded = Signal(str)
    _decoded = Signal(str, object)

    def __init__(
        self,
        data_dir: Path | None = None,
        *,
        budget_bytes: int = 96 * 1024 * 1024,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.data_dir = data_dir
        self._budget = budget_bytes
        self._bytes = 0
        self._cache: OrderedDict[str, QImage | QPixmap] = OrderedDict()
        self._pending: set[str] = set()
        self._missing: set[str] = set()
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(2)
        self._closed = False
        self._decoded.connect(self.on_decoded)

    @staticmethod
    def key(relative: str, size: QSize | None) -> str:
        return f"{relative}@{size.width()}x{size.height()}" if size else relative

    def cached(self, relative: str, size: QSize | None = None) -> QImage | QPixmap | None:
        """The image if it is in memory (a QPixmap for thumbnails, a QImage at full size)."""
        key = self.key(relative, size)
        image = self._cache.get(key)
        if image is not None:
            self._cache.move_to_end(key)
        return image

    def missing(self, key: str) -> bool:
        return key in self._missing

    def request(self, relative: str, size: QSize | None = None) -> str:
        """Load `relative` (scaled to fit `size`, or at full size) off the GUI thread; its key."""
        key = self.key(relative, size)
        if (
            self._closed
            or self.data_dir is None
            or key in self._cache
            or key in self._pending
            or key in self._missing
        ):
            return key
        self._pending.add(key)
        path = str(self.data_dir / relative)
        self._pool.start(lambda: self._decode(key, path, size))
        return key

    def _decode(self, key: str, path: str, size: QSize | None) -> None:
        # runs on a pool thread: no widgets, no QPixmap here
        reader = QImageReader(path)
        if size is not None and reader.size().isValid():
            reader.setScaledSize(reader.size().scaled(size, Qt.AspectRatioMode.KeepAspectRatio))
        image = reader.read()
        with contextlib.suppress(RuntimeError):  # the loader was deleted while this ran
            self._decoded.emit(key, None if image.isNull() else image)

    def on_decoded(self, key: str, image: QImage | None) -> None:
        self._pending.discard(key)
        if self._closed:
            return
        if image is None:
            self._missing.add(key)
            log.info("image %s is missing or unreadable", key)
            self.loaded.emit(key)
            return
        # thumbnails are drawn often and small: keep them as pixmaps, ready to paint
        kept = QPixmap.fromImage(image) if "@" in key else image
        self._cache[key] = kept
        self._bytes += _size(kept)
        # the least recently used go first; a full screenshot is ~4 MB, a thumbnail ~12 kB
        while self._bytes > self._budget and len(self._cache) > 1:
            _, dropped = self._cache.popitem(last=False)
            self._bytes -= _size(dropped)
        self.loaded.emit(key)

    def clear(self) -> None:
        self._cache.clear()
        self._bytes = 0
        self._missing.clear()

    def shutdown(self) -> None:
        """Drop queued work and wait for the jobs running now (they are short)."""
        self._closed = True
        self._pool.clear()
        self._pool.waitForDone()


def _size(image: QImage | QPixmap) -> int:
    if isinstance(image, QImage):
        return image.sizeInBytes()
    return image.width() * image.height() * max(image.depth(), 8) // 8


_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_DECORATION = int(Qt.ItemDataRole.DecorationRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_ACCESSIBLE = int(Qt.ItemDataRole.AccessibleTextRole)
_STEP = int(Qt.ItemDataRole.UserRole) + 1
#: the roles the timeline answers, as plain ints (a set lookup, no enum work per call)
_ANSWERED = frozenset(
    (_DISPLAY, _DECORATION, _TOOLTIP, _FOREGROUND, _ALIGNMENT, _ACCESSIBLE, _STEP)
)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


class _RowText(NamedTuple):
    """One row's display strings and tooltips, made once per step update: Qt asks a visible
    cell for them on every paint. (A named tuple: the dataclasses module is not needed before
    the window's first paint.)"""

    display: tuple[str | None, ...]
    tooltip: tuple[str | None, ...]


class TimelineModel(QAbstractTableModel):
    """The steps of the run on show, one row per stored step row, in `seq` order.

    `upsert` adds a row for a new `seq` and updates the row of a known one, so
    step_started + step_finished (live) and step_finished alone (replay) give the
    same rows.

    Attributes:
        loader: where thumbnails come from (None: no thumbnails).
    """

    STATUS, TURN, KIND, ACTION, RESULT, DURATION, SCREEN = range(7)
    HEADERS = (
        "",
        str(QT_TRANSLATE_NOOP("TimelineModel", "Turn")),
        str(QT_TRANSLATE_NOOP("TimelineModel", "Kind")),
        str(QT_TRANSLATE_NOOP("TimelineModel", "Action")),
        str(QT_TRANSLATE_NOOP("TimelineModel", "Result")),
        str(QT_TRANSLATE_NOOP("TimelineModel", "Time")),
        str(QT_TRANSLATE_NOOP("TimelineModel", "Screen")),
    )
    STEP_ROLE = _STEP

    def __init__(self, loader: ImageLoader | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.loader = loader
        self._steps: list[StepView] = []
        self._texts: list[_RowText | None] = []  # per row, made on its first paint
        self._row_of_seq: dict[int, int] = {}
        self._rows_of_turn: dict[int, list[int]] = {}  # the step detail asks per turn
        self._screens: dict[int, str] = {}  # turn → its observation's screenshot
        self._thumb_rows: dict[str, list[int]] = {}  # loader key → rows showing it
        if loader is not None:
            loader.loaded.connect(self.on_image_loaded)

    # ── content ──────────────────────────────────────────────────────────────

    def clear(self) -> None:
        self.beginResetModel()
        self._steps.clear()
        self._texts.clear()
        self._row_of_seq.clear()
        self._rows_of_turn.clear()
        self._screens.clear()
        self._thumb_rows.clear()
        self.endResetModel()

    def upsert(self, step: StepView) -> int:
        """Show `step`: a new row, or the existing row of its `seq` updated; the row."""
        if step.screenshot and step.kind is not StepKind.GROUND:  # a ground row's is its crop
            self._screens[step.index] = step.screenshot
        row = self._row_of_seq.get(step.seq)
        if row is not None:
            self._steps[row] = step
            self._texts[row] = None
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))
            return row
        row = len(self._steps)
        self.beginInsertRows(QModelIndex(), row, row)
        self._steps.append(step)
        self._texts.append(None)
        self._row_of_seq[step.seq] = row
        self._rows_of_turn.setdefault(step.index, []).append(row)
        self.endInsertRows()
        return row

    def steps(self) -> list[StepView]:
        return list(self._steps)

    def step_at(self, row: int) -> StepView | None:
        return self._steps[row] if 0 <= row < len(self._steps) else None

    def screenshot_of(self, step: StepView) -> str | None:
        """The screenshot a step was decided or done on: its own, else its turn's observation
        (a ground row's own image is the crop it looked at: its turn's screen is shown, with
        the crop drawn on it)."""
        if step.kind is StepKind.GROUND:
            return self._screens.get(step.index) or step.screenshot
        return step.screenshot or self._screens.get(step.index)

    def grounding_of(
        self, step: StepView
    ) -> tuple[tuple[int, int] | None, tuple[int, int, int, int] | None]:
        """(the first point, the crop box) of the turn's grounding, for any row of the turn:
        the detail view draws where the model looked and where it first aimed."""
        for other in self.turn_steps(step.index):
            if other.kind is StepKind.GROUND and other.target is not None:
                first = other.args.get("first") or [other.args.get("x"), other.args.get("y")]
                crop = other.args.get("crop")
                return _ints(first, 2), _ints(crop, 4)  # type: ignore[return-value]
        return None, None

    def turn_steps(self, turn: int) -> list[StepView]:
        """The rows of one turn (observe, decide, action), in order."""
        return [self._steps[row] for row in self._rows_of_turn.get(turn, ())]

    def reason_of(self, step: StepView) -> str | None:
        """The model's reason for a step's turn (kept on the turn's decide row)."""
        if step.reason:
            return step.reason
        for other in self.turn_steps(step.index):
            if other.kind is StepKind.DECIDE and other.reason:
                return other.reason
        return None

    def target_of(self, step: StepView) -> tuple[int, int] | None:
        """The point the turn's action aimed at, for any row of that turn."""
        if step.target is not None:
            return step.target
        for other in self.turn_steps(step.index):
            if other.target is not None:
                return other.target
        return None

    # ── Qt model interface ───────────────────────────────────────────────────

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._steps)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(  # noqa: N802
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            header = self.HEADERS[section]
            return QCoreApplication.translate("TimelineModel", header) if header else header
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return self.tr("Status") if section == self.STATUS else None
        return None

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        # Qt asks each visible cell for seven roles on every paint: those this model has
        # nothing for are answered first, before any other work
        if role not in _ANSWERED or not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role in (_DISPLAY, _TOOLTIP):
            texts = self._texts[row] or self._make_texts(row)
            return (texts.display if role == _DISPLAY else texts.tooltip)[column]
        step = self._steps[row]
        if role == _DECORATION:
            if column == self.STATUS:
                return status_icon(step.status.value)
            if column == self.SCREEN:
                return self._thumbnail(index.row(), step)
            return None
        if role == _FOREGROUND:
            return status_color(step.status.value) if column == self.RESULT and step.error else None
        if role == _ALIGNMENT:
            return _RIGHT if column in (self.TURN, self.DURATION) else None
        if role == _ACCESSIBLE:
            return step.status.value if column == self.STATUS else None
        return step  # STEP_ROLE

    def _make_texts(self, row: int) -> _RowText:
        step = self._steps[row]
        columns = range(len(self.HEADERS))
        # args, reasons and results are the model's words and the screen's names: text only
        shown = (self._display(step, column) for column in columns)
        texts = _RowText(
            display=tuple(printable(text) if text else text for text in shown),
            tooltip=tuple(plain_tooltip(self._tooltip(step, column)) for column in columns),
        )
        self._texts[row] = texts
        return texts

    def _display(self, step: StepView, column: int) -> str | None:
        if column == self.TURN:
            return str(step.index)
        if column == self.KIND:
            return step.kind.value
        if column == self.ACTION:
            # an action in plain words (core/sentences.py; its JSON in the tooltip and the
            # step's detail); the other rows name the tool they chose or looked for.
            # Imported here: pydantic's tool models are not needed before the first row
            from desktop_agent.core.sentences import of_step

            said = of_step(step)
            if said is not None:
                return in_words(said)
            return f"{step.tool or ''} {step.short_args(48)}".strip()
        if column == self.RESULT:
            return result_text(step)
        if column == self.DURATION:
            if step.status is StepStatus.RUNNING:
                return "…"
            return format_duration(step.duration_ms)
        return None

    def _tooltip(self, step: StepView, column: int) -> str | None:
        if column == self.STATUS:
            return step.status.value
        if column == self.RESULT:
            return result_text(step) or None
        if column == self.ACTION and step.kind is StepKind.DECIDE and step.reason:
            return step.reason
        if column == self.ACTION and step.tool:
            return f"{step.tool} {step.short_args(2000)}" if step.args else step.tool
        return None

    def _thumbnail(self, row: int, step: StepView) -> QPixmap | None:
        relative = step.thumbnail or step.screenshot
        if self.loader is None or not relative:
            return None
        image = self.loader.cached(relative, THUMB_SIZE)
        if isinstance(image, QPixmap):
            return image
        key = self.loader.request(relative, THUMB_SIZE)
        if self.loader.missing(key):
            return None
        rows = self._thumb_rows.setdefault(key, [])
        if row not in rows:
            rows.append(row)
        return None

    def on_image_loaded(self, key: str) -> None:
        for row in self._thumb_rows.pop(key, []):
            if row < len(self._steps):
                cell = self.index(row, self.SCREEN)
                self.dataChanged.emit(cell, cell, [Qt.ItemDataRole.DecorationRole])


def result_text(step: StepView) -> str:
    if step.error:
        return step.error
    if step.kind is StepKind.DECIDE and step.reason:
        return f"{step.summary} — {step.reason}" if step.summary else step.reason
    return step.summary


def format_duration(ms: float | None) -> str:
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(int(ms / 1000), 60)
    return f"{minutes}:{seconds:02d} min"


class ColumnHeader(QHeaderView):
    """The timeline's column header, painted when it changes, not with every row selected.

    It shares the table's selection model, and Qt repaints a header over every section of a
    selection (a whole row: all of it, ~0.3-0.6 ms, with 64 calls of the model's Python
    `headerData`) whenever the selection changes, also when it does not highlight sections,
    as here: with the newest row selected in a live run, at every step. Its size hint is
    worked out once (again after a font or style change): Qt works it out from thirteen roles
    of every section's header data whenever the sections are resized, which with a
    stretched column is at every row appended; the headers never change.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setSectionsClickable(True)  # as QTableView's own header
        self._size_hint: QSize | None = None

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        if self._size_hint is None:
            self._size_hint = super().sizeHint()
        return self._size_hint

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        self._size_hint = None
        super().changeEvent(event)

    def visualRegionForSelection(self, selection: QItemSelection) -> QRegion:  # noqa: N802
        if not self.highlightSections():
            return QRegion()  # nothing of the header shows the selection
        return super().visualRegionForSelection(selection)


class TimelineView(QTableView):
    """The timeline table: fixed-height rows (so thousands of rows lay out in O(1)),
    whole-row selection, and following the newest row while the user is at the bottom.

    A row appended repaints that row, not the whole view: QTableView lays its items out
    again after any change of the row count (`doItemsLayout`) and repaints its whole
    viewport then — every visible cell asked for its roles and drawn, 2-5 ms of the GUI
    thread, for each step of a live run. After appends alone the layout here updates the
    geometries (the scroll bar's range) and repaints from the first new row down; a scroll
    to the new row moves the painted pixels and paints the strip it uncovers. Any other
    change of the rows (a reset, rows removed or moved) is laid out whole, as Qt does.

    Attributes:
        follow: whether new rows scroll into view (True while the view is at its bottom).
    """

    def __init__(self, model: TimelineModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.follow = True
        self._scroll_pending = False
        # the first row appended since the last layout (None: none, or the layout is whole)
        self._appended_from: int | None = None
        self._whole_layout_due = False
        self.setHorizontalHeader(ColumnHeader(self))
        self.setModel(model)
        self.setObjectName("timeline")
        self.setAccessibleName(self.tr("Step timeline"))
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)
        self.setAlternatingRowColors(True)
        self.setIconSize(THUMB_SIZE)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        vertical = self.verticalHeader()
        vertical.setVisible(False)
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vertical.setDefaultSectionSize(ROW_HEIGHT)
        header = self.horizontalHeader()
        header.setHighlightSections(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        widths = {
            TimelineModel.STATUS: 28,
            TimelineModel.TURN: 44,
            TimelineModel.KIND: 64,
            TimelineModel.ACTION: 320,
            TimelineModel.DURATION: 70,
            TimelineModel.SCREEN: THUMB_SIZE.width() + 8,
        }
        for column, width in widths.items():
            self.setColumnWidth(column, width)
        header.setSectionResizeMode(TimelineModel.RESULT, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(TimelineModel.STATUS, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(TimelineModel.SCREEN, QHeaderView.ResizeMode.Fixed)
        self._connect_signals()

    def _connect_signals(self) -> None:
        model = self.model()
        model.rowsAboutToBeInserted.connect(self.on_rows_about_to_be_inserted)
        model.rowsInserted.connect(self.on_rows_inserted)
        model.modelReset.connect(self.on_model_reset)
        for moved in (
            model.modelAboutToBeReset,
            model.rowsAboutToBeRemoved,
            model.rowsAboutToBeMoved,
            model.layoutAboutToBeChanged,
            model.columnsAboutToBeInserted,
            model.columnsAboutToBeRemoved,
        ):
            moved.connect(self.on_rows_moved)

    def on_rows_about_to_be_inserted(self, *_: object) -> None:
        bar = self.verticalScrollBar()
        self.follow = bar.value() >= bar.maximum() - 2

    def on_rows_moved(self, *_: object) -> None:
        self._whole_layout_due = True

    def on_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        if last == self.model().rowCount() - 1:  # appended
            if self._appended_from is None or first < self._appended_from:
                self._appended_from = first
        else:
            self._whole_layout_due = True
        # one scroll per event-loop pass, however many rows a replay adds in it
        if self.follow and not self._scroll_pending:
            self._scroll_pending = True
            QTimer.singleShot(0, self.on_scroll_due)

    def on_scroll_due(self) -> None:
        self._scroll_pending = False
        if self.follow:
            self.scrollToBottom()

    def on_model_reset(self) -> None:
        self.follow = True

    def doItemsLayout(self) -> None:  # noqa: N802 - Qt override
        """Qt's delayed layout after the rows changed (see the class docstring)."""
        appended_from, whole = self._appended_from, self._whole_layout_due
        self._appended_from, self._whole_layout_due = None, False
        if appended_from is None or whole:
            super().doItemsLayout()
            return
        self.updateGeometries()
        viewport = self.viewport()
        top = max(self.rowViewportPosition(appended_from), 0)
        if top < viewport.height():
            viewport.update(0, top, viewport.width(), viewport.height() - top)


def _ints(value: object, count: int) -> tuple[int, ...] | None:
    """`count` whole numbers from a stored list, else None (an old or odd row)."""
    if not isinstance(value, list) or len(value) != count:
        return None
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in value):
        return None
    return tuple(value)
