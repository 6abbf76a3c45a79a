"""The main window: task panel, live step timeline, step detail, run history and status bar."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QPaintEvent
from PySide6.QtWidgets import QMainWindow, QWidget

from desktop_agent.core.errors import DesktopAgentError, ModelUnreachable
from desktop_agent.ui.history import HistoryPanel
from desktop_agent.ui.icons import app_icon
from desktop_agent.ui.model_line import check_model_line
from desktop_agent.ui.replay import ReplayOnShow
from desktop_agent.ui.routines import RoutinesPanel
from desktop_agent.ui.run_on_show import TOOK_OVER, Change, RunOnShow, act_when_out_of_the_way
from desktop_agent.ui.status_bar import RunStatusBar
from desktop_agent.ui.step_detail import StepDetail
from desktop_agent.ui.task_panel import TaskPanel
from desktop_agent.ui.tasks import Spawned
from desktop_agent.ui.text import one_line, plain_label, plain_tooltip
from desktop_agent.ui.timeline import ImageLoader, TimelineModel, TimelineView
from desktop_agent.ui.widgets import column, split
from desktop_agent.ui.window_actions import WindowActions

if TYPE_CHECKING:
    import asyncio
    import concurrent.futures

    from desktop_agent.core.models import RunView
    from desktop_agent.host.starts import StartRequest
    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.runs_state import RunsState
    from desktop_agent.ui.worker import RunWorker

__all__ = ["TITLE", "TOOK_OVER", "MainWindow"]

log = logging.getLogger(__name__)

TITLE = "Desktop Agent"


class MainWindow(QMainWindow):
    """The app's window: a view of the run on show and the user's intents. It gets the
    EngineClient (its one door to the Host, which runs on the engine thread) once that is
    open, so the window can paint before the store and the desktop adapters are loaded.

    One run is on show at a time; what it is — live or replayed, starting, refused, paused
    by the user — is the model's (`shown`, ui/run_on_show.py, kept by the app's RunsState).
    A live run's events reach it from RunsState, a replay's from a RunWorker: one path
    (`RunOnShow.apply`), and the window renders each change (`on_shown_changed`).

    Signals:
        first_painted: the window painted for the first time (start-up figure).
        showing_run(RunView): a run is on show (started live or replayed).
        stop_all_requested: Stop all was asked (button, menu); the app stops every run.
        settings_requested: Settings… was chosen.
        find_servers_requested: Find model servers… was chosen (menu, the model line).
        quit_requested: Quit was chosen, or the window was closed while it should quit.
        hidden_to_tray: the window was closed but the app goes on in the tray.

    Attributes:
        client: the engine's client, None until `bind`.
        runs: the app's runs state the window follows, None until `bind`.
        shown: the run on show (the model this window renders; `runs.shown` once bound).
        replay: the replay on show (its `worker`, None when none is).
        hide_on_close: closing hides the window instead of quitting (a tray is there).
        before_run: awaited after a run is admitted and before its first step (the app
            gets the window out of the way there).
        model_check: the latest check of the model line (ui/model_line.py).
        tasks: what the window spawned on the loop.
        panel, timeline_model, timeline, detail, history, routines, bar (the status bar),
            menu_actions (the menus' and shortcuts'): the parts.
    """

    first_painted = Signal()
    #: a RunView; declared as object, which Qt passes through as it is, so that the window's
    #: module does not import the core's dataclasses before its first paint
    showing_run = Signal(object)
    stop_all_requested = Signal()
    settings_requested = Signal()
    find_servers_requested = Signal()
    quit_requested = Signal()
    hidden_to_tray = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setObjectName("mainWindow")
        self.client: EngineClient | None = None
        self.runs: RunsState | None = None
        self.replay = ReplayOnShow()
        self.hide_on_close = False
        self.before_run: Callable[[], Coroutine[Any, Any, None]] | None = None
        self._quitting = False
        self.painted = False  # the window painted once
        self.tasks = Spawned(
            lambda error: self.set_status(self.tr("Error: {error}").format(error=one_line(error)))
        )
        self.shown = RunOnShow()
        self._max_steps_setting: int | None = None
        self.model_check: asyncio.Task[ModelUnreachable | None] | None = None

        self.loader = ImageLoader(parent=self)
        self.panel = TaskPanel(self)
        self.history = HistoryPanel(self)
        self.routines = RoutinesPanel(self)
        self.timeline_model = TimelineModel(self.loader, self)
        self.timeline = TimelineView(self.timeline_model, self)
        self.detail = StepDetail(self.loader, self)
        self.run_title = plain_label(
            self.tr("No run on show. Type a goal and press Start, or pick a run."), self
        )
        self.run_title.setObjectName("runTitle")
        self.run_title.setWordWrap(True)
        self._build_layout()
        self.bar = RunStatusBar(self)
        self.setStatusBar(self.bar)
        self.menu_actions = WindowActions(self)
        self.detail.follow(self.timeline, self.timeline_model)
        self.panel.set_ready(False)
        self.panel.goal_edit.setFocus()
        self.resize(1280, 800)
        self._connect_signals()

    # ── construction ─────────────────────────────────────────────────────────

    def _build_layout(self) -> None:
        vertical = Qt.Orientation.Vertical
        task = column(self, self.panel, stretch_last=True)
        left = split(self, vertical, task, self.history, self.routines, stretch=((1, 1),))
        centre = column(self, self.run_title, self.timeline)
        right = split(self, vertical, centre, self.detail, stretch=((0, 3), (1, 2)))
        main = split(self, Qt.Orientation.Horizontal, left, right, stretch=((0, 0), (1, 1)))
        main.setSizes([400, 880])
        self.setCentralWidget(main)

    def _connect_signals(self) -> None:
        panel = self.panel
        panel.start_requested.connect(self.on_start_requested)
        panel.pause_requested.connect(self.on_pause_requested)
        panel.stop_requested.connect(self.on_stop_requested)
        panel.stop_all_requested.connect(self.stop_all_requested)
        self.history.run_selected.connect(self.on_run_selected)
        panel.find_servers_requested.connect(self.find_servers_requested)
        panel.settings_requested.connect(self.settings_requested)
        actions = self.menu_actions
        for action, slot in (
            (actions.start, panel.on_start_clicked),
            (actions.pause, panel.on_pause_clicked),
            (actions.stop, panel.on_stop_clicked),
            (actions.stop_all, self.stop_all_requested),
            (actions.refresh, self.on_refresh_requested),
            (actions.settings, self.settings_requested),
            (actions.find_servers, self.find_servers_requested),
            (actions.quit, self.on_quit_chosen),
        ):
            action.triggered.connect(slot)

    # ── the engine ───────────────────────────────────────────────────────────

    def bind(self, client: EngineClient, runs: RunsState) -> None:
        """Use `client` from now on (tools, model, history, the vision check) and follow
        `runs`, the app's one channel of run events."""
        self.client = client
        self.runs = runs
        self.shown = runs.shown
        self.shown.subscribe(self.on_shown_changed)
        self.bar.follow(self.shown, lambda: client.host.settings)
        self.loader.data_dir = client.host.data_dir
        self.panel.set_tools(client.host.tools)
        self.panel.set_ready(True)
        runs.subscribe(self.history.model.on_run_event)
        self.apply_settings()
        self.set_status(self.tr("Ready."))
        self.spawn(self.refresh_history())

    def apply_settings(self, asked_at: int | None = None) -> None:
        """Show the model and the step limit of the current settings; check the model's vision
        (at the window's binding and after the user saved settings: never after a stop alone).
        `asked_at`: the host's `stops` when the user asked (the Save's click), else now."""
        if self.client is None:
            return
        settings = self.client.host.settings
        self.panel.set_model(settings.model, settings.base_url)
        self.bar.show_settings(settings)
        if settings.max_steps != self._max_steps_setting:
            # the panel's limit is what a start uses: a new default must reach it
            self._max_steps_setting = settings.max_steps
            self.panel.max_steps.setValue(settings.max_steps)
        # the stops so far, read as it is asked: a stop from then on stops the check, also one
        # that lands before the check begins on the engine
        stops = self.client.host.stops if asked_at is None else asked_at
        self.model_check = self.spawn(check_model_line(self.client, self.panel, stops))

    async def refresh_history(self) -> None:
        if self.client is None:
            return
        try:
            shown = self.shown.run
            await self.history.refresh(self.client, shown.id if shown is not None else None)
        except DesktopAgentError as error:
            self.set_status(self.tr("The history cannot be read: {error}").format(error=error))

    # ── the user's intents ───────────────────────────────────────────────────

    @Slot(str, int, tuple)
    def on_start_requested(self, goal: str, max_steps: int, tools: tuple[str, ...]) -> None:
        from desktop_agent.host.host import RunRequest

        self.start_live(
            # the task panel never sends an empty list (it says "Allow at least one tool"); an
            # empty tuple here is a caller's "the default tools"
            lambda ready: RunRequest(
                goal, max_steps=max_steps, allowed_tools=tools or None, ready=ready
            )
        )

    def start_live(
        self,
        request_for: Callable[[concurrent.futures.Future[None]], StartRequest],
        status: str | None = None,
    ) -> bool:
        """Start at the click and show the run live (Start, a routine's Run): the request
        `request_for` makes (its id made here) is sent to the Host, which admits it in order
        with every stop sent after it, so a Stop, a stop-all or the hotkey after the click
        reaches it; the model is checked inside the run, a refusal comes as `StartRefused`.
        The run acts once the window is out of the way (the future `request_for` gets is set
        then). False when a run of this window is on already."""
        import concurrent.futures

        from desktop_agent.host.engine import EngineClosed

        client = self.client
        if client is None or self.live_running:
            return False
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        request = request_for(ready)
        try:
            client.send(client.host.submit, request)
        except EngineClosed as error:
            self.shown.not_started(one_line(error))
            return True
        self.replay.drop()
        self.shown.show_live(request.run_id, status or self.tr("Checking the model…"))
        self.spawn(act_when_out_of_the_way(self.before_run, ready))
        return True

    @Slot(bool)
    def on_pause_requested(self, pause: bool) -> None:
        run_id = self.shown.ask_pause(pause)
        if self.client is not None and run_id is not None:
            self.client.send(self.client.host.pause if pause else self.client.host.resume, run_id)

    @Slot()
    def on_stop_requested(self) -> None:
        if self.client is None:
            return
        run_id = self.shown.ask_stop()
        if run_id is not None:
            self.client.send(self.client.host.stop, run_id)
        # what asks the model outside a run goes on too: a calibration (Settings… →
        # Calibrate…), the model line's check, Test connection, the look for model servers
        self.client.send(self.client.host.stop_held_work)

    @Slot(str)
    def on_run_selected(self, run_id: str) -> None:
        if self.client is None:
            return
        may, why = self.shown.may_replay(run_id, self.history.model.run_of(run_id))
        if why:
            self.set_status(why)
        if may:
            from desktop_agent.ui.worker import RunWorker, stored_events  # after the paint

            events = stored_events(self.client, run_id)
            self.show_worker(RunWorker(events, live=False, parent=self))

    def show_worker(self, worker: RunWorker) -> None:
        """Put `worker`'s (replayed) run on show: its events take the live run's path."""
        self.replay.show(worker, self.shown)

    @property
    def worker(self) -> RunWorker | None:
        return self.replay.worker

    @property
    def live_running(self) -> bool:
        """A live run of this window is admitted and has not ended."""
        return self.shown.live_running

    @property
    def run(self) -> RunView | None:
        """The run on show (its latest view)."""
        return self.shown.run

    # ── what the engine says, and the model's changes rendered ──────────────

    def on_shown_changed(self, change: Change) -> None:
        """Show what changed in the run on show (live or replayed: one path)."""
        from desktop_agent.core.events import (
            RunStarted,
            RunTotals,
            StartRefused,
            StepFinished,
            StepStarted,
        )

        if isinstance(change, StepStarted | StepFinished):
            self.timeline_model.upsert(change.step)
        elif change == "reset":
            self.timeline_model.clear()
            self.detail.show_step(None)
        elif isinstance(change, RunStarted):
            self.run_title.setText(self.shown.title())
            self.run_title.setToolTip(plain_tooltip(self.shown.title_tip()) or "")
            if self.shown.live:
                self.history.select_run(change.run.id)
            self.showing_run.emit(change.run)
        elif isinstance(change, StartRefused):
            self.panel.show_error(change.reason)
        if not isinstance(change, StepStarted | StepFinished | RunTotals):
            self.panel.set_state(self.shown.state)

    def set_status(self, text: str) -> None:
        self.bar.set_status(text)

    # ── window behaviour ─────────────────────────────────────────────────────

    def bring_to_front(self) -> None:
        """Show the window normal (not minimised, not hidden) and give it the focus."""
        if self.isMinimized() or not self.isVisible():
            self.showNormal()
        self.raise_()
        self.activateWindow()

    @Slot()
    def on_show_requested(self) -> None:
        """The tray's Show, or another launch on this data dir, asked for the window."""
        self.bring_to_front()

    def get_out_of_the_way(self) -> None:
        """Minimise while a run acts, so its screenshots show the desktop, not this window."""
        self.showMinimized()

    @Slot()
    def on_refresh_requested(self) -> None:
        self.spawn(self.refresh_history())

    @Slot()
    def on_quit_chosen(self) -> None:
        self._quitting = True
        self.quit_requested.emit()

    def allow_close(self) -> None:
        """The app is quitting: the next close really closes."""
        self._quitting = True

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        super().paintEvent(event)
        if not self.painted:
            self.painted = True
            self.first_painted.emit()
            # the icon comes after the first paint: on X11 it is drawn from its SVG at each
            # size a window manager may show, 10-15 ms of the start
            QTimer.singleShot(0, self.on_first_painted)

    @Slot()
    def on_first_painted(self) -> None:
        self.setWindowIcon(app_icon())

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if self._quitting:
            event.accept()
            return
        event.ignore()
        if self.hide_on_close:
            log.info("window closed: hidden to the tray")
            self.hide()
            self.hidden_to_tray.emit()
        else:
            log.info("window closed: quitting")
            self._quitting = True
            self.quit_requested.emit()

    async def shutdown(self) -> None:
        """End the replay on show, what the window spawned, and the loader (the engine stops
        the live runs)."""
        await self.replay.close()
        await self.tasks.close()
        self.loader.shutdown()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run `coro` on the loop; what it raises is logged and said on the status line."""
        return self.tasks.spawn(coro)
