"""A stop always wins over the app's requests to the model server outside a run: the model
line's check, Test connection, Find model servers…. Each stop of the app (the window's Stop
and Stop all, the tray, the stop hotkey, the local API's stop-all, `desktop-agent stop-all`
from another process) closes the request in flight, and nothing more is asked until the user
asks again. The real app's parts on an engine thread, a real loopback model server that holds
the request the test catches in flight and records every request and every one given up."""

from __future__ import annotations

import asyncio
import functools
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.settings import Settings
from tests.fakes import make_agent
from tests.gui.fake_agent import drive, until
from tests.support.model_server import ModelServer

pytestmark = [pytest.mark.gui]

ROOT = Path(__file__).resolve().parents[2]
MODEL = "some-vlm"
#: what Test connection and the finder say when a stop gave them up
STOPPED_TEST = "stopped; press Test connection to ask again"
STOPPED_LOOK = "Stopped. Press Check again to look again."


# ── the stops of the app, each awaited until it has landed on the engine ─────


async def _landed(harness: Any) -> None:
    """The engine has carried out what was sent before (calls land in order)."""

    async def nothing() -> None:
        return None

    await harness.client.ask(nothing)


async def stop_by_window_stop_all(harness: Any) -> None:
    harness.window.menu_actions.stop_all.trigger()
    await _landed(harness)


async def stop_by_window_stop(harness: Any) -> None:
    harness.window.on_stop_requested()  # the Stop button / Esc of the main window
    await _landed(harness)


async def stop_by_acting_panel(harness: Any) -> None:
    harness.app.acting_panel.stop_requested.emit()  # its Stop, while a run acts
    await _landed(harness)


async def stop_by_tray(harness: Any) -> None:
    harness.app.tray.stop_all_requested.emit()
    await _landed(harness)


async def stop_by_hotkey(harness: Any) -> None:
    host = harness.client.host
    harness.client.engine.loop.call_soon_threadsafe(host._on_hotkey)  # as its listener does
    await _landed(harness)


async def stop_by_api_stop_all(harness: Any) -> None:
    """What `desktop-agent stop-all` sends: POST /api/tasks/stop-all, proven, to the app."""
    from desktop_agent.instances.registry import stop_all_blocking

    await asyncio.to_thread(stop_all_blocking, harness.agent.data_dir)


def stop_all_command(data_dir: Path) -> None:
    """`desktop-agent stop-all` run in another process."""
    command = [sys.executable, "-m", "desktop_agent", "stop-all", "--data-dir", str(data_dir)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


async def stop_by_stop_all_command(harness: Any) -> None:
    await asyncio.to_thread(stop_all_command, harness.agent.data_dir)


STOPS = pytest.mark.parametrize(
    "stop",
    [
        stop_by_window_stop_all,
        stop_by_window_stop,
        stop_by_tray,
        stop_by_hotkey,
        stop_by_api_stop_all,
        stop_by_stop_all_command,
    ],
    ids=["window-stop-all", "window-stop", "tray", "hotkey", "api-stop-all", "stop-all-command"],
)
SERVED = (stop_by_api_stop_all, stop_by_stop_all_command)


# ── the app over a real model server ─────────────────────────────────────────


class App:
    """The app's parts (tests/gui/test_app_wiring.py Harness: window, DesktopApp, the Host on
    an engine thread) with model checks on, over `server`; made while the server's /v1/models
    is held, so the model line's first check is caught in flight."""

    def __init__(self, qtbot: Any, qloop: Any, data_dir: Path, server: ModelServer) -> None:
        from tests.gui.test_app_wiring import Harness

        settings = Settings(
            base_url=server.base_url, model=MODEL, probe_ports=[server.port], vision="auto"
        )
        agent = make_agent(data_dir, settings=settings)
        agent.check_model = True  # the model line asks the server (make_agent turns it off)
        self.qloop = qloop
        self.server = server

        async def make() -> Harness:
            return Harness(qtbot, agent)  # binding the window spawns its first tasks

        self.harness = drive(qloop, make())

    def close(self) -> None:
        drive(self.qloop, self.harness.close())


@pytest.fixture
def server(qloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    """A model server that has MODEL (Ollama's /api/show says it can see), /v1/models held.
    The check waits for its answer up to 60 s, not 5 (planner/capabilities.py): on a loaded
    machine a stop from another process must still find it in flight."""
    import desktop_agent.planner

    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))
    reachable = desktop_agent.planner.check_reachable
    monkeypatch.setattr(
        desktop_agent.planner, "check_reachable", functools.partial(reachable, timeout_s=60)
    )
    made = drive(
        qloop, ModelServer(models=(MODEL,), ollama={MODEL: ["completion", "vision"]}).start()
    )
    made.hold("/v1/models")
    yield made
    made.release()
    drive(qloop, made.close())


