"""The desktop app's composition root: Qt + asyncio (qasync), the Agent, windows, tray and API.

Start-up order keeps the first paint fast: Qt and the main window first, painted by Qt's own
loop (no asyncio, no store, no model client, no desktop adapters imported), then — once the
window has painted — asyncio on the Qt loop, the settings, the Agent (store, adapters), the
local API, the tray and the stop hotkey.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Slot

from desktop_agent.core.errors import DesktopAgentError
from desktop_agent.host.display import display_problem as _display_problem
from desktop_agent.host.display import windows_on_the_accessibility_bus
from desktop_agent.ui.single_instance import InstanceGuard
from desktop_agent.ui.text import in_words, one_line, shorten

if TYPE_CHECKING:
    import asyncio

    from desktop_agent.core.events import TaskLoopEvent
    from desktop_agent.host.engine import Engine
    from desktop_agent.host.host import LocalApi
    from desktop_agent.ui.acting_panel import ActingPanel
    from desktop_agent.ui.collector import GuiThreadCollector
    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.main_window import MainWindow
    from desktop_agent.ui.tray import TrayController

log = logging.getLogger("desktop_agent.app")

APP_NAME = "desktop-agent"
#: how long the app waits for its first paint before loading the rest anyway
FIRST_PAINT_TIMEOUT_S = 2.0
#: what the GUI thread's asyncio loop (qasync) needs of the standard library, imported on a
#: worker thread right after the first paint while Qt's own loop goes on
LOOP_MODULES = ("asyncio", "concurrent.futures", "inspect", "queue")
#: what the window's Start needs after the first paint: the host with its store, settings and
#: desktop adapters, and the planner's model check that the window asks once bound (openai is
#: left to the first run). Not the local API's server: aiohttp is ~0.2 s of imports, made on a
#: worker thread while Start is already on (Host.serve_api)
HEAVY_MODULES = (
    "desktop_agent.agent",
    "desktop_agent.store",
    "desktop_agent.desktop",
    "desktop_agent.host.host",
    "desktop_agent.settings",
    "desktop_agent.planner",
    "desktop_agent.planner.discovery",
    # the app's parts around the engine (DesktopApp): modules only, their widgets are made on
    # the GUI thread
    "desktop_agent.ui.engine_client",
    "desktop_agent.ui.acting",
    "desktop_agent.ui.acting_panel",
    "desktop_agent.ui.approval_flow",
    "desktop_agent.ui.model_servers",
    "desktop_agent.ui.routines_flow",
    "desktop_agent.ui.runs_state",
    "desktop_agent.ui.settings_flow",
    "desktop_agent.ui.tray",
)


#: the desktops on which Qt takes GTK 3's platform theme (the "gtk3" plugin, and GTK 3 with it):
#: qtbase src/gui/platform/unix/qgenericunixtheme.cpp, QGenericUnixTheme::themeNames,
#: gtkBasedEnvironments
GTK_DESKTOPS = frozenset({"GNOME", "X-CINNAMON", "PANTHEON", "UNITY", "MATE", "XFCE", "LXDE"})


def qt_theme_arguments(env: Mapping[str, str], argv: Sequence[str]) -> list[str]:
    """Qt's `-platformtheme gnome` where Qt would take GTK 3's theme, else nothing.

    On a GTK-based desktop (GNOME, Ubuntu's "ubuntu:GNOME", Cinnamon, MATE, Xfce…) Qt loads
    the gtk3 theme plugin and GTK 3 with it before the first paint (35-70 ms of CPU here,
    benchmarks/README.md, "Issue 22, the app's start on a GNOME desktop, fourth session"). The
    bundle leaves that plugin out (packaging/desktop-agent.spec), so Qt takes its own GNOME
    theme there; the source and a `pip install` take the same. An argument of our
    QApplication, not QT_QPA_PLATFORMTHEME: a program the agent launches inherits our
    environment (desktop/launch.py program_env) and keeps its own theme. A theme the user
    chose (QT_QPA_PLATFORMTHEME, or -platformtheme on our command line) is kept. The desktop
    is read as Qt reads it (qtbase src/gui/platform/unix/qdesktopunixservices.cpp,
    detectDesktopEnvironment; a DESKTOP_SESSION given as a path is read by its base name).
    """
    if sys.platform in ("win32", "darwin") or env.get("QT_QPA_PLATFORMTHEME"):
        return []
    if "-platformtheme" in argv or "--platformtheme" in argv:
        return []
    if set(_qt_desktop(env).split(":")) & GTK_DESKTOPS:
        return ["-platformtheme", "gnome"]
    return []


def _qt_desktop(env: Mapping[str, str]) -> str:
    """The desktop's name(s) as Qt's detectDesktopEnvironment makes them ("UBUNTU:GNOME")."""
    if env.get("XDG_CURRENT_DESKTOP"):
        return env["XDG_CURRENT_DESKTOP"].upper()
    if env.get("KDE_FULL_SESSION"):
        return "KDE"
    if env.get("GNOME_DESKTOP_SESSION_ID"):
        return "GNOME"
    session = env.get("DESKTOP_SESSION", "").rpartition("/")[2]
    return {"gnome": "GNOME", "xfce": "XFCE", "kde": "KDE"}.get(session, "UNKNOWN")


def run_app(
    argv: list[str], data_dir: str | Path | None = None, *, local_api: LocalApi | None = None
) -> int:
    """Open the app on `data_dir` (default: DESKTOP_AGENT_HOME, else the user data dir);
    `local_api`: the local API it serves (the top floor's, desktop_agent/launch.py).

    Returns the process's exit code; 0 also when another instance on the same data
    dir was asked to come to the front instead.
    """
    # not desktop_agent.settings: pydantic is not on the way to the first paint
    from desktop_agent.store.data_dir import ForeignDataDir, make_data_dir, resolve_data_dir

    directory = resolve_data_dir(data_dir)
    try:
        make_data_dir(directory)
    except ForeignDataDir as error:
        return refuse_to_start(str(error))
    except OSError as error:
        return refuse_to_start(
            QCoreApplication.translate(
                "App", "data dir {directory} cannot be made: {error}"
            ).format(directory=directory, error=error.strerror)
        )
    _log_to_file(directory)
    problem = _display_problem(os.environ)
    if problem:
        return refuse_to_start(problem)

    from PySide6.QtWidgets import QApplication

    windows_on_the_accessibility_bus()
    # argv[0] names the X11 WM_CLASS instance: "desktop-agent", not "__main__.py"
    app = QApplication.instance() or QApplication(
        [APP_NAME, *qt_theme_arguments(os.environ, argv), *argv]
    )
    assert isinstance(app, QApplication)
    app.setApplicationName(APP_NAME)
    app.setDesktopFileName(APP_NAME)
    app.setQuitOnLastWindowClosed(False)
    # the language before the first widget: every text is translated as it is made
    from PySide6.QtCore import QLocale

    from desktop_agent.ui.i18n import install, language_setting, resolve

    install(app, resolve(language_setting(), QLocale.system().name()))

    guard = InstanceGuard(directory)
    if guard.signal_running():
        log.info("another instance runs on %s; asked it to come to the front", directory)
        return 0
    guard.listen()

    from desktop_agent.ui.main_window import MainWindow

    window = MainWindow()
    window.first_painted.connect(_log_first_paint)
    guard.raise_requested.connect(window.on_show_requested)
    # Stop all answers from the first paint, while the app's loop is still imported: kept
    # until the loop runs, then carried out (_serve)
    pressed = PressedEarly(window)
    window.show()
    if _until_first_paint(window) == "closed":
        guard.close()
        return 0

    from desktop_agent.ui.collector import collect_on_gui_thread

    # Python's cycle collection runs on this (the GUI) thread only, never on the engine's
    # or another worker's, where it would free Qt objects (ui/collector.py): from the first
    # paint on, before which no other thread of the app runs Python (the entry point has
    # the automatic collector off until then: nothing is collected on the way to the paint)
    with collect_on_gui_thread() as collector:
        # asyncio and qasync come after the first paint: the window does not wait for them,
        # and asyncio's imports (50-60 ms of CPU) are not made on this thread either
        with collector.paused():  # the imports live as long as the app (see _serve)
            imported = _import_while_qt_runs(window, LOOP_MODULES)
        if imported == "closed":
            guard.close()
            return 0
        import asyncio

        import qasync

        report = ErrorReporter(window)
        previous_hook, sys.excepthook = sys.excepthook, report.on_uncaught  # a slot's exception
        try:
            with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
                runner.get_loop().set_exception_handler(report.on_loop_error)
                serving = _serve(
                    window,
                    guard,
                    directory,
                    collector=collector,
                    pressed=pressed,
                    local_api=local_api,
                )
                return runner.run(serving)
        finally:
            sys.excepthook = previous_hook


def _until_first_paint(window: MainWindow) -> str:
    """Run Qt's own loop until the window has painted ("painted"), was closed ("closed"), or
    FIRST_PAINT_TIMEOUT_S passed ("timeout": minimised, or a display that never exposes it;
    the app goes on)."""
    from PySide6.QtCore import QEventLoop, QTimer

    if window.painted:
        return "painted"
    outcome = "timeout"
    loop = QEventLoop()

    def on_painted() -> None:
        nonlocal outcome
        outcome = "painted"
        loop.quit()

    def on_closed() -> None:
        nonlocal outcome
        outcome = "closed"
        loop.quit()

    window.first_painted.connect(on_painted)
    window.quit_requested.connect(on_closed)
    QTimer.singleShot(int(FIRST_PAINT_TIMEOUT_S * 1000), loop.quit)
    try:
        loop.exec()
    finally:
        window.first_painted.disconnect(on_painted)
        window.quit_requested.disconnect(on_closed)
    if outcome == "timeout":
        log.info("no paint within %.1f s (minimised?); going on", FIRST_PAINT_TIMEOUT_S)
    return outcome


def _import_while_qt_runs(window: MainWindow, modules: tuple[str, ...]) -> str:
    """Import `modules` on a worker thread while Qt's own loop runs on this one (the window
    paints and answers); "imported" once they are (or failed: the real import says what is
    wrong), "closed" when the window was closed meanwhile (the app quits)."""
    import threading

    from PySide6.QtCore import QEventLoop, QTimer

    worker = threading.Thread(
        target=_preload, args=(modules,), name="desktop-agent-imports", daemon=True
    )
    outcome = "imported"
    loop = QEventLoop()

    def on_closed() -> None:
        nonlocal outcome
        outcome = "closed"
        loop.quit()

    def look() -> None:
        if not worker.is_alive():
            loop.quit()

    watch = QTimer()
    watch.setInterval(2)
    watch.timeout.connect(look)
    window.quit_requested.connect(on_closed)
    worker.start()
    watch.start()
    try:
        loop.exec()
    finally:
        watch.stop()
        window.quit_requested.disconnect(on_closed)
    worker.join()
    return outcome


async def _serve(
    window: MainWindow,
    guard: InstanceGuard,
    data_dir: Path,
    *,
    collector: GuiThreadCollector | None = None,
    pressed: PressedEarly | None = None,
    local_api: LocalApi | None = None,
) -> int:
    """The app from its loop's start to its end. `pressed`: Stop all pressed before the loop
    ran (carried out here, once the stop-all mark the engine is given was read)."""
    import asyncio
    import signal

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
    # the stop-all mark before Stop all can be pressed: one from now on (the window's own, or
    # another process's while this app is not registered) stops what the engine is asked for
    # first, the window's model check (Host.open's stop_mark)
    from desktop_agent.instances.stop_all import read_stop_mark

    stop_mark = read_stop_mark(str(data_dir))
    # Stop all can be pressed in the painted window before the engine is up: the other
    # instances on the data dir are told at once (this app has no run yet)
    stop_early = partial(_stop_other_instances, window, data_dir)
    window.stop_all_requested.connect(stop_early)
    if pressed is not None:
        pressed.hand_over(stop_early)

    engine: Engine | None = None
    desktop: DesktopApp | None = None
    try:
        # what the start imports and builds lives as long as the app: no collection over it
        # until the engine and its services are up (ui/collector.py, `paused`)
        with collector.paused() if collector is not None else contextlib.nullcontext():
            # what Start needs, imported on a worker thread: the window keeps painting
            await asyncio.to_thread(_preload, HEAVY_MODULES)
            from desktop_agent.host.engine import Engine

            engine = Engine().start()
            client = await _open_client(window, engine, data_dir, stop_mark, local_api)
            if client is not None:
                desktop = DesktopApp(window, client, quit_app=quit_app)
                window.stop_all_requested.disconnect(stop_early)  # the app's stop-all has it
                _log_ready()
                await desktop.start_services()
        code = await shutdown
        if desktop is None:  # the agent could not be opened: the window said why
            await _close_window(window)
        return code
    finally:
        if desktop is not None:
            await desktop.close()
        if engine is not None:
            await asyncio.to_thread(engine.close)  # idempotent: the client closed it already
        guard.close()


class PressedEarly:
    """Stop all pressed in the painted window before the app's asyncio loop runs (asyncio and
    qasync are imported on a worker thread meanwhile, `_import_while_qt_runs`, while Qt's own
    loop answers the user): no press is lost; `hand_over` carries them out as the loop starts.
    """

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.count = 0
        window.stop_all_requested.connect(self.press)

    def press(self) -> None:
        self.count += 1

    def hand_over(self, stop: Callable[[], None]) -> None:
        """From now on `stop` answers Stop all (connected by the caller); call it once now
        for the presses kept."""
        self.window.stop_all_requested.disconnect(self.press)
        if self.count:
            log.info("Stop all was pressed while the app started: carried out now")
            stop()


def _stop_other_instances(window: MainWindow, data_dir: Path) -> None:
    """Stop all before the engine is up: every other instance on the data dir stops its runs."""

    async def stop() -> None:
        from desktop_agent.instances.registry import stop_all_instances

        try:
            elsewhere = await stop_all_instances(data_dir, exclude_pid=os.getpid())
        except Exception as error:  # noqa: BLE001 - said; the window stays usable
            log.exception("stop all before the engine was up failed")
            window.set_status(
                QCoreApplication.translate("App", "Stop all failed: {error}").format(
                    error=one_line(error)
                )
            )
            return
        window.set_status(
            QCoreApplication.translate(
                "App", "Stop all: {count} run(s) in other instances."
            ).format(count=elsewhere)
        )

    window.set_status(QCoreApplication.translate("App", "Stopping every run on this data dir…"))
    window.spawn(stop())


async def _open_client(
    window: MainWindow,
    engine: Engine,
    data_dir: Path,
    stop_mark: str | None = None,
    local_api: LocalApi | None = None,
) -> EngineClient | None:
    """Settings (defaults when the file is bad, said in the window) and the Host, opened on
    the engine by `Host.serving` as every face's is (held there until the client closes:
    `Engine.hold`, so the GUI thread only awaits); the GUI's client of it. `stop_mark`: the
    stop-all mark as the app began to load (Host.open)."""
    import asyncio

    from desktop_agent.host.host import Host
    from desktop_agent.settings import Settings, load_settings
    from desktop_agent.ui.engine_client import EngineClient

    notice = ""
    try:
        settings = await asyncio.to_thread(load_settings)
    except DesktopAgentError as error:
        settings = Settings()
        notice = f"Settings not loaded, using the defaults: {one_line(error)}"
        log.warning("%s", notice)
    try:
        held = await engine.hold(
            Host.serving(data_dir, settings, stop_mark=stop_mark, local_api=local_api)
        )
    except Exception as error:  # noqa: BLE001 - the window stays up and says what is wrong
        what = one_line(error)
        if not isinstance(error, DesktopAgentError):
            log.exception("the agent could not be opened")
        message = f"Cannot open the agent on {data_dir}: {what}"
        log.error("%s", message)
        window.set_status(message)
        window.panel.show_error(message)
        return None
    client = EngineClient(engine, held.value, parent=window, close_host=held.leave)
    if notice:
        window.bar.show_notice(notice)
    return client


async def _close_window(window: MainWindow) -> None:
    await window.shutdown()
    window.allow_close()
    window.close()


class DesktopApp(QObject):
    """The app's parts around the engine, each with one job, wired once.

    - RunsState: the one channel of run events (the client's), that every view follows;
    - the main window: layout and the user's intents;
    - ActingController: the window out of the way while acting, the acting panel;
    - ApprovalController: the approval dialogs;
    - SettingsController: the settings dialog and applying what it saves;
    - RoutinesController: the Routines list's Run and Save as routine…;
    - ModelServersController: Find model servers… (and on the first start), setting the
      model chosen, a first task to try;
    - the tray, which follows RunsState and says when a run ends;
    - the services' lifetime: the local API and the global stop hotkey (on the engine).

    Stop all (window, tray, hotkey) stops every run here and in every other instance on
    the data dir.

    Attributes:
        window, client, runs, tray, acting_panel, acting, approvals, settings, servers: the
            parts.
        notices: what the user was told once at start-up (no tray, no hotkey, ...).
    """

    def __init__(
        self,
        window: MainWindow,
        client: EngineClient,
        *,
        quit_app: Callable[[], None],
        tray: TrayController | None = None,
        acting_panel: ActingPanel | None = None,
    ) -> None:
        super().__init__(window)
        from desktop_agent.ui.acting import ActingController
        from desktop_agent.ui.acting_panel import ActingPanel
        from desktop_agent.ui.approval_flow import ApprovalController
        from desktop_agent.ui.model_servers import ModelServersController
        from desktop_agent.ui.routines_flow import RoutinesController
        from desktop_agent.ui.runs_state import RunsState
        from desktop_agent.ui.settings_flow import SettingsController
        from desktop_agent.ui.tray import TrayController

        self.window = window
        self.client = client
        self.runs = RunsState()
        self.tray = tray if tray is not None else TrayController(self)
        self.acting_panel = acting_panel if acting_panel is not None else ActingPanel()
        self.acting = ActingController(
            window,
            self.acting_panel,
            self.runs,
            minimize=lambda: client.host.settings.minimize_while_acting,
        )
        self.approvals = ApprovalController(window, client, self.runs, self.acting)
        self.settings = SettingsController(window, client, self._restart_hotkey)
        self.routines = RoutinesController(window, client, self.runs)
        self.servers = ModelServersController(window, client, self.settings.apply_settings)
        self.settings.find_servers = self.servers.pick
        self.notices: list[str] = []
        self._quit_app = quit_app
        self._told: set[str] = set()
        self._services_started = False
        self._closed = False
        window.hide_on_close = self.tray.available
        self._services = ServicesComing()
        # not a method of this app: the window holding it would tie the two in a cycle
        window.before_run = partial(self._services.then, self.acting.prepare_to_act)
        window.bind(client, self.runs)
        self.runs.subscribe(self.on_run_event)
        self._connect_signals()

    def _connect_signals(self) -> None:
        window, tray, client = self.window, self.tray, self.client
        client.run_event.connect(self.runs.apply)  # the one stream every view follows
        window.stop_all_requested.connect(self.stop_everything)
        window.settings_requested.connect(self.settings.on_settings_requested)
        window.find_servers_requested.connect(self.servers.on_find_requested)
        window.hidden_to_tray.connect(self.on_hidden_to_tray)
        window.quit_requested.connect(self.on_quit_requested)
        tray.show_requested.connect(window.on_show_requested)
        tray.pause_toggled.connect(self.on_pause_toggled)
        tray.stop_all_requested.connect(self.stop_everything)
        tray.quit_requested.connect(self.on_quit_requested)
        self.acting_panel.stop_requested.connect(self.on_acting_stop_requested)

    # ── services ─────────────────────────────────────────────────────────────

    async def start_services(self) -> None:
        """The tray icon, the local API and the global stop hotkey; what fails is said once."""
        self._services_started = True
        with self._services.coming():
            await self._start_services()

    async def _start_services(self) -> None:
        from desktop_agent.host.host import Face

        if self.tray.available:
            self.tray.show()
        else:
            self.notices.append("No system tray here: closing the window quits the app.")
        host = self.client.host
        combo = host.settings.stop_hotkey
        # the Host's one start-up order (Host.turn_on); the engine's thread has no signals:
        # the app's own handlers quit it (main)
        served = await self.client.ask(
            host.turn_on, Face("app", api="full", api_optional=True, signals=False)
        )
        if served.api_problem:
            self.notices.append(f"Local API not served: {served.api_problem}")
        if not served.hotkey_armed:
            self.notices.append(f"Stop hotkey {combo} unavailable: {host.hotkey_problem}")
        if self.notices:
            self.window.bar.show_notice(" · ".join(self.notices))
        self.window.spawn(self.servers.open_on_first_start())

    async def _start_hotkey(self) -> list[str]:
        host = self.client.host
        combo = host.settings.stop_hotkey
        if await self.client.ask(host.grab_stop_hotkey, combo):
            return []
        return [f"Stop hotkey {combo} unavailable: {host.hotkey_problem}"]

    async def _restart_hotkey(self) -> list[str]:
        if not self._services_started:
            return []
        return await self._start_hotkey()

    async def close(self) -> None:
        """Stop every run of this app (stored stopped / user_stop), then everything else."""
        if self._closed:
            return
        self._closed = True
        window, panel = self.window, self.acting_panel
        self.approvals.close()
        self.servers.close()
        if shiboken6.isValid(panel):
            panel.hide()
        self.tray.dispose()
        await window.shutdown()  # also ends what the app spawned on it: dialogs, saves
        await self.client.close()  # runs, API, hotkey, store, desktop adapters, the engine
        # the widgets may be gone by now (a test's, or the process ending): close what is left
        if shiboken6.isValid(window):
            window.allow_close()
            window.close()
        if shiboken6.isValid(panel):
            panel.close()

    # ── runs ─────────────────────────────────────────────────────────────────

    def on_run_event(self, event: TaskLoopEvent) -> None:
        """The tray follows every run of this process (window, API); what the host says
        about the process goes where the user looks (status bar, tray)."""
        from desktop_agent.core.events import (
            ApprovalRequested,
            RunFinished,
            StopHotkeyChanged,
            StoppedEverything,
            TakeoverUnavailable,
            UserTookOver,
        )

        if isinstance(event, RunFinished):
            run = event.run
            from desktop_agent.ui.run_on_show import describe_outcome

            self.tray.notify(
                QCoreApplication.translate("App", "Run {status}").format(status=run.status.value),
                f"{shorten(run.goal, 80)}\n{describe_outcome(run)}",
            )
        elif isinstance(event, ApprovalRequested) and not self.window.isActiveWindow():
            # the question in plain words where the person may be looking (its dialog waits)
            self.tray.notify(
                QCoreApplication.translate("App", "Waiting for your approval"),
                in_words(event.approval.sentence),
            )
        elif isinstance(event, UserTookOver):
            self.tray.notify(
                QCoreApplication.translate("App", "Paused: you took over"),
                QCoreApplication.translate("App", "Resume from the tray or the window."),
            )
        elif isinstance(event, StoppedEverything):
            self.window.set_status(
                QCoreApplication.translate(
                    "App", "Stop all: {here} run(s) here, {elsewhere} in other instances."
                ).format(here=event.here, elsewhere=event.elsewhere)
            )
        elif isinstance(event, TakeoverUnavailable):
            why = event.why
            self.window.bar.show_notice(
                QCoreApplication.translate(
                    "App", "Your mouse and keyboard will not pause a run: {why}"
                ).format(why=why)
            )
        elif isinstance(event, StopHotkeyChanged):
            self.window.bar.set_hotkey_state(event.armed, event.why)
            self.tray.set_hotkey_state(event.armed, event.why)
        state = self.runs.tray_state
        if self.tray.state != state:
            self.tray.set_state(state)

    @Slot(bool)
    def on_pause_toggled(self, pause: bool) -> None:
        """The tray's Pause / Resume: every run of this app."""
        self.client.send(self.client.host.pause_all, pause)

    @Slot()
    def on_acting_stop_requested(self) -> None:
        """The acting panel's Stop: the window's, for every run of this app and what asks the
        model outside a run (a calibration, a model check, the look for servers)."""
        for run_id in list(self.runs.active):
            self.client.send(self.client.host.stop, run_id)
        self.client.send(self.client.host.stop_held_work)

    @Slot()
    def stop_everything(self) -> None:
        """Stop every run of this app and of every other instance on the data dir."""
        self.client.send(self.client.host.stop_everything)
        self.window.set_status(
            QCoreApplication.translate("App", "Stopping every run here; telling other instances…")
        )

    @Slot()
    def on_hidden_to_tray(self) -> None:
        if "tray" not in self._told:
            self._told.add("tray")
            self.tray.notify(
                QCoreApplication.translate("App", "Desktop Agent is still running"),
                QCoreApplication.translate("App", "Quit it from the tray icon's menu."),
            )

    @Slot()
    def on_quit_requested(self) -> None:
        self._quit_app()


class ServicesComing:
    """Whether the app's local API and stop hotkey are still being brought up. A run of the
    window acts once they are (`then`), as `run` waits for its own: a stop-all from another
    process and the hotkey reach it from its first action."""

    def __init__(self) -> None:
        # held only while they come: a future keeps its loop, whose Qt objects must not
        # outlive it
        self._coming: asyncio.Future[None] | None = None

    @contextlib.contextmanager
    def coming(self) -> Iterator[None]:
        import asyncio

        coming = self._coming = asyncio.get_running_loop().create_future()
        try:
            yield
        finally:
            self._coming = None
            coming.set_result(None)

    async def then(self, act: Callable[[], Awaitable[None]]) -> None:
        """Once the services are up (at once when none are coming), `act()`."""
        import asyncio

        coming = self._coming
        if coming is not None:
            await asyncio.shield(coming)
        await act()


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
            self.window.set_status(
                QCoreApplication.translate("App", "Error: {error}").format(error=one_line(what))
            )


def refuse_to_start(problem: str) -> int:
    """Say why the app cannot start and give its exit code (3): in the log, and on stderr —
    or, where there is none (the windowed Windows exe: sys.stderr is None), in a message box.
    """
    log.error("%s", problem)
    if sys.stderr is not None:
        sys.stderr.write(f"desktop-agent: {problem}\n")
    else:
        _message_box(
            QCoreApplication.translate("App", "Desktop Agent cannot start: {problem}").format(
                problem=problem
            )
        )
    return 3


def _message_box(text: str) -> None:
    """A modal error box where no console shows what went wrong (Windows, user32)."""
    if sys.platform != "win32":
        return  # only the windowed Windows exe runs without a stderr; the log has the line
    import ctypes

    windll: Any = getattr(ctypes, "windll")  # noqa: B009 - Windows only
    mb_iconerror, mb_setforeground = 0x10, 0x10000
    windll.user32.MessageBoxW(None, text, "Desktop Agent", mb_iconerror | mb_setforeground)


def _preload(modules: tuple[str, ...]) -> None:
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the real import later says what is wrong
            log.exception("preloading %s failed", name)


def _log_first_paint() -> None:
    log.info(
        "first window painted at %.3f, %.0f ms of CPU after the process started",
        time.time(),
        time.process_time() * 1000,
    )


def _log_ready() -> None:
    """The window is bound to its engine: Start is enabled, a run can be started."""
    log.info(
        "ready to start a run at %.3f, %.0f ms of CPU after the process started",
        time.time(),
        time.process_time() * 1000,
    )


def _log_to_file(data_dir: Path) -> None:
    from desktop_agent.logs import log_to_file

    log_to_file(data_dir, logger=logging.getLogger("desktop_agent"))
