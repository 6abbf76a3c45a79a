"""The desktop app's composition root: Qt + asyncio (qasync), the Agent, windows, tray and API.

Start-up order keeps the first paint fast: Qt and the main window first (no store, no
model client, no desktop adapters imported), then — once the window has painted — the
settings, the Agent (store, adapters), the local API, the tray and the stop hotkey.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from desktop_agent.core.errors import DesktopAgentError
from desktop_agent.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StepFinished,
    StepStarted,
    TaskLoopEvent,
)
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    RunStatus,
    RunView,
    StepKind,
    StepView,
)
from desktop_agent.core.permissions import DEFAULT_POLICY
from desktop_agent.ui.text import one_line, shorten

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.settings import Settings
    from desktop_agent.ui.acting_panel import ActingPanel
    from desktop_agent.ui.main_window import MainWindow
    from desktop_agent.ui.tray import TrayController

log = logging.getLogger("desktop_agent.app")

APP_NAME = "desktop-agent"
#: how long a second launch waits for the first instance to take its message
INSTANCE_TIMEOUT_MS = 500
#: how long the app waits for its first paint before loading the rest anyway
FIRST_PAINT_TIMEOUT_S = 2.0
#: how long to wait for the window manager to take the minimised window off the screen
OFF_SCREEN_TIMEOUT_S = 1.0
#: and then for its iconify animation and the compositor to catch up
OFF_SCREEN_SETTLE_S = 0.05
#: what the app needs after its first paint (openai is left to the first run)
HEAVY_MODULES = (
    "desktop_agent.agent",
    "desktop_agent.store",
    "desktop_agent.desktop",
    "desktop_agent.planner",
    "desktop_agent.api.server",
)


def run_app(argv: list[str], data_dir: str | Path | None = None) -> int:
    """Open the app on `data_dir` (default: DESKTOP_AGENT_HOME, else the user data dir).

    Returns the process's exit code; 0 also when another instance on the same data
    dir was asked to come to the front instead.
    """
    from desktop_agent.settings import make_data_dir, resolve_data_dir

    directory = resolve_data_dir(data_dir)
    try:
        make_data_dir(directory)
    except OSError as error:
        sys.stderr.write(f"desktop-agent: data dir {directory} cannot be made: {error.strerror}\n")
        return 3
    _log_to_file(directory)
    problem = _display_problem(os.environ)
    if problem:
        log.error("%s", problem)
        sys.stderr.write(f"desktop-agent: {problem}\n")
        return 3

    import qasync
    from PySide6.QtWidgets import QApplication

    # argv[0] names the X11 WM_CLASS instance: "desktop-agent", not "__main__.py"
    app = QApplication.instance() or QApplication([APP_NAME, *argv])
    assert isinstance(app, QApplication)
    app.setApplicationName(APP_NAME)
    app.setDesktopFileName(APP_NAME)
    app.setQuitOnLastWindowClosed(False)

    guard = InstanceGuard(directory)
    if guard.signal_running():
        log.info("another instance runs on %s; asked it to come to the front", directory)
        return 0
    guard.listen()

    from desktop_agent.ui.main_window import MainWindow

    window = MainWindow()
    window.first_painted.connect(_log_first_paint)
    window.show()
    report = ErrorReporter(window)
    previous_hook, sys.excepthook = sys.excepthook, report.on_uncaught  # a slot's exception
    try:
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            runner.get_loop().set_exception_handler(report.on_loop_error)
            return runner.run(_serve(window, guard, directory))
    finally:
        sys.excepthook = previous_hook


async def _serve(window: MainWindow, guard: InstanceGuard, data_dir: Path) -> int:
    loop = asyncio.get_running_loop()
    shutdown: asyncio.Future[int] = loop.create_future()

    def quit_app(code: int = 0) -> None:
        if not shutdown.done():
            log.info("shutting down")
            shutdown.set_result(code)

    for signum in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(signum, quit_app)
        except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
            log.debug("no handler for signal %s here", signum)
    window.quit_requested.connect(quit_app)
    guard.raise_requested.connect(window.on_show_requested)

    await _first_paint(window)
    # import the heavy parts on a worker thread: the window keeps painting meanwhile
    await asyncio.to_thread(_preload, HEAVY_MODULES)
    agent = await _open_agent(window, data_dir)
    if agent is None:
        code = await shutdown
        await _close_window(window)
        guard.close()
        return code
    desktop = DesktopApp(window, agent, quit_app=quit_app)
    try:
        await desktop.start_services()
        code = await shutdown
    finally:
        await desktop.close()
        guard.close()
    return code


async def _first_paint(window: MainWindow) -> None:
    if window.painted:
        return
    painted: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_painted() -> None:
        if not painted.done():
            painted.set_result(None)

    window.first_painted.connect(on_painted)
    try:
        await asyncio.wait_for(painted, FIRST_PAINT_TIMEOUT_S)
    except TimeoutError:
        log.info("no paint within %.1f s (minimised?); going on", FIRST_PAINT_TIMEOUT_S)


async def _open_agent(window: MainWindow, data_dir: Path) -> Agent | None:
    """Settings (defaults when the file is bad, said in the window) and the Agent."""
    from desktop_agent.agent import Agent
    from desktop_agent.settings import Settings, load_settings

    notice = ""
    try:
        settings = await asyncio.to_thread(load_settings)
    except DesktopAgentError as error:
        settings = Settings()
        notice = f"Settings not loaded, using the defaults: {one_line(error)}"
        log.warning("%s", notice)
    try:
        agent = await Agent.open(data_dir, settings)
    except Exception as error:  # noqa: BLE001 - the window stays up and says what is wrong
        what = one_line(error)
        if not isinstance(error, DesktopAgentError):
            log.exception("the agent could not be opened")
        message = f"Cannot open the agent on {data_dir}: {what}"
        log.error("%s", message)
        window.set_status(message)
        window.panel.show_error(message)
        return None
    window.bind(agent)
    if notice:
        window.show_notice(notice)
    return agent


async def _close_window(window: MainWindow) -> None:
    await window.shutdown()
    window.allow_close()
    window.close()


class DesktopApp(QObject):
    """Wires the Agent to what the user sees beyond the main window.

    Approvals open the approval dialog (the window comes to the front meanwhile); a run
    that starts acting minimises the window (setting `minimize_while_acting`) and shows
    the acting panel until it ends; the tray follows the runs' state and says when a run
    ends; Stop all (window, tray, hotkey) stops every run here and in every other
    instance on the data dir; Settings… opens the settings dialog and applies what it saves.

    Attributes:
        window: the main window.
        agent: the services.
        tray: the tray icon (or its menu only, where there is no tray).
        acting_panel: the small always-on-top panel shown while acting.
        api: the local API server, once started (None when it could not start).
        notices: what the user was told once at start-up (no tray, no hotkey, ...).
    """

    def __init__(
        self,
        window: MainWindow,
        agent: Agent,
        *,
        quit_app: Callable[[], None],
        tray: TrayController | None = None,
        acting_panel: ActingPanel | None = None,
    ) -> None:
        super().__init__(window)
        from desktop_agent.ui.acting_panel import ActingPanel
        from desktop_agent.ui.tray import TrayController

        self.window = window
        self.agent = agent
        self.tray = tray if tray is not None else TrayController(self)
        self.acting_panel = acting_panel if acting_panel is not None else ActingPanel()
        self.api: Any = None
        self.notices: list[str] = []
        self._quit_app = quit_app
        self._hotkey: Any = None
        self._told: set[str] = set()
        self._acting: dict[str, RunView] = {}
        self._minimised_by_us = False
        self._last_failed = False
        self._dialogs: dict[str, asyncio.Task[None]] = {}
        self._unsubscribe: list[Callable[[], None]] = []
        self._settings_dialog: Any = None
        self._services_started = False
        self.window.hide_on_close = self.tray.available
        self.window.before_run = self.prepare_to_act
        self._connect_signals()

    def _connect_signals(self) -> None:
        window, tray = self.window, self.tray
        window.stop_all_requested.connect(self.on_stop_all_requested)
        window.settings_requested.connect(self.on_settings_requested)
        window.hidden_to_tray.connect(self.on_hidden_to_tray)
        window.quit_requested.connect(self.on_quit_requested)
        tray.show_requested.connect(window.on_show_requested)
        tray.pause_toggled.connect(self.on_pause_toggled)
        tray.stop_all_requested.connect(self.on_stop_all_requested)
        tray.quit_requested.connect(self.on_quit_requested)
        self.acting_panel.stop_requested.connect(self.on_acting_stop_requested)
        self._unsubscribe.append(self.agent.runner.subscribe(self.on_run_event))
        self._unsubscribe.append(self.agent.approvals.subscribe(self.on_approval_requested))

    # ── services ─────────────────────────────────────────────────────────────

    async def start_services(self) -> None:
        """The tray icon, the local API and the global stop hotkey; what fails is said once."""
        self._services_started = True
        if self.tray.available:
            self.tray.show()
        else:
            self.notices.append("No system tray here: closing the window quits the app.")
        await self._start_api()
        await self._start_hotkey()
        if self.notices:
            self.window.show_notice(" · ".join(self.notices))

    async def _start_api(self) -> None:
        try:
            from desktop_agent.api.server import ApiServer

            server = ApiServer(self.agent)
            port = await server.start()
        except (DesktopAgentError, OSError) as error:
            self.notices.append(f"Local API not served: {one_line(error)}")
            log.warning("local API not served: %s", error)
            return
        self.api = server
        log.info("app serves the local API on port %d", port)

    async def _start_hotkey(self) -> None:
        combo = self.agent.settings.stop_hotkey
        from desktop_agent.desktop.hotkey import HotkeyUnavailable, start_global_hotkey

        loop = asyncio.get_running_loop()
        try:
            # opening an X connection and grabbing keys are round trips: not on the GUI thread
            self._hotkey = await asyncio.to_thread(start_global_hotkey, combo, self.on_hotkey, loop)
        except HotkeyUnavailable as error:
            self.notices.append(f"Stop hotkey {combo} unavailable: {one_line(error)}")
            log.warning("stop hotkey %s unavailable: %s", combo, error)

    async def _stop_hotkey(self) -> None:
        hotkey, self._hotkey = self._hotkey, None
        if hotkey is not None:
            # joins the listener thread (up to 2 s): not on the GUI thread
            await asyncio.to_thread(hotkey.stop)

    async def close(self) -> None:
        """Stop every run of this app (stored stopped / user_stop), then everything else."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        for task in self._dialogs.values():
            task.cancel()
        await self.window.shutdown()  # also ends what the app spawned on it: dialogs, saves
        self.agent.stop_all()
        if self.api is not None:
            await self.api.close()
            self.api = None
        await self._stop_hotkey()
        self.acting_panel.hide()
        self.tray.dispose()
        await self.agent.close()
        self.window.allow_close()
        self.window.close()
        self.acting_panel.close()

    # ── runs ─────────────────────────────────────────────────────────────────

    def on_run_event(self, event: TaskLoopEvent) -> None:
        """Every event of every run in this process (window, API), as it happens."""
        if isinstance(event, StepStarted | StepFinished):
            if event.step.run_id in self._acting:
                self.acting_panel.set_step(describe_step(event.step, self._acting))
        elif isinstance(event, RunStarted):
            self._acting[event.run.id] = event.run
            self._last_failed = False
            self.window.history.model.upsert(event.run)
            if self.agent.settings.minimize_while_acting and not self._waiting_for_approval():
                self._get_out_of_the_way()
            self.acting_panel.show_for(event.run.goal)
        elif isinstance(event, RunPaused | RunResumed):
            self._acting[event.run.id] = event.run
            self.window.history.model.upsert(event.run)
            if isinstance(event, RunPaused):
                self.acting_panel.set_step("Paused — resume from the tray or the window")
        elif isinstance(event, ApprovalRequested):
            self.acting_panel.set_step(f"Waiting for your approval: {event.approval.tool}")
        elif isinstance(event, ApprovalResolved):
            self._approval_resolved(event.approval, event.decision, event.by)
        elif isinstance(event, RunFinished):
            self._run_finished(event.run)
        self._update_tray()

    def _run_finished(self, run: RunView) -> None:
        self._acting.pop(run.id, None)
        self._last_failed = run.status is RunStatus.FAILED
        self.window.history.model.upsert(run)
        from desktop_agent.ui.main_window import describe_outcome

        text = f"{shorten(run.goal, 80)}\n{describe_outcome(run)}"
        self.tray.notify(f"Run {run.status.value}", text)
        if not self._acting:
            self.acting_panel.hide()
            self._come_back()

    def _update_tray(self) -> None:
        runs = self._acting.values()
        if any(run.status is RunStatus.RUNNING for run in runs):
            state = "running"
        elif runs:
            state = "paused"
        else:
            state = "failed" if self._last_failed else "idle"
        if self.tray.state != state:
            self.tray.set_state(state)

    async def prepare_to_act(self) -> None:
        """Before a run of this window acts: minimise (setting), and wait until it is gone."""
        if self.agent.settings.minimize_while_acting:
            self._get_out_of_the_way()
            await self._until_off_screen()

    async def _until_off_screen(self) -> None:
        """Until the window manager has taken the window off the screen (at most 1 s), so
        the next screenshot shows the desktop and the keyboard focus is back on the app the
        user was in."""
        from PySide6.QtGui import QGuiApplication

        handle = self.window.windowHandle()
        if handle is None or QGuiApplication.platformName() in ("offscreen", "minimal"):
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + OFF_SCREEN_TIMEOUT_S
        # QWindow has no signal for losing its exposure: poll, briefly
        while handle.isExposed() and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        await asyncio.sleep(OFF_SCREEN_SETTLE_S)

    def _get_out_of_the_way(self) -> None:
        if self.window.isVisible() and not self.window.isMinimized():
            self.window.get_out_of_the_way()
            self._minimised_by_us = True

    def _come_back(self) -> None:
        if self._minimised_by_us:
            self._minimised_by_us = False
            self.window.bring_to_front()

    def on_pause_toggled(self, pause: bool) -> None:
        runner = self.agent.runner
        for run_id in runner.active_ids:
            if pause:
                runner.pause(run_id)
            else:
                runner.resume(run_id)

    def on_acting_stop_requested(self) -> None:
        for run_id in list(self._acting):
            self.agent.runner.stop(run_id)

    def on_stop_all_requested(self) -> None:
        self.stop_everything()

    def on_hotkey(self) -> None:
        """The global stop hotkey (delivered on the asyncio loop by the hotkey listener)."""
        log.info("stop hotkey pressed")
        self.stop_everything()

    def stop_everything(self) -> None:
        """Stop every run of this app and of every other instance on the data dir."""
        stopped = self.agent.stop_all()
        self.window.set_status(f"Stopping {stopped} run(s) here; telling other instances…")
        self.window.spawn(self._stop_other_instances(stopped))

    async def _stop_other_instances(self, here: int) -> None:
        from desktop_agent.api.instances import stop_all_instances

        elsewhere = await stop_all_instances(self.agent.data_dir, exclude_pid=os.getpid())
        self.window.set_status(f"Stop all: {here} run(s) here, {elsewhere} in other instances.")

    def on_hidden_to_tray(self) -> None:
        if "tray" not in self._told:
            self._told.add("tray")
            self.tray.notify("Desktop Agent is still running", "Quit it from the tray icon's menu.")

    def on_quit_requested(self) -> None:
        self._quit_app()

    # ── approvals ────────────────────────────────────────────────────────────

    def on_approval_requested(self, request: ApprovalRequest) -> None:
        """A run waits for a human: bring the window back and open the approval dialog."""
        self.window.bring_to_front()
        self._dialogs[request.id] = self.window.spawn(self._ask(request))

    async def _ask(self, request: ApprovalRequest) -> None:
        from desktop_agent.ui.approval import ask_approval

        try:
            try:
                decision = await ask_approval(
                    self.window, request, self.agent.data_dir, loader=self.window.loader
                )
            except Exception as error:  # noqa: BLE001 - the run must not wait for the timeout
                log.exception("the approval dialog for %s failed", request.tool)
                self.window.show_notice(
                    f"{request.tool} denied: the approval dialog failed: {one_line(error)}"
                )
                decision = ApprovalDecision.DENY
            if request.run_id in self._acting and len(self._dialogs) == 1:
                # the run acts again right after the answer: be gone before it does
                await self.prepare_to_act()
        finally:
            self._dialogs.pop(request.id, None)
        self.agent.approvals.resolve(request.id, decision)

    def _approval_resolved(
        self, request: ApprovalRequest, decision: ApprovalDecision, by: str
    ) -> None:
        task = self._dialogs.pop(request.id, None)
        if task is not None:  # answered elsewhere (API, timeout): close our dialog
            task.cancel()
        if request.run_id in self._acting:
            what = {"once": "allowed", "run": "allowed for this run", "deny": "denied"}
            self.acting_panel.set_step(f"{request.tool} {what[decision.value]} ({by})")
        if (
            self._acting
            and not self._waiting_for_approval()
            and self.agent.settings.minimize_while_acting
        ):
            self._get_out_of_the_way()

    def _waiting_for_approval(self) -> bool:
        return bool(self._dialogs)

    # ── settings ─────────────────────────────────────────────────────────────

    def on_settings_requested(self) -> None:
        from desktop_agent.ui.settings_dialog import SettingsDialog

        if self._settings_dialog is not None and self._settings_dialog.isVisible():
            self._settings_dialog.raise_()
            return
        dialog = SettingsDialog(
            self.window, self.agent.settings, test_connection=self.test_connection
        )
        dialog.saved.connect(self.on_settings_saved)
        self._settings_dialog = dialog
        dialog.open()

    def on_settings_saved(self, settings: Settings) -> None:
        self.window.spawn(self.apply_settings(settings))

    async def apply_settings(self, settings: Settings, *, save: bool = True) -> None:
        """Save the settings and use them from the next run on."""
        from desktop_agent.settings import save_settings

        previous = self.agent.settings
        unsaved = ""
        if save:
            try:
                path = await asyncio.to_thread(save_settings, settings)
            except (DesktopAgentError, OSError) as error:
                # used anyway for this session: what the user chose is not lost on a full disk
                unsaved = f"Settings used until the app quits, but not saved: {one_line(error)}"
                log.error("%s", unsaved)
            else:
                log.info("settings saved to %s", path)
        self.agent.settings = settings
        for spec in self.agent.registry.specs():
            policy = settings.policies.get(spec.name, DEFAULT_POLICY[spec.risk])
            self.agent.permissions.set_policy(spec.name, policy)
        self.agent.runner.services.approval_timeout_s = settings.approval_timeout_s
        notices = [unsaved] if unsaved else []
        if settings.stop_hotkey != previous.stop_hotkey and self._services_started:
            # also when the old combination could not be grabbed: the new one may be free
            await self._stop_hotkey()
            self.notices.clear()
            await self._start_hotkey()
            notices += self.notices
        capture = ("capture_width", "capture_format", "jpeg_quality", "monitor", "set_of_mark")
        if any(getattr(settings, name) != getattr(previous, name) for name in capture):
            notices.append("Capture settings take effect when the app is started again.")
        if notices:
            self.window.show_notice(" · ".join(notices))
        self.window.apply_settings()

    async def test_connection(self, settings: Settings) -> str:
        """Reachability and vision of the model the dialog shows (no chat request)."""
        from desktop_agent.planner import VisionCache, check_reachable, resolve_vision
        from desktop_agent.settings import get_api_key

        api_key = await asyncio.to_thread(get_api_key, settings)
        await check_reachable(settings.base_url, api_key)
        verdict = await resolve_vision(
            base_url=settings.base_url,
            model=settings.model,
            api_key=api_key,
            setting=settings.vision,
            cache=VisionCache(),
        )
        sees = "can see screenshots" if verdict.can_see else "cannot see screenshots"
        return f"The server answers; {settings.model} {sees} ({verdict.detail})."


