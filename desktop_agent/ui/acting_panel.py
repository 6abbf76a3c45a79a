"""The small always-on-top panel shown while a run acts: the goal, the current step, Stop."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop_agent.core.text import printable
from desktop_agent.ui.dpi import physical_rect, shape_of
from desktop_agent.ui.text import plain_label, plain_tooltip

if TYPE_CHECKING:
    from desktop_agent.core.models import MonitorArea

log = logging.getLogger(__name__)

#: SetWindowDisplayAffinity's "leave this window out of every capture" (Windows 10 2004+)
WDA_EXCLUDEFROMCAPTURE = 0x11


class ActingPanel(QWidget):
    """A frameless, always-on-top tool window in the top-right corner of the primary screen,
    or of the monitor the run's action is on once one is known (`move_to_monitor`).

    While a run acts on the desktop the main window gets out of the way and this panel
    shows what is going on, with a Stop button. It never takes the keyboard focus (the
    run is typing into another app), so it is clicked, not tabbed to.

    On Windows it is kept out of screen captures with SetWindowDisplayAffinity
    (WDA_EXCLUDEFROMCAPTURE); elsewhere it shows in screenshots: the desktop adapters find
    it by its window class like the app's other windows (`Observation.own_windows`), and
    the prompt names those areas as the agent's own, not part of the task (planner/prompt.py
    `own_windows_note`). Create it without a parent:
    on Windows an owned window would be hidden with its minimised owner.

    Signals:
        stop_requested: the Stop button was pressed.

    Attributes:
        goal_label: the run's goal, elided to one line (the full text is its tooltip).
        step_label: the current step, up to two lines.
        stop_button: asks to stop the run; disabled once pressed until the next show_for.
        excluded_from_capture: True once Windows accepted the capture exclusion.
    """

    stop_requested = Signal()

    WIDTH = 320
    MARGIN = 16

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            parent,
            Qt.WindowType.Tool
            | Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
            | Qt.WindowType.WindowDoesNotAcceptFocus,
        )
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setWindowTitle(self.tr("Desktop Agent — acting"))
        self.setObjectName("ActingPanel")
        self.excluded_from_capture = False
        self._affinity_tried = False
        self._goal = ""

        frame = QFrame(self)
        frame.setObjectName("ActingPanelFrame")
        frame.setFrameShape(QFrame.Shape.StyledPanel)
        frame.setStyleSheet(
            "#ActingPanelFrame { background: palette(window); border: 2px solid #2a9d4a;"
            " border-radius: 6px; }"
        )
        # the goal may come from an API caller, the step quotes the model: never markup
        self.goal_label = plain_label("", frame)
        self.goal_label.setObjectName("goal")
        font = self.goal_label.font()
        font.setBold(True)
        self.goal_label.setFont(font)
        self.step_label = plain_label(self.tr("Starting…"), frame)
        self.step_label.setObjectName("step")
        self.step_label.setWordWrap(True)
        self.stop_button = QPushButton(self.tr("Stop"), frame)
        self.stop_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.stop_button.setToolTip(self.tr("Stop this run (the global stop hotkey works too)"))
        inner = QVBoxLayout(frame)
        inner.setContentsMargins(10, 8, 10, 8)
        inner.setSpacing(4)
        inner.addWidget(self.goal_label)
        inner.addWidget(self.step_label)
        inner.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignRight)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(frame)
        self.setFixedWidth(self.WIDTH)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.stop_button.clicked.connect(self.on_stop_clicked)

    # ── public API ────────────────────────────────────────────────────────────

    def show_for(self, goal: str) -> None:
        """Show the panel for a run with this goal, in the top-right corner."""
        self._goal = goal
        self.goal_label.setToolTip(plain_tooltip(goal) or "")
        self._set_elided(self.goal_label, goal, lines=1)
        self.set_step(self.tr("Starting…"))
        self.stop_button.setEnabled(True)
        self.stop_button.setText(self.tr("Stop"))
        self._exclude_from_capture()
        self.adjustSize()
        self._move_to_corner()
        self.show()  # stays-on-top: showing is enough to be above the app being driven

    def move_to_monitor(self, monitor: MonitorArea | None) -> bool:
        """Into the top-right corner of the monitor an action is on (the person looks there;
        ui/placement.py finds its Qt screen in physical pixels); False, and the panel left
        where it is, when no Qt screen holds it or there is no monitor."""
        from desktop_agent.ui.placement import screen_of  # core.models: not at the first paint

        screen = screen_of(monitor)
        if screen is None:
            return False
        self._move_to_corner(screen)
        return True

    def set_step(self, text: str) -> None:
        """The current step, e.g. "3/20 click (640, 512)"; long text is elided."""
        self.step_label.setToolTip(plain_tooltip(text) or "")
        self._set_elided(self.step_label, text, lines=2)

    @property
    def goal(self) -> str:
        return self._goal

    def geometry_in_screen(self) -> tuple[int, int, int, int] | None:
        """The panel's (left, top, width, height) in physical screen pixels, None when hidden.

        Physical pixels are what the capture adapter grabs (ScreenMapping.to_image maps
        them to the screenshot's). The planner is not told this rectangle: it is told the
        own-window areas the desktop adapters read (`Observation.own_windows`), which hold
        the panel wherever the desktop tells window places.
        Qt scales around each screen's own origin (ui/dpi.py), so on a 150 % monitor
        right of the primary the panel's x is not its Qt x times 1.5.
        """
        if not self.isVisible():
            return None
        frame = self.frameGeometry()
        screen = self.screen()
        rect = (frame.x(), frame.y(), frame.width(), frame.height())
        return rect if screen is None else physical_rect(shape_of(screen), rect)

    # ── slots ────────────────────────────────────────────────────────────────

    @Slot()
    def on_stop_clicked(self) -> None:
        self.stop_button.setEnabled(False)
        self.stop_button.setText(self.tr("Stopping…"))
        self.stop_requested.emit()

    # ── internals ─────────────────────────────────────────────────────────────

    def _set_elided(self, label: QLabel, text: str, *, lines: int) -> None:
        metrics = label.fontMetrics()
        width = self.WIDTH - 32
        flat = " ".join(printable(text).split())
        if lines == 1:
            label.setText(metrics.elidedText(flat, Qt.TextElideMode.ElideRight, width))
            return
        # at most `lines` lines of `width`: elide the text to the room those lines hold
        label.setText(metrics.elidedText(flat, Qt.TextElideMode.ElideRight, width * lines - 40))

    def _move_to_corner(self, screen: QScreen | None = None) -> None:
        """Into the top-right corner of `screen` (device-independent px), else the primary's."""
        screen = screen or QGuiApplication.primaryScreen()
        if screen is None:
            return
        area: QRect = screen.availableGeometry()
        size = self.frameGeometry().size()
        self.move(
            area.right() - size.width() - self.MARGIN + 1,
            area.top() + self.MARGIN,
        )

    def _exclude_from_capture(self) -> None:
        if sys.platform != "win32" or self._affinity_tried:
            return
        self._affinity_tried = True
        try:
            import ctypes

            hwnd = int(self.winId())
            user32 = ctypes.windll.user32  # type: ignore[attr-defined,unused-ignore]
            self.excluded_from_capture = bool(
                user32.SetWindowDisplayAffinity(hwnd, WDA_EXCLUDEFROMCAPTURE)
            )
        except (OSError, AttributeError, ValueError) as error:
            log.info("could not keep the acting panel out of captures: %s", error)
            return
        if not self.excluded_from_capture:
            log.info("Windows refused to keep the acting panel out of captures")