@pytest.fixture
def app(qtbot: Any, qloop: Any, tmp_path: Path, server: ModelServer) -> Iterator[App]:
    made = App(qtbot, qloop, tmp_path / "data", server)
    yield made
    made.close()


def serve_api(app: App) -> None:
    client = app.harness.client
    drive(app.qloop, client.ask(client.host.serve_api, face="app"))


# ── the model line ───────────────────────────────────────────────────────────


@STOPS
def test_every_stop_closes_the_model_lines_check_in_flight_and_nothing_is_asked_after(
    app: App, server: ModelServer, stop: Callable[[Any], Awaitable[None]]
) -> None:
    """The window checks its model line (GET /v1/models, then Ollama's /api/show) when the
    user stops: the request in flight is given up at the stop, the line says the check was
    stopped, and the server hears nothing more, also once it would have answered."""
    harness = app.harness
    window = harness.window
    if stop in SERVED:
        serve_api(app)

    async def scenario() -> None:
        await until(lambda: server.heard, 10, "the model line's check")
        check = window.model_check
        assert check is not None and not check.done()
        asked = len(server.heard)
        await stop(harness)
        await until(lambda: server.gone, 10, "the request in flight given up")
        server.release()  # the server would answer now: nothing is there to hear it
        await asyncio.wait_for(asyncio.shield(check), 10)
        await _landed(harness)
        assert server.heard[asked:] == []

    drive(app.qloop, scenario(), timeout=60)
    assert server.gone == ["/v1/models"]
    assert window.panel.vision_label.text() == "? vision not checked: stopped"


# ── the app starting: its first model line check ─────────────────────────────


def press_stop_all(window: Any, data_dir: Path) -> None:
    window.panel.stop_all_button.click()


def stop_all_from_another_process(window: Any, data_dir: Path) -> None:
    """While the app loads it is not registered (no API): the stop-all finds no instance; it
    leaves its mark (instances/stop_all.py STOP_MARK_FILE)."""
    stop_all_command(data_dir)


@pytest.mark.parametrize(
    "stop", [press_stop_all, stop_all_from_another_process], ids=["window", "stop-all-command"]
)
def test_a_stop_while_the_app_loads_its_engine_stops_its_first_model_line_check(
    qtbot: Any,
    qloop: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server: ModelServer,
    held_loading: tuple[threading.Event, threading.Event],
    stop: Callable[[Any, Path], None],
) -> None:
    """The app is launched, its window painted; the user stops (the window's Stop all, or
    `desktop-agent stop-all` elsewhere) while it still loads its engine. The model line's
    first check, which comes once the engine is up, sends nothing: the line says stopped."""
    import signal

    from desktop_agent import app as app_module
    from desktop_agent.settings import save_settings
    from desktop_agent.ui.main_window import MainWindow
    from desktop_agent.ui.single_instance import InstanceGuard

    server.release()  # the server answers at once: only a request that is never sent is safe
    home = tmp_path / "home"
    monkeypatch.delenv("DISPLAY", raising=False)  # no hotkey, no takeover watch
    save_settings(
        Settings(base_url=server.base_url, model=MODEL, probe_ports=[server.port]),
        home / "settings.toml",
    )
    loading, go = held_loading
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    guard = InstanceGuard(home)

    async def scenario() -> None:
        serving = asyncio.ensure_future(app_module._serve(window, guard, home))
        try:
            await until(loading.is_set, 10, "the app loading its engine")
            await asyncio.to_thread(stop, window, home)
            go.set()
            await until(lambda: window.model_check is not None, 30, "the engine up")
            check = window.model_check
            assert check is not None
            await asyncio.wait_for(asyncio.shield(check), 10)
        finally:
            go.set()
            await until(lambda: window.client is not None, 30, "the app up")
            window.quit_requested.emit()
            await asyncio.wait_for(serving, 30)

    try:
        drive(qloop, scenario(), timeout=90)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            qloop.remove_signal_handler(signum)  # _serve's, on the test's loop
    assert server.heard == []
    assert window.panel.vision_label.text() == "? vision not checked: stopped"