class ErrorReporter:
    """What nothing else caught — an exception in a Qt slot (PySide hands it to
    sys.excepthook) or in a callback or unretrieved task of the loop — is logged with its
    traceback and said in one line in the status bar, never only printed to stderr.

    Attributes:
        window: where the line is shown.
    """

    def __init__(self, window: MainWindow) -> None:
        self.window = window

    def on_uncaught(
        self, kind: type[BaseException], error: BaseException, trace: TracebackType | None
    ) -> None:
        log.error("uncaught exception in a slot", exc_info=(kind, error, trace))
        self._show(error)

    def on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        message = context.get("message", "asyncio error")
        if isinstance(error, BaseException):
            log.error("%s", message, exc_info=(type(error), error, error.__traceback__))
            self._show(error)
        else:
            log.error("%s", message)
            self._show(message)

    def _show(self, what: BaseException | str) -> None:
        if shiboken6.isValid(self.window):  # gone once the app has quit
            self.window.set_status(f"Error: {one_line(what)}")


def describe_step(step: StepView, runs: dict[str, RunView]) -> str:
    """The acting panel's line, e.g. "Turn 3/20 · click {"x":640,"y":512}"."""
    run = runs.get(step.run_id)
    limit = f"/{run.max_steps}" if run is not None else ""
    if step.kind is StepKind.OBSERVE:
        what = "looking at the screen"
    elif step.kind is StepKind.DECIDE:
        what = "deciding" if step.tool is None else f"chose {step.tool}"
    else:
        what = f"{step.tool} {step.short_args(36)}".strip()
    if step.error:
        what += f" — {step.error}"
    return f"Turn {step.index}{limit} · {what}"


