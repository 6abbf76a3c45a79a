"""The tray icon: its look follows the app's state; Show, Pause/Resume, Stop all, Quit."""

from __future__ import annotations

import logging

from PySide6.QtCore import QT_TRANSLATE_NOOP, QObject, QPointF, QRectF, Qt, Signal, Slot
from PySide6.QtGui import QAction, QColor, QIcon, QPainter, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop_agent.core.text import printable
from desktop_agent.ui.runs_state import TrayState

log = logging.getLogger(__name__)

#: state → fill colour of the tray's icons (the tray's own: the window's first frame shows none)
STATE_COLORS: dict[str, QColor] = {
    "idle": QColor(128, 128, 128),
    "running": QColor(40, 160, 70),
    "paused": QColor(225, 160, 20),
    "failed": QColor(210, 45, 45),
}
STATES = tuple(STATE_COLORS)
_TOOLTIPS = {
    "idle": str(QT_TRANSLATE_NOOP("TrayController", "Desktop Agent — idle")),
    "running": str(QT_TRANSLATE_NOOP("TrayController", "Desktop Agent — running")),
    "paused": str(QT_TRANSLATE_NOOP("TrayController", "Desktop Agent — paused")),
    "failed": str(QT_TRANSLATE_NOOP("TrayController", "Desktop Agent — the last run failed")),
}
UNAVAILABLE_MESSAGE = "No system tray on this desktop; Desktop Agent works without a tray icon."


