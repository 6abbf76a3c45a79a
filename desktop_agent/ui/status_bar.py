"""The main window's status bar: the status line, the run's turn, tokens and time, warnings."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QTimer, Slot
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from desktop_agent.ui.run_on_show import Change, PanelState, RunOnShow
from desktop_agent.ui.text import plain_label, plain_tooltip

if TYPE_CHECKING:
    from desktop_agent.settings import Settings

log = logging.getLogger(__name__)

#: the status bar's warning while the setting injection_guard is off
INJECTION_GUARD_OFF = str(QT_TRANSLATE_NOOP("RunStatusBar", "Injection guard off"))
INJECTION_GUARD_OFF_TIP = str(
    QT_TRANSLATE_NOOP(
        "RunStatusBar",
        "Text on the screen that gives orders to an AI is not asked about: under a blanket "
        "approval the model may act on it unasked. Turn it on in settings.toml "
        '(injection_guard = "on").',
    )
)


class RunStatusBar(QStatusBar):
    """Renders the run on show (RunOnShow says each line; `follow`) and the app's standing
    warnings. While a live run goes, its time is shown again each second.

    Attributes:
        status_label: the status line (it may quote the model's message: text, never markup).
        turn_label, usage_label, elapsed_label: the run's turn, its model tokens and cost,
            its time against max_run_seconds.
        hotkey_label: shown while the stop hotkey is not armed, saying why.
        guard_label: shown while the injection guard is off.
        turn_shown: the turn the turn line shows.
        clock: ticks each second while a live run goes.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.turn_shown = 0
        self._shown = RunOnShow()
        self._settings: Callable[[], Settings | None] = lambda: None
        self.clock = QTimer(self)
        self.clock.setInterval(1000)
        self.clock.timeout.connect(self.show_elapsed)
        self.status_label = plain_label(self.tr("Opening the history…"), self)
        self.turn_label = QLabel("", self)
        self.usage_label = plain_label("", self)
        self.elapsed_label = QLabel("", self)
        self.hotkey_label = plain_label("", self)
        self.guard_label = QLabel(self.tr(INJECTION_GUARD_OFF), self)
        self.guard_label.setToolTip(self.tr(INJECTION_GUARD_OFF_TIP))
        for label, name in (
            (self.status_label, "status"),
            (self.turn_label, "turn"),
            (self.usage_label, "usage"),
            (self.elapsed_label, "elapsed"),
            (self.hotkey_label, "hotkey"),
            (self.guard_label, "injection_guard_off"),
        ):
            label.setObjectName(name)
        self.hotkey_label.hide()
        self.guard_label.hide()
        self.addWidget(self.status_label, 1)
        for label in (self.guard_label, self.hotkey_label, self.turn_label, self.usage_label):
            self.addPermanentWidget(label)
        self.addPermanentWidget(self.elapsed_label)

    def set_status(self, text: str) -> None:
        self.status_label.setText(text)
        self.status_label.setToolTip(plain_tooltip(text) or "")

    def show_notice(self, text: str, timeout_ms: int = 30_000) -> None:
        """A one-off message (no tray, no hotkey, bad settings file, ...)."""
        log.info("notice: %s", text)
        self.showMessage(text, timeout_ms)

    def set_hotkey_state(self, armed: bool, why: str) -> None:
        """While the stop hotkey is not armed the bar says so, with why."""
        text = "" if armed else self.tr("Stop hotkey not armed: {why}").format(why=why)
        self.hotkey_label.setText(text)
        self.hotkey_label.setToolTip(plain_tooltip(text) or "")
        self.hotkey_label.setVisible(not armed)

    def show_settings(self, settings: Settings) -> None:
        self.guard_label.setVisible(settings.injection_guard == "off")

    def follow(self, shown: RunOnShow, settings: Callable[[], Settings | None]) -> None:
        """Render `shown` from now on, against the limits of `settings()` (the host's)."""
        self._shown, self._settings = shown, settings
        shown.subscribe(self.on_shown_changed)

    def on_shown_changed(self, change: Change) -> None:
        from desktop_agent.core.events import (
            RunFinished,
            RunStarted,
            RunTotals,
            StartRefused,
            StepFinished,
            StepStarted,
        )

        shown = self._shown
        if isinstance(change, StepStarted | StepFinished):
            if shown.turn != self.turn_shown:
                self.show_turn()
            return
        if isinstance(change, RunTotals):
            self.show_turn()
            return
        if change == "reset":
            self.clock.stop()
        elif isinstance(change, RunStarted):
            if shown.live:
                self.clock.start()
        elif isinstance(change, StartRefused):
            pass  # nothing was timed
        elif isinstance(change, RunFinished) or shown.state is PanelState.IDLE:
            self.clock.stop()
        self.set_status(shown.status)
        self.show_turn()
        self.show_elapsed()

    def show_turn(self) -> None:
        """The run's turn, tokens and cost (against the settings' max_run_tokens)."""
        shown, settings = self._shown, self._settings()
        self.turn_shown = shown.turn
        self.turn_label.setText(shown.turn_line(self.tr("Turn {turn} of {limit}")))
        self.usage_label.setText(shown.usage_line(settings.max_run_tokens if settings else 0))
        self.usage_label.setToolTip(shown.usage_tip() if shown.run is not None else "")

    @Slot()
    def show_elapsed(self) -> None:
        shown, settings = self._shown, self._settings()
        self.elapsed_label.setText(shown.elapsed_line(settings.max_run_seconds if settings else 0))