# ── Test connection and Find model servers… ─────────────────────────────────


def line_checked(app: App, stop: Any = None) -> None:
    """The model line's first check answered (the server held nothing yet); the local API
    served when `stop` goes through it."""
    app.server.release()
    check = app.harness.window.model_check
    assert check is not None
    drive(app.qloop, asyncio.wait_for(asyncio.shield(check), 10))
    if stop in SERVED:
        serve_api(app)


def settings_dialog(qtbot: Any, harness: Any) -> Any:
    """Settings… opened; its dialog."""
    from desktop_agent.ui.settings_dialog import SettingsDialog

    harness.app.settings.on_settings_requested()
    dialog = harness.app.settings.dialog
    assert isinstance(dialog, SettingsDialog)
    qtbot.addWidget(dialog)
    return dialog


@STOPS
def test_every_stop_closes_test_connection_in_flight_and_nothing_is_asked_after(
    qtbot: Any, app: App, server: ModelServer, stop: Callable[[Any], Awaitable[None]]
) -> None:
    """Settings… → Test connection asks the server (GET /v1/models, then /api/show afresh) when
    the user stops: the request in flight is given up, the dialog says it was stopped, and the
    server hears nothing more. Pressing Test connection again asks again (the user's own)."""
    harness = app.harness
    line_checked(app, stop)
    dialog = settings_dialog(qtbot, harness)

    async def scenario() -> None:
        server.hold("/v1/models")
        asked = len(server.heard)
        dialog.test_button.click()
        await until(lambda: len(server.heard) > asked, 10, "Test connection's request")
        asked = len(server.heard)
        await stop(harness)
        await until(lambda: server.gone, 10, "the request in flight given up")
        server.release()
        await until(lambda: dialog.test_button.isEnabled(), 10, "the test's end")
        await _landed(harness)
        assert server.heard[asked:] == []
        assert dialog.test_result.text() == STOPPED_TEST
        dialog.test_button.click()  # the user asks again: that is asked
        await until(lambda: "The server answers" in dialog.test_result.text(), 10, "the answer")

    drive(app.qloop, scenario(), timeout=60)
    assert server.gone == ["/v1/models"]


def finder_of_the_window(qtbot: Any, harness: Any) -> Callable[[], Any]:
    """App → Find model servers…; the finder it opened."""
    harness.window.menu_actions.find_servers.trigger()
    return lambda: harness.app.servers.dialog


def finder_of_the_settings_dialog(qtbot: Any, harness: Any) -> Callable[[], Any]:
    """Settings… → Find model servers… (the finder over the dialog); the finder it opened."""
    from desktop_agent.ui.model_servers import ModelServersDialog

    dialog = settings_dialog(qtbot, harness)
    dialog.find_button.click()
    return lambda: dialog.findChild(ModelServersDialog)