class TrayController(QObject):
    """The system tray icon and its menu, or nothing where the platform has no tray.

    The menu, its actions and the state icons exist either way (so the app and tests
    can use them alike); only the QSystemTrayIcon itself is missing without a tray,
    and then `notify` and the icon's look are no-ops.

    Signals:
        show_requested: Show was chosen, or the icon was clicked.
        pause_toggled(bool): Pause/Resume was chosen; True asks to pause, False to resume.
        stop_all_requested: Stop all was chosen.
        quit_requested: Quit was chosen.

    Attributes:
        available: whether the platform has a system tray (checked once, at construction).
        state: the current state: idle, running, paused or failed.
        hotkey_problem: why the stop hotkey is not armed ("" while it is); the tooltip
            says it.
        menu: the context menu (Show, Pause/Resume, Stop all, Quit).
        show_action, pause_action, stop_all_action, quit_action: the menu's actions.
    """

    show_requested = Signal()
    pause_toggled = Signal(bool)
    stop_all_requested = Signal()
    quit_requested = Signal()

    def __init__(self, parent: QObject | None = None, *, available: bool | None = None) -> None:
        super().__init__(parent)
        self.available = QSystemTrayIcon.isSystemTrayAvailable() if available is None else available
        self.state = TrayState.IDLE
        self.hotkey_problem = ""
        self._icons: dict[str, QIcon] = {state: state_icon(state) for state in STATES}
        self.menu = QMenu()
        self.show_action = QAction(self.tr("&Show Desktop Agent"), self)
        self.pause_action = QAction(self.tr("&Pause"), self)
        self.stop_all_action = QAction(self.tr("S&top all runs"), self)
        self.quit_action = QAction(self.tr("&Quit"), self)
        for action in (self.show_action, self.pause_action, self.stop_all_action):
            self.menu.addAction(action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self._tray: QSystemTrayIcon | None = None
        if self.available:
            self._tray = QSystemTrayIcon(self._icons["idle"], self)
            self._tray.setContextMenu(self.menu)
            self._tray.setToolTip(self.tr(_TOOLTIPS["idle"]))
        else:
            log.warning(UNAVAILABLE_MESSAGE)
        self._connect_signals()
        self._apply_state()

    def _connect_signals(self) -> None:
        self.show_action.triggered.connect(self.on_show_triggered)
        self.pause_action.triggered.connect(self.on_pause_triggered)
        self.stop_all_action.triggered.connect(self.on_stop_all_triggered)
        self.quit_action.triggered.connect(self.on_quit_triggered)
        if self._tray is not None:
            self._tray.activated.connect(self.on_tray_activated)

    # ── public API ────────────────────────────────────────────────────────────

    def show(self) -> None:
        """Put the icon into the tray (no-op without one)."""
        if self._tray is not None:
            self._tray.show()

    def hide(self) -> None:
        if self._tray is not None:
            self._tray.hide()

    @property
    def visible(self) -> bool:
        return self._tray is not None and self._tray.isVisible()

    def set_state(self, state: TrayState | str) -> None:
        """idle | running | paused | failed: the icon, tooltip and Pause/Resume follow it."""
        if state not in self._icons:
            raise ValueError(f"unknown tray state {state!r}; the states are: {', '.join(STATES)}")
        self.state = TrayState(state)
        self._apply_state()

    def set_hotkey_state(self, armed: bool, why: str) -> None:
        """While the stop hotkey is not armed the tooltip says so, with why."""
        self.hotkey_problem = "" if armed else why
        self._apply_state()

    def tooltip(self) -> str:
        tip = self.tr(_TOOLTIPS[self.state])
        if self.hotkey_problem:
            tip += "\n" + self.tr("Stop hotkey not armed: {why}").format(why=self.hotkey_problem)
        return tip

    def icon(self) -> QIcon:
        """The icon of the current state (shown in the tray when there is one)."""
        return self._icons[self.state]

    def notify(self, title: str, text: str) -> None:
        """A desktop notification from the tray (no-op without a tray or notification support)."""
        if self._tray is None or not self._tray.supportsMessages():
            log.debug("notification not shown (no tray): %s: %s", title, text)
            return
        self._tray.showMessage(plain_message(title), plain_message(text), self.icon(), 8000)

    def dispose(self) -> None:
        """Take the icon out of the tray (call when the app quits)."""
        self.hide()

    # ── slots ────────────────────────────────────────────────────────────────

    @Slot()
    def on_show_triggered(self) -> None:
        self.show_requested.emit()

    @Slot()
    def on_pause_triggered(self) -> None:
        self.pause_toggled.emit(self.state is not TrayState.PAUSED)

    @Slot()
    def on_stop_all_triggered(self) -> None:
        self.stop_all_requested.emit()

    @Slot()
    def on_quit_triggered(self) -> None:
        self.quit_requested.emit()

    def on_tray_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.show_requested.emit()

    # ── internals ─────────────────────────────────────────────────────────────

    def _apply_state(self) -> None:
        paused = self.state is TrayState.PAUSED
        self.pause_action.setText(self.tr("&Resume") if paused else self.tr("&Pause"))
        self.pause_action.setEnabled(self.state in ("running", "paused"))
        if self._tray is not None:
            self._tray.setIcon(self._icons[self.state])
            # a tray host may read it as markup, as a notification's body (plain_message)
            self._tray.setToolTip(plain_message(self.tooltip()))


#: look-alikes for the two characters that start markup
_MARKUP_LOOKALIKES = str.maketrans({"<": "\uff1c", "&": "\uff06"})


def plain_message(text: str) -> str:
    """`text` for a notification, shown as text on every backend: Qt's own balloon (a QLabel
    that takes text starting like HTML for rich text) and a freedesktop notification server
    (which reads the body as markup: <a>, <img>). Neither has a plain-text switch and an
    escape shows as `&lt;` where markup is off, so `<` and `&` become their full-width
    look-alikes; control and bidi characters are escaped (core.text.printable)."""
    return printable(text, keep_newlines=True).translate(_MARKUP_LOOKALIKES)


def state_icon(state: str, size: int = 64) -> QIcon:
    """A round icon in the state's colour with a glyph (dot, play, pause bars, cross)."""
    color = STATE_COLORS.get(state)
    if color is None:
        raise ValueError(f"unknown state {state!r}; the states are: {', '.join(STATE_COLORS)}")
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(color.darker(140), size / 32))
        painter.setBrush(color)
        margin = size / 16
        painter.drawEllipse(QRectF(margin, margin, size - 2 * margin, size - 2 * margin))
        _draw_glyph(painter, state, size)
    finally:
        painter.end()
    return QIcon(pixmap)


def _draw_glyph(painter: QPainter, state: str, size: int) -> None:
    s = size / 64
    painter.setBrush(Qt.GlobalColor.white)
    painter.setPen(Qt.PenStyle.NoPen)
    if state == "idle":
        painter.drawEllipse(QPointF(32 * s, 32 * s), 8 * s, 8 * s)
    elif state == "running":
        painter.drawPolygon(
            QPolygonF([QPointF(25 * s, 18 * s), QPointF(25 * s, 46 * s), QPointF(47 * s, 32 * s)])
        )
    elif state == "paused":
        painter.drawRect(QRectF(22 * s, 19 * s, 7 * s, 26 * s))
        painter.drawRect(QRectF(35 * s, 19 * s, 7 * s, 26 * s))
    else:
        pen = QPen(Qt.GlobalColor.white, 6 * s)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        painter.drawLine(QPointF(22 * s, 22 * s), QPointF(42 * s, 42 * s))
        painter.drawLine(QPointF(42 * s, 22 * s), QPointF(22 * s, 42 * s))
