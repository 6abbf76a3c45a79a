"""The main window: task panel, live step timeline, step detail, run history and status bar."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelection, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QPaintEvent
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.core.errors import (
    DesktopAgentError,
    ModelNotListed,
    ModelUnreachable,
    StopRequested,
)
from desktop_agent.ui.frames import OncePerFrame
from desktop_agent.ui.history import HistoryPanel
from desktop_agent.ui.icons import app_icon
from desktop_agent.ui.routines import RoutinesPanel
from desktop_agent.ui.run_on_show import (
    TOOK_OVER,
    Change,
    PanelState,
    RunOnShow,
    format_elapsed,
    server_address,
    usage_line,
)
from desktop_agent.ui.step_detail import StepDetail
from desktop_agent.ui.task_panel import TaskPanel
from desktop_agent.ui.text import one_line, plain_label, plain_tooltip
from desktop_agent.ui.timeline import ImageLoader, TimelineModel, TimelineView
from desktop_agent.ui.widgets import Grounded

if TYPE_CHECKING:
    import asyncio
    import concurrent.futures

    from desktop_agent.core.events import TaskLoopEvent
    from desktop_agent.core.models import RunView
    from desktop_agent.host.starts import StartRequest
    from desktop_agent.settings import Settings
    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.runs_state import RunsState
    from desktop_agent.ui.worker import RunWorker

__all__ = ["TITLE", "TOOK_OVER", "MainWindow"]

log = logging.getLogger(__name__)

#: the status bar's warning while the setting injection_guard is off
INJECTION_GUARD_OFF = "Injection guard off"
INJECTION_GUARD_OFF_TIP = (
    "Text on the screen that gives orders to an AI is not asked about: under a blanket "
    "approval the model may act on it unasked. Turn it on in settings.toml "
    '(injection_guard = "on").'
)

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
        worker: the RunWorker of the replay on show, None when none is.
        hide_on_close: closing hides the window instead of quitting (a tray is there).
        before_run: awaited after a run is admitted and before its first step (the app
            gets the window out of the way there).
        panel, timeline_model, timeline, detail, history: the parts.
        status_label, turn_label, usage_label, elapsed_label: the status bar's fields
            (usage: the run's model tokens and cost; elapsed: against max_run_seconds).
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
        self.worker: RunWorker | None = None
        self.hide_on_close = False
        self.before_run: Callable[[], Coroutine[Any, Any, None]] | None = None
        self._quitting = False
        self._painted = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self.shown = RunOnShow()
        self._turn_shown = 0
        self._max_steps_setting: int | None = None
        # the latest check of the settings' model; the ModelUnreachable it met, else None
        self.model_check: asyncio.Task[ModelUnreachable | None] | None = None

        self.loader = ImageLoader(parent=self)
        self.panel = TaskPanel(self)
        self.history = HistoryPanel(self)
        self.routines = RoutinesPanel(self)
        self.timeline_model = TimelineModel(self.loader, self)
        self.timeline = TimelineView(self.timeline_model, self)
        self.detail = StepDetail(self.loader, self)
        self.run_title = plain_label(
            "No run on show. Type a goal and press Start, or pick a run.", self
        )
        self.run_title.setObjectName("runTitle")
        self.run_title.setWordWrap(True)
        self._build_layout()
        self._build_status_bar()
        self._build_actions()
        self._elapsed_timer = QTimer(self)
        self._elapsed_timer.setInterval(1000)
        # the selected step's detail is laid out and painted at most once per frame: a live
        # run with its newest row selected changes it with every event
        self._detail_due = OncePerFrame(self._show_selected_step, parent=self)
        self.panel.set_ready(False)
        self.panel.goal_edit.setFocus()
        self.resize(1280, 800)
        self._connect_signals()

    # ── construction ─────────────────────────────────────────────────────────

    def _build_layout(self) -> None:
        task_host = QWidget(self)
        task_layout = QVBoxLayout(task_host)
        task_layout.setContentsMargins(0, 0, 0, 0)
        task_layout.addWidget(self.panel)
        task_layout.addStretch(1)
        left_splitter = QSplitter(Qt.Orientation.Vertical, self)
        left_splitter.addWidget(task_host)
        left_splitter.addWidget(self.history)
        left_splitter.addWidget(self.routines)
        left_splitter.setStretchFactor(1, 1)

        centre = QWidget(self)
        centre_layout = QVBoxLayout(centre)
        centre_layout.setContentsMargins(0, 0, 0, 0)
        centre_layout.addWidget(self.run_title)
        centre_layout.addWidget(self.timeline)

        right = QSplitter(Qt.Orientation.Vertical, self)
        right.addWidget(centre)
        right.addWidget(self.detail)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 2)

        main = QSplitter(Qt.Orientation.Horizontal, self)
        main.addWidget(left_splitter)
        main.addWidget(right)
        main.setStretchFactor(0, 0)
        main.setStretchFactor(1, 1)
        main.setSizes([400, 880])
        self.setCentralWidget(main)

    def _build_status_bar(self) -> None:
        # the status may quote the model's message: text, never markup
        self.status_label = plain_label("Opening the history…", self)
        self.status_label.setObjectName("status")
        self.turn_label = QLabel("", self)
        self.turn_label.setObjectName("turn")
        self.usage_label = plain_label("", self)
        self.usage_label.setObjectName("usage")
        self.elapsed_label = QLabel("", self)
        self.elapsed_label.setObjectName("elapsed")
        self.hotkey_label = plain_label("", self)
        self.hotkey_label.setObjectName("hotkey")
        self.hotkey_label.hide()
        self.guard_label = QLabel(INJECTION_GUARD_OFF, self)
        self.guard_label.setObjectName("injection_guard_off")
        self.guard_label.setToolTip(INJECTION_GUARD_OFF_TIP)
        self.guard_label.hide()
        bar = self.statusBar()
        bar.addWidget(self.status_label, 1)
        bar.addPermanentWidget(self.guard_label)
        bar.addPermanentWidget(self.hotkey_label)
        bar.addPermanentWidget(self.turn_label)
        bar.addPermanentWidget(self.usage_label)
        bar.addPermanentWidget(self.elapsed_label)

    def _build_actions(self) -> None:
        def action(text: str, *keys: QKeySequence | QKeySequence.StandardKey | str) -> QAction:
            made = QAction(text, self)
            made.setShortcuts([QKeySequence(key) for key in keys])
            made.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            self.addAction(made)
            return made

        self.start_action = action("&Start", "Ctrl+Return", "Ctrl+Enter")
        self.pause_action = action("&Pause / Resume", "Ctrl+P")
        self.stop_action = action("St&op", "Esc", "Ctrl+.")
        self.stop_all_action = action("Stop &all runs", "Ctrl+Shift+.")
        self.refresh_action = action("&Refresh history", QKeySequence.StandardKey.Refresh)
        self.settings_action = action("&Settings…", "Ctrl+,")
        self.find_servers_action = action("&Find model servers…")
        self.quit_action = action("&Quit", QKeySequence.StandardKey.Quit)
        menus = self.menuBar()
        app_menu = menus.addMenu("&App")
        app_menu.addAction(self.settings_action)
        app_menu.addAction(self.find_servers_action)
        app_menu.addSeparator()
        app_menu.addAction(self.quit_action)
        run_menu = menus.addMenu("&Run")
        for made in (self.start_action, self.pause_action, self.stop_action):
            run_menu.addAction(made)
        run_menu.addSeparator()
        run_menu.addAction(self.stop_all_action)
        run_menu.addAction(self.refresh_action)

    def _connect_signals(self) -> None:
        panel = self.panel
        panel.start_requested.connect(self.on_start_requested)
        panel.pause_requested.connect(self.on_pause_requested)
        panel.stop_requested.connect(self.on_stop_requested)
        panel.stop_all_requested.connect(self.stop_all_requested)
        self.history.run_selected.connect(self.on_run_selected)
        self.timeline.selectionModel().selectionChanged.connect(self.on_step_selection_changed)
        self.timeline_model.dataChanged.connect(self.on_timeline_data_changed)
        self.start_action.triggered.connect(panel.on_start_clicked)
        self.pause_action.triggered.connect(panel.on_pause_clicked)
        self.stop_action.triggered.connect(panel.on_stop_clicked)
        self.stop_all_action.triggered.connect(self.stop_all_requested)
        self.refresh_action.triggered.connect(self.on_refresh_requested)
        self.settings_action.triggered.connect(self.settings_requested)
        self.find_servers_action.triggered.connect(self.find_servers_requested)
        panel.find_servers_requested.connect(self.find_servers_requested)
        panel.settings_requested.connect(self.settings_requested)
        self.quit_action.triggered.connect(self.on_quit_chosen)
        self._elapsed_timer.timeout.connect(self.on_elapsed_tick)

    # ── the engine ───────────────────────────────────────────────────────────

    def bind(self, client: EngineClient, runs: RunsState) -> None:
        """Use `client` from now on (tools, model, history, the vision check) and follow
        `runs`, the app's one channel of run events."""
        self.client = client
        self.runs = runs
        self.shown = runs.shown
        self.shown.subscribe(self.on_shown_changed)
        self.loader.data_dir = client.host.data_dir
        self.panel.set_tools(client.host.tools)
        self.panel.set_ready(True)
        runs.subscribe(self.on_run_event)
        self.apply_settings()
        self.set_status("Ready.")
        self.spawn(self.refresh_history())

    def apply_settings(self, asked_at: int | None = None) -> None:
        """Show the model and the step limit of the current settings; check the model's vision
        (at the window's binding and after the user saved settings: never after a stop alone).
        `asked_at`: the host's `stops` when the user asked (the Save's click), else now."""
        if self.client is None:
            return
        settings = self.client.host.settings
        self.panel.set_model(settings.model, settings.base_url)
        self.guard_label.setVisible(settings.injection_guard == "off")
        if settings.max_steps != self._max_steps_setting:
            # the panel's limit is what a start uses: a new default must reach it
            self._max_steps_setting = settings.max_steps
            self.panel.max_steps.setValue(settings.max_steps)
        # the stops so far, read as it is asked: a stop from then on stops the check, also one
        # that lands before the check begins on the engine
        stops = self.client.host.stops if asked_at is None else asked_at
        self.model_check = self.spawn(self.check_vision(stops))

    async def check_vision(self, asked_at: int | None = None) -> ModelUnreachable | None:
        """Resolve (without a chat request) whether the configured model can see; the
        ModelUnreachable met (its `found`: what does answer here), else None. A stop after
        `asked_at` (the host's `stops`) gives it up: the line says it was stopped, and it is
        not asked again until the user asks (Settings… saved, a run started)."""
        client = self.client
        if client is None:
            return None
        host = client.host
        settings = host.settings
        if not host.checks_model:
            self.panel.set_vision("unknown", "model checks are off")
            return None
        self.panel.set_vision("checking")
        try:
            verdict = await client.ask(host.vision_verdict, settings, asked_at=asked_at)
        except StopRequested:
            if host.settings is settings:
                self.panel.set_vision("unknown", "stopped")
            return None
        except ModelUnreachable as error:
            if host.settings is settings:
                self.panel.set_server_absent(server_address(settings.base_url), one_line(error))
            return error
        except ModelNotListed as error:
            if host.settings is settings:
                address = server_address(settings.base_url)
                self.panel.set_model_missing(settings.model, address, one_line(error))
            return None
        except Exception as error:  # noqa: BLE001 - shown, never fatal
            log.info("vision check failed: %s", error)
            self.panel.set_vision("unknown", one_line(error))
            return None
        if host.settings is settings:
            self.panel.set_vision("yes" if verdict.can_see else "no", verdict.detail)
        return None

    async def refresh_history(self) -> None:
        if self.client is None:
            return
        try:
            runs = await self.client.ask(self.client.host.records.list_runs, 500)
        except DesktopAgentError as error:
            self.set_status(f"The history cannot be read: {error}")
            return
        self.history.model.set_runs(runs)
        if self.shown.run is not None:
            self.history.select_run(self.shown.run.id)

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
        status: str = "Checking the model…",
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
        self._drop_worker()
        self.shown.show_live(request.run_id, status)
        self.spawn(self._out_of_the_way(ready))
        return True

    async def _out_of_the_way(self, ready: concurrent.futures.Future[None]) -> None:
        """The window gets out of the way (minimised, setting), then the run may act — also
        when that failed, but not when the window is closing (this wait cancelled): the run
        never acts then, and closing the engine stops it."""
        import asyncio

        closing = False
        try:
            if self.before_run is not None:
                await self.before_run()
        except asyncio.CancelledError:
            closing = True
            raise
        finally:
            if not closing and not ready.done():
                ready.set_result(None)

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
        row = self.history.model.row_of(run_id)
        stored = self.history.model.runs()[row] if row >= 0 else None
        may, why = self.shown.may_replay(run_id, stored)
        if why:
            self.set_status(why)
        if may:
            from desktop_agent.ui.worker import RunWorker, stored_events

            events = stored_events(self.client, run_id)
            self.show_worker(RunWorker(events, live=False, parent=self))

    def show_worker(self, worker: RunWorker) -> None:
        """Put `worker`'s (replayed) run on show: its events take the live run's path."""
        if self.shown.live_running:
            raise RuntimeError("a live run is on show; it must end first")
        self._drop_worker()
        self.worker = worker
        self.shown.show_replay()
        worker.run_event.connect(self.on_replayed_event)
        worker.failed.connect(self.on_worker_failed)
        worker.done.connect(self.on_worker_done)
        worker.start()

    def _drop_worker(self) -> None:
        """Stop following the replay on show, if any."""
        previous, self.worker = self.worker, None
        if previous is not None:
            previous.cancel()
            for signal in (previous.run_event, previous.failed, previous.done):
                signal.disconnect()

    @property
    def live_running(self) -> bool:
        """A live run of this window is admitted and has not ended."""
        return self.shown.live_running

    @property
    def run(self) -> RunView | None:
        """The run on show (its latest view)."""
        return self.shown.run

    # ── what the engine says, and the model's changes rendered ──────────────

    def on_run_event(self, event: TaskLoopEvent) -> None:
        """Every event of every run of this process: the history follows them all (the run
        on show hears its own from RunsState)."""
        from desktop_agent.core.events import RunFinished, RunPaused, RunResumed, RunStarted

        if isinstance(event, RunStarted | RunPaused | RunResumed | RunFinished):
            self.history.model.upsert(event.run)

    @Slot(object)
    def on_replayed_event(self, event: TaskLoopEvent) -> None:
        self.shown.apply(event)  # the live run's path

    @Slot(str)
    def on_worker_failed(self, message: str) -> None:
        self.shown.replay_failed(message)

    @Slot()
    def on_worker_done(self) -> None:
        self.shown.replay_done()

    def on_shown_changed(self, change: Change) -> None:
        """Show what changed in the run on show (live or replayed: one path)."""
        from desktop_agent.core.events import (
            RunFinished,
            RunStarted,
            RunTotals,
            StartRefused,
            StepFinished,
            StepStarted,
        )

        shown = self.shown
        if isinstance(change, StepStarted | StepFinished):
            self.timeline_model.upsert(change.step)
            if shown.turn != self._turn_shown:
                self._show_turn()
            return
        if isinstance(change, RunTotals):
            self._show_turn()
            return
        if change == "reset":
            self._elapsed_timer.stop()
            self.timeline_model.clear()
            self.detail.show_step(None)
        elif isinstance(change, RunStarted):
            self._on_run_started(change.run)
        elif isinstance(change, StartRefused):
            self.panel.show_error(change.reason)
        elif isinstance(change, RunFinished) or shown.state is PanelState.IDLE:
            self._elapsed_timer.stop()
        self.panel.set_state(shown.state)
        self.set_status(shown.status)
        self._show_turn()
        self.on_elapsed_tick()

    def _on_run_started(self, run: RunView) -> None:
        live = self.shown.live
        self.run_title.setText(("" if live else "Replay: ") + " ".join(run.goal.split()))
        self.run_title.setToolTip(plain_tooltip(f"{run.goal}\nrun {run.id} · {run.model}") or "")
        if live:
            self.history.select_run(run.id)
            self._elapsed_timer.start()
        self.showing_run.emit(run)

    # ── the timeline's selection ─────────────────────────────────────────────

    @Slot(QItemSelection, QItemSelection)
    def on_step_selection_changed(self, selected: QItemSelection, _: QItemSelection) -> None:
        self._detail_due.request()

    def on_timeline_data_changed(self, top_left: Any, bottom_right: Any, *_: Any) -> None:
        rows = self.timeline.selectionModel().selectedRows()
        if (
            rows
            and top_left.row() <= rows[0].row() <= bottom_right.row()
            and top_left.column() != TimelineModel.SCREEN
        ):
            self._detail_due.request()

    def _show_selected_step(self) -> None:
        rows = self.timeline.selectionModel().selectedRows()
        step = self.timeline_model.step_at(rows[0].row()) if rows else None
        if step is None:
            self.detail.show_step(None)
            return
        model = self.timeline_model
        first, crop = model.grounding_of(step)
        self.detail.show_step(
            step,
            screenshot=model.screenshot_of(step),
            target=model.target_of(step),
            reason=model.reason_of(step),
            grounded=Grounded(first, crop) if first or crop else None,
        )

    # ── status bar ───────────────────────────────────────────────────────────

    def show_notice(self, text: str, timeout_ms: int = 30_000) -> None:
        """A one-off message in the status bar (no tray, no hotkey, bad settings file, ...)."""
        log.info("notice: %s", text)
        self.statusBar().showMessage(text, timeout_ms)

    def set_hotkey_state(self, armed: bool, why: str) -> None:
        """While the stop hotkey is not armed the status bar says so, with why."""
        text = "" if armed else f"Stop hotkey not armed: {why}"
        self.hotkey_label.setText(text)
        self.hotkey_label.setToolTip(plain_tooltip(text) or "")
        self.hotkey_label.setVisible(not armed)

    def set_status(self, text: str) -> None:
        self.status_label.setText(text)
        self.status_label.setToolTip(plain_tooltip(text) or "")

    def _show_turn(self) -> None:
        shown, settings = self.shown, self._settings()
        run = shown.run
        self._turn_shown = shown.turn
        if run is None:
            self.turn_label.setText("")
            self.usage_label.setText("")
            return
        self.turn_label.setText(f"Turn {shown.turn} of {run.max_steps}")
        going = shown.live and run.finished_at is None
        max_tokens = settings.max_run_tokens if settings is not None and going else 0
        self.usage_label.setText(usage_line(run, max_tokens))
        self.usage_label.setToolTip(
            "Model tokens (prompt + completion) and the cost estimate from the price table"
            + (
                " — some turns' tokens are estimated: the server gave no usage"
                if run.tokens_estimated
                else ""
            )
        )

    @Slot()
    def on_elapsed_tick(self) -> None:
        shown, settings = self.shown, self._settings()
        seconds = shown.elapsed_s()
        if seconds is None:
            self.elapsed_label.setText("")
            return
        going = shown.run is not None and shown.run.finished_at is None
        limit = settings.max_run_seconds if settings is not None and shown.live else 0
        of = f" of {format_elapsed(limit)}" if limit and going else ""
        self.elapsed_label.setText(format_elapsed(seconds) + of)

    def _settings(self) -> Settings | None:
        return self.client.host.settings if self.client is not None else None

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

    @property
    def painted(self) -> bool:
        return self._painted

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
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
        worker = self.worker
        if worker is not None:
            worker.cancel()
            await worker.wait()
        import asyncio

        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.loader.shutdown()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run `coro` on the loop, keeping a reference and logging what it raises."""
        import asyncio

        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            log.error("window task failed", exc_info=error)
            self.set_status(f"Error: {one_line(error)}")