class InstanceGuard(QObject):
    """One app per data dir: a local socket named from the data dir's hash.

    A second launch connects, asks the first to come to the front, and exits.

    Signals:
        raise_requested: another launch on the same data dir asked for the window.

    Attributes:
        name: the local socket's name.
    """

    raise_requested = Signal()

    def __init__(self, data_dir: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        owner = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "")
        digest = hashlib.sha256(f"{owner}:{data_dir.resolve()}".encode()).hexdigest()[:16]
        self.name = f"desktop-agent-{digest}"
        self._server: QLocalServer | None = None
        self._sockets: set[QLocalSocket] = set()

    def signal_running(self) -> bool:
        """True when another instance took our "raise" message."""
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(INSTANCE_TIMEOUT_MS):
            return False
        socket.write(b"raise\n")
        sent = socket.waitForBytesWritten(INSTANCE_TIMEOUT_MS)
        socket.disconnectFromServer()
        return sent

    def listen(self) -> bool:
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            # a socket file left by a crashed instance: nobody answered on it above
            QLocalServer.removeServer(self.name)
            if not server.listen(self.name):
                log.warning("single-instance socket %s: %s", self.name, server.errorString())
                return False
        server.newConnection.connect(self.on_new_connection)
        self._server = server
        return True

    def on_new_connection(self) -> None:
        server = self._server
        while server is not None and server.hasPendingConnections():
            socket = server.nextPendingConnection()
            self._sockets.add(socket)
            socket.readyRead.connect(self.on_ready_read)
            socket.disconnected.connect(self.on_socket_disconnected)

    def on_ready_read(self) -> None:
        socket = self.sender()
        if isinstance(socket, QLocalSocket) and b"raise" in bytes(socket.readAll().data()):
            log.info("another launch on this data dir asked for the window")
            self.raise_requested.emit()

    def on_socket_disconnected(self) -> None:
        socket = self.sender()
        if isinstance(socket, QLocalSocket):
            self._sockets.discard(socket)

    def close(self) -> None:
        server, self._server = self._server, None
        for socket in self._sockets:
            socket.readyRead.disconnect(self.on_ready_read)
            socket.disconnected.disconnect(self.on_socket_disconnected)
            socket.abort()
        self._sockets.clear()
        if server is not None:
            server.close()