@pytest.mark.parametrize(
    "open_finder",
    [finder_of_the_window, finder_of_the_settings_dialog],
    ids=["window", "settings-dialog"],
)
@STOPS
def test_every_stop_gives_up_the_look_for_model_servers_and_nothing_is_asked_after(
    qtbot: Any,
    app: App,
    server: ModelServer,
    stop: Callable[[Any], Awaitable[None]],
    open_finder: Callable[[Any, Any], Callable[[], Any]],
) -> None:
    """Find model servers… asks the usual ports (Ollama's /api/tags, then its /api/show per
    model) when the user stops: the look is given up at once, the finder says so, and the
    server hears nothing more, also once it would have answered."""
    harness = app.harness
    line_checked(app, stop)

    async def scenario() -> None:
        server.hold("/api/tags")
        asked = len(server.heard)
        finder = open_finder(qtbot, harness)
        await until(lambda: ("GET", "/api/tags", None) in server.heard[asked:], 10, "the look")
        dialog = finder()
        assert dialog is not None
        await stop(harness)
        await until(lambda: "/api/tags" in server.gone, 10, "the look given up")
        asked = len(server.heard)
        server.release()
        await until(lambda: dialog.check_again_button.isEnabled(), 10, "the look's end")
        await _landed(harness)
        assert server.heard[asked:] == []
        assert dialog.found_note.text() == STOPPED_LOOK
        dialog.reject()

    drive(app.qloop, scenario(), timeout=60)


# ── the model line checked again while a run is paused or asks for approval ────


def run_waiting(app: App, state: str) -> None:
    """A run of the window that is paused, or waits for the user's approval of a click."""
    from desktop_agent.core.models import Policy
    from desktop_agent.ui.run_on_show import PanelState
    from tests.fakes import ALLOW_ALL, ScriptedPlanner, tool

    harness = app.harness
    agent = harness.agent
    agent.permissions.set_policy("click", Policy.ASK if state == "approval" else ALLOW_ALL["click"])
    agent.planner_factory = lambda run: ScriptedPlanner(
        [tool("click", x=10, y=20, reason="press it")], then=tool("wait", seconds=0)
    )

    async def waiting() -> None:
        harness.start("press the button")
        if state == "paused":
            await until(lambda: harness.window.shown.state is PanelState.RUNNING, 10, "the run")
            harness.window.on_pause_requested(True)
            await until(lambda: harness.window.shown.state is PanelState.PAUSED, 10, "paused")
        else:
            await until(lambda: agent.approvals.pending, 10, "the approval asked")

    drive(app.qloop, waiting())


@pytest.mark.parametrize("state", ["paused", "approval"])
@pytest.mark.parametrize(
    "stop",
    [
        stop_by_window_stop,
        stop_by_acting_panel,
        stop_by_window_stop_all,
        stop_by_hotkey,
        stop_by_stop_all_command,
    ],
    ids=["window-stop", "acting-panel", "window-stop-all", "hotkey", "stop-all-command"],
)
def test_a_stop_while_a_run_waits_ends_the_run_and_the_model_lines_check_in_flight(
    app: App, server: ModelServer, state: str, stop: Callable[[Any], Awaitable[None]]
) -> None:
    """A run is paused (or asks the user about a click) and the user saves settings, so the
    model line is checked again; the user stops: the run ends stopped, the check's request is
    given up, the server hears nothing more."""
    from desktop_agent.core.models import RunStatus, StopReason

    harness = app.harness
    line_checked(app, stop)
    run_waiting(app, state)

    async def scenario() -> None:
        server.hold("/v1/models")
        asked = len(server.heard)
        harness.window.apply_settings()  # as a save of the settings does
        await until(lambda: len(server.heard) > asked, 10, "the model line's check")
        asked = len(server.heard)
        await stop(harness)
        await until(lambda: server.gone, 10, "the request in flight given up")
        server.release()
        await harness.finished()
        check = harness.window.model_check
        assert check is not None
        await asyncio.wait_for(asyncio.shield(check), 10)
        await _landed(harness)
        assert server.heard[asked:] == []

    drive(app.qloop, scenario(), timeout=60)
    run = harness.window.run
    assert run is not None and (run.status, run.stop_reason) == (
        RunStatus.STOPPED,
        StopReason.USER_STOP,
    )
    assert harness.agent.runner.services.executor.calls == []


# ── a settings save, then a stop before the check it asks for begins ─────────


