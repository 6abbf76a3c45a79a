"""The calibration window: targets at known places, the model asked to click each, the report.

The window only paints the targets (core/calibration.py says where) and shows the report with
a Save button. The screenshot and the model's answers are the engine's
(host/calibration.py's ScreenCalibration), awaited through `on_engine` (the app's
`EngineClient.ask`): the GUI thread never captures, reads the keyring or talks to the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from PySide6.QtCore import QT_TRANSLATE_NOOP, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QColor, QFont, QKeyEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from desktop_agent.core.calibration import TARGET_RADIUS, CalibrationResult, Target, targets_for
from desktop_agent.core.errors import StopRequested
from desktop_agent.host.engine import EngineClosed
from desktop_agent.ui.text import plain_label

if TYPE_CHECKING:
    from desktop_agent.host.calibration import ScreenCalibration

log = logging.getLogger(__name__)
T = TypeVar("T")

#: time for the window manager to map and paint the window before the screenshot
SETTLE_MS = 400
#: what the window says when a stop ended the calibration
STOPPED_TEXT = str(
    QT_TRANSLATE_NOOP(
        "CalibrationWindow", "Calibration stopped: nothing more is asked of the model."
    )
)


class OnEngine(Protocol):
    """Awaits `fn(*args)` run on the engine's loop (the app's `EngineClient.ask`)."""

    def __call__(self, fn: Callable[..., Awaitable[T]], /, *args: Any) -> Awaitable[T]: ...


class CalibrationWindow(QWidget):
    """Shows five labelled rings over the whole screen, then the calibration's report.

    Signals:
        save_requested(str): the coordinate space to save as `model_coordinates`.
        closed(): the window was closed.

    Attributes:
        result: what the last calibration found, else None.
        status: the line that says what is happening, then the report.
        save_button, close_button: Save (enabled when the report suggests a change), Close.
    """

    save_requested = Signal(str)
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window | Qt.WindowType.FramelessWindowHint)
        self.setWindowTitle(self.tr("Desktop Agent — calibration"))
        self.setObjectName("CalibrationWindow")
        self.setAutoFillBackground(True)
        palette = self.palette()
        palette.setColor(self.backgroundRole(), QColor(245, 245, 245))
        self.setPalette(palette)
        self.result: CalibrationResult | None = None
        self._painted: asyncio.Future[None] | None = None

        self.status = plain_label(
            self.tr("Showing the targets…")
        )  # model text is data, never markup
        self.status.setFont(QFont("monospace"))
        self.status.setStyleSheet("background: white; padding: 12px; border: 1px solid #999;")
        self.save_button = QPushButton(self.tr("&Save"))
        self.save_button.setEnabled(False)
        self.close_button = QPushButton(self.tr("&Close"))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.close_button)
        self._panel = QWidget(self)
        column = QVBoxLayout(self._panel)
        column.addWidget(self.status)
        column.addLayout(buttons)
        self._panel.hide()  # nothing but the targets while the screenshot is taken
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.save_button.clicked.connect(self.on_save_clicked)
        self.close_button.clicked.connect(self.close)

    # ── targets ──────────────────────────────────────────────────────────────

    def local_targets(self) -> tuple[Target, ...]:
        return targets_for(self.width(), self.height())

    def screen_targets(self) -> tuple[Target, ...]:
        """The targets in screen pixels (where the window really is)."""
        out = []
        for target in self.local_targets():
            point = self.mapToGlobal(QPoint(target.x, target.y))
            out.append(Target(target.label, point.x(), point.y()))
        return tuple(out)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = painter.font()
        font.setPointSize(16)
        font.setBold(True)
        painter.setFont(font)
        for target in self.local_targets():
            painter.setPen(QPen(QColor(220, 30, 30), 6))
            painter.drawEllipse(QPoint(target.x, target.y), TARGET_RADIUS, TARGET_RADIUS)
            painter.setPen(QColor(20, 20, 20))
            painter.drawText(target.x + TARGET_RADIUS + 8, target.y + 8, target.label)
        painter.end()
        if self._painted is not None and not self._painted.done():
            painted = self._painted
            # the compositor shows the frame a moment after it is painted
            QTimer.singleShot(SETTLE_MS, lambda: _resolve(painted))

    async def shown(self) -> None:
        """Show the targets full screen and return once they are on the screen."""
        self._painted = asyncio.get_running_loop().create_future()
        self.showFullScreen()
        self.update()
        await self._painted

    # ── the run ──────────────────────────────────────────────────────────────

    async def run(
        self, calibration: ScreenCalibration, on_engine: OnEngine
    ) -> CalibrationResult | None:
        """Show the targets, have the engine take the screenshot and ask the model, show the
        report."""
        try:
            await self.shown()
            observation = await on_engine(calibration.screenshot)
            targets = self.screen_targets()
            self.status.setText(
                self.tr("Asking {model} to click {count} targets…").format(
                    model=calibration.model, count=len(targets)
                )
            )
            self._show_panel()
            result = await on_engine(calibration.ask, observation, targets)
        except asyncio.CancelledError:
            raise
        except StopRequested:
            # a stop-all, the stop hotkey, the tray: the request in flight was cancelled
            log.info("calibration stopped")
            self.status.setText(self.tr(STOPPED_TEXT))
            self._show_panel()
            return None
        except Exception as error:  # noqa: BLE001 - any failure is the window's one-line answer
            log.info("calibration failed", exc_info=True)
            line = str(error).splitlines()[0] if str(error) else type(error).__name__
            self.status.setText(self.tr("Calibration failed: {error}").format(error=line))
            self._show_panel()
            return None
        self.result = result
        self.status.setText("\n".join(result.lines))
        self.save_button.setEnabled(result.suggested is not None)
        if result.suggested is not None:
            self.save_button.setText(
                self.tr('&Save model_coordinates = "{space}"').format(space=result.suggested)
            )
        self._show_panel()
        return result

    def _show_panel(self) -> None:
        self._panel.adjustSize()
        self._panel.move(
            (self.width() - self._panel.width()) // 2, (self.height() - self._panel.height()) // 2
        )
        self._panel.show()
        self._panel.raise_()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        # a frameless full-screen window: Escape is the way out besides Close
        if event.key() == Qt.Key.Key_Escape:
            self.close()
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        super().closeEvent(event)
        self.closed.emit()

    def on_save_clicked(self) -> None:
        if self.result is not None and self.result.suggested is not None:
            self.save_requested.emit(self.result.suggested)
            self.save_button.setEnabled(False)
            self.save_button.setText(self.tr("Saved"))


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def calibrate_in_window(
    calibration: ScreenCalibration,
    on_engine: OnEngine,
    *,
    save: Callable[[str], Any] | None = None,
    on_report: Callable[[str], Any] | None = None,
    parent: QWidget | None = None,
) -> CalibrationResult | None:
    """Open the window, calibrate on the engine, wait until the user closes the window.

    `save` gets the coordinate space when the user presses Save; `on_report` the report's
    text (or the failure's line) as soon as it is shown. `calibration` is closed on the
    engine at the end.
    """
    window = CalibrationWindow(parent)
    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    window.closed.connect(lambda: _resolve(closed))
    if save is not None:
        window.save_requested.connect(save)
    try:
        # closing the window (Close, Escape) ends a calibration still asking the model
        work = asyncio.ensure_future(window.run(calibration, on_engine))
        either: set[asyncio.Future[Any]] = {work, closed}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
            log.info("calibration closed before it finished")
            return None
        result = work.result()
        if on_report is not None:
            on_report(window.status.text())
        await closed
        return result
    finally:
        window.deleteLater()
        with contextlib.suppress(EngineClosed):
            await on_engine(calibration.close)