def _display_problem(env: dict[str, str] | os._Environ[str]) -> str | None:
    """Why Qt could not open a window here (it would abort the process), or None."""
    if not sys.platform.startswith("linux") or env.get("WAYLAND_DISPLAY"):
        return None
    platform = env.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None
    name = env.get("DISPLAY")
    hint = "run it in a desktop session, or use `desktop-agent run` for a run without a window"
    if not name:
        return f"no display to open the window on (DISPLAY is not set); {hint}"
    reason = _x_server_refuses(name)
    if reason:
        return f"cannot open the display {name!r} ({reason}); {hint}"
    return None


def _x_server_refuses(name: str) -> str | None:
    """For a local display (":0", "unix:0.0"): why its socket takes no connection, or None.

    A plain connect() costs well under a millisecond, where importing an X library would
    cost tens on the way to the first paint; remote displays are left to Qt.
    """
    import re
    import socket

    match = re.fullmatch(r"(?:unix)?:(\d+)(?:\.\d+)?", name)
    if match is None:
        return None
    path = f"/tmp/.X11-unix/X{match.group(1)}"
    reasons = []
    for address in (path, "\0" + path):  # the socket file, then the abstract one
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(1.0)
            try:
                probe.connect(address)
            except OSError as error:
                reasons.append(error.strerror or str(error))
                continue
            return None
    return f"{reasons[0]}: {path}"


def _preload(modules: tuple[str, ...]) -> None:
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the real import later says what is wrong
            log.exception("preloading %s failed", name)


def _log_first_paint() -> None:
    log.info("first window painted at %.3f", time.time())


def _log_to_file(data_dir: Path) -> None:
    from desktop_agent.logs import log_to_file

    log_to_file(data_dir, logger=logging.getLogger("desktop_agent"))