def test_a_stop_while_the_settings_are_saved_stops_the_model_check_the_save_asked_for(
    app: App, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user saves settings (which checks the model line again) and presses Stop all while
    the file is still being written: the check the save asked for is not sent. Saving again
    after the stop is the user's new action: that check is sent."""
    import desktop_agent.settings

    harness = app.harness
    line_checked(app)
    writing, written = threading.Event(), threading.Event()
    save = desktop_agent.settings.save_settings

    def slow_save(settings: Settings, *args: Any, **kwargs: Any) -> Any:
        writing.set()
        written.wait(10)
        return save(settings, *args, **kwargs)

    monkeypatch.setattr(desktop_agent.settings, "save_settings", slow_save)
    flow = harness.app.settings
    chosen = harness.client.host.settings.model_copy(update={"max_steps": 7})

    async def scenario() -> None:
        asked = len(server.heard)
        flow.on_settings_saved(chosen)  # the dialog's Save
        await until(writing.is_set, 10, "the settings being written")
        await stop_by_window_stop_all(harness)
        written.set()
        await until(lambda: harness.window.panel.max_steps.value() == 7, 10, "applied")
        check = harness.window.model_check
        assert check is not None
        await asyncio.wait_for(asyncio.shield(check), 10)
        await _landed(harness)
        assert server.heard[asked:] == []
        assert harness.window.panel.vision_label.text() == "? vision not checked: stopped"

        flow.on_settings_saved(chosen)  # saved again after the stop: asked
        await until(lambda: len(server.heard) > asked, 10, "the check of the new save")
        await until(lambda: "can see" in harness.window.panel.vision_label.text(), 10, "seen")

    drive(app.qloop, scenario(), timeout=60)


# ── the real app process: Stop all pressed right after the first paint ───────


def test_stop_all_pressed_while_the_app_imports_its_loop_is_carried_out_and_stops_the_check(
    tmp_path: Path,
) -> None:
    """The window is painted and answers while asyncio is imported on a worker thread (app.py
    `_import_while_qt_runs`); the user presses Stop all then. That press is a stop like any
    other: it is carried out once the app's loop runs (the other instances told, the stop-all
    marked), and the model line's first check, asked afterwards, sends nothing."""
    from desktop_agent.instances.stop_all import read_stop_mark
    from tests.support.app import MODEL as APP_MODEL
    from tests.support.app import offscreen_env
    from tests.support.model_server import serve_in_thread

    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    mark = read_stop_mark(str(data_dir))
    script = (
        "import json, os, sys, threading\n"
        "from PySide6.QtCore import QTimer\n"
        "import desktop_agent.app as app\n"
        "from desktop_agent.ui import main_window\n"
        "from desktop_agent.__main__ import main\n"
        "pressed = threading.Event()\n"
        "preload = app._preload\n"
        "def held(modules):\n"
        "    if modules == app.LOOP_MODULES:  # until Stop all was pressed meanwhile\n"
        "        pressed.wait(30)\n"
        "    preload(modules)\n"
        "app._preload = held\n"
        "importing = app._import_while_qt_runs\n"
        "def press_while_importing(window, modules):\n"
        "    def press():\n"
        "        window.panel.stop_all_button.click()\n"
        "        pressed.set()\n"
        "    QTimer.singleShot(0, press)\n"
        "    return importing(window, modules)\n"
        "app._import_while_qt_runs = press_while_importing\n"
        "check = main_window.check_model_line\n"
        "async def checked(client, panel, *args):\n"
        "    await check(client, panel, *args)\n"
        "    print(json.dumps(panel.vision_label.text()))\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "main_window.check_model_line = checked\n"
        f"main(['--data-dir', {str(data_dir)!r}])\n"
    )
    sees = {APP_MODEL: ["completion", "vision"]}
    with serve_in_thread(ModelServer(models=(APP_MODEL,), ollama=sees)) as server:
        done = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=offscreen_env(data_dir, server),
            capture_output=True,
            text=True,
            timeout=90,
        )
        heard = list(server.heard)
    assert done.stdout.splitlines() == ['"? vision not checked: stopped"'], done.stderr
    assert heard == []
    assert read_stop_mark(str(data_dir)) != mark  # the stop-all was carried out


# ── a calibration asking the model, and the model line checked meanwhile ─────


@pytest.mark.parametrize(
    "stop",
    [stop_by_window_stop, stop_by_window_stop_all, stop_by_hotkey, stop_by_stop_all_command],
    ids=["window-stop", "window-stop-all", "hotkey", "stop-all-command"],
)
def test_a_stop_during_a_calibration_ends_it_and_the_model_lines_check_in_flight(
    qtbot: Any,
    app: App,
    server: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    stop: Callable[[Any], Awaitable[None]],
) -> None:
    """Settings… → Calibrate… asks the model about its first ring, and the model line is being
    checked again (a save): one stop ends both, and the server hears nothing more."""
    from desktop_agent.host import calibration as host_calibration
    from desktop_agent.ui.calibration import STOPPED_TEXT
    from tests.gui.test_calibration_window import Still, open_windows
    from tests.support.model_server import Hang

    real = host_calibration.ScreenCalibration

    def on_still_screen(settings: Any, **options: Any) -> Any:  # no screen offscreen
        return real(settings, observer=Still(), **options)

    monkeypatch.setattr(host_calibration, "ScreenCalibration", on_still_screen)
    harness = app.harness
    line_checked(app, stop)
    dialog = settings_dialog(qtbot, harness)
    server.add(Hang())  # the model thinks about ring A for as long as it takes

    async def scenario() -> None:
        dialog.calibrate_button.click()
        await server.wait_requests(1)
        server.hold("/v1/models")
        asked = len(server.heard)
        harness.window.apply_settings()  # as a save of the settings does
        await until(lambda: len(server.heard) > asked, 10, "the model line's check")
        asked = len(server.heard)
        (window,) = open_windows()
        await stop(harness)
        await until(lambda: window.status.text() == STOPPED_TEXT, 10, "the calibration stopped")
        await until(lambda: "/v1/models" in server.gone, 10, "the check given up")
        server.release()
        check = harness.window.model_check
        assert check is not None
        await asyncio.wait_for(asyncio.shield(check), 10)
        window.close()
        await until(lambda: dialog.calibrate_button.isEnabled(), 10, what="the calibration's end")
        await _landed(harness)
        assert server.heard[asked:] == []

    drive(app.qloop, scenario(), timeout=60)
    assert len(server.requests) == 1  # the calibration's one chat request, cancelled
    assert harness.window.panel.vision_label.text() == "? vision not checked: stopped"


# ── the user asks, then stops before the work has begun on the engine ────────


def ask_test_connection(qtbot: Any, harness: Any) -> Callable[[], str]:
    dialog = settings_dialog(qtbot, harness)
    dialog.test_button.click()
    return lambda: str(dialog.test_result.text())


def ask_the_windows_finder(qtbot: Any, harness: Any) -> Callable[[], str]:
    seen = finder_of_the_window(qtbot, harness)
    return lambda: str(seen().found_note.text()) if seen() is not None else ""


def ask_the_settings_dialogs_finder(qtbot: Any, harness: Any) -> Callable[[], str]:
    seen = finder_of_the_settings_dialog(qtbot, harness)
    return lambda: str(seen().found_note.text()) if seen() is not None else ""


@pytest.mark.parametrize(
    ("ask", "stopped"),
    [
        (ask_test_connection, STOPPED_TEST),
        (ask_the_windows_finder, STOPPED_LOOK),
        (ask_the_settings_dialogs_finder, STOPPED_LOOK),
    ],
    ids=["test-connection", "finder", "settings-finder"],
)
def test_a_stop_right_after_the_click_sends_nothing_of_what_the_click_asked(
    qtbot: Any,
    app: App,
    server: ModelServer,
    ask: Callable[[Any, Any], Callable[[], str]],
    stopped: str,
) -> None:
    """The user clicks (Test connection, Find model servers…) and presses Stop all at once:
    the stop lands on the engine before the work the click asked for has begun there. It
    sends nothing, and says it was stopped."""
    harness = app.harness
    line_checked(app)

    async def nothing() -> None:
        return None

    async def scenario() -> None:
        asked = len(server.heard)
        said = ask(qtbot, harness)  # the click: what it asks is on its way to the engine
        harness.window.menu_actions.stop_all.trigger()
        harness.client.engine.submit(nothing()).result(10)  # the stop has landed, the GUI waited
        await until(lambda: said() == stopped, 10, "stopped said")
        await _landed(harness)
        assert server.heard[asked:] == []

    drive(app.qloop, scenario(), timeout=60)
