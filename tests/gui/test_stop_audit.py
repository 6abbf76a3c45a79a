"""The app's stops before its engine exists: the window is painted and its Stop all can be
pressed while the store, the adapters and the engine are still loading (app.py `_serve`)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent import app as app_module
from desktop_agent.core.models import RunStatus, StopReason
from desktop_agent.host import Host
from desktop_agent.host.starts import RunRequest, store_queued
from desktop_agent.settings import Settings, save_settings
from desktop_agent.ui.single_instance import InstanceGuard
from tests.fakes import ScriptedPlanner, done, make_agent, tool
from tests.gui.fake_agent import drive, until
from tests.gui.test_dialogs_settings import line

pytestmark = [pytest.mark.gui]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A data dir with its settings file (not a first start: no finder), no X display (no
    hotkey, no takeover watch: the test's own stop paths only)."""
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path))
    monkeypatch.delenv("DISPLAY", raising=False)
    save_settings(Settings(base_url="http://127.0.0.1:9/v1", probe_ports=[9]))
    yield tmp_path


def test_stop_all_pressed_before_the_engine_exists_stops_another_instances_run(
    qtbot: Any, qloop: Any, home: Path, held_loading: tuple[threading.Event, threading.Event]
) -> None:
    """A `desktop-agent run` acts on this data dir; the app is launched and its window painted;
    the user presses Stop all while the app still loads its engine: the other run ends
    stopped at once, and the model is asked nothing more there."""
    from desktop_agent.api.server import ApiServer
    from desktop_agent.ui.main_window import MainWindow

    loading, go = held_loading
    release = asyncio.Event()
    asked: list[Any] = []

    async def decide(request: Any) -> Any:
        asked.append(request)
        await release.wait()
        return tool("wait", seconds=0)

    other = make_agent(home)  # another process's agent on the same data dir
    other.planner_factory = lambda run: ScriptedPlanner([decide], then=done())
    server = ApiServer(Host(other), pid=os.getppid())  # registered as a live process, not this one
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    guard = InstanceGuard(home)

    async def scenario() -> Any:
        await server.start()
        run = await store_queued(other, RunRequest("a run in the other instance"))
        assert other.planner_factory is not None
        finished = asyncio.ensure_future(other.runner.run(run, other.planner_factory(run)))
        await until(lambda: asked, what="the other run's model request")
        serving = asyncio.ensure_future(app_module._serve(window, guard, home))
        await until(loading.is_set, what="the app loading its engine")

        assert window.client is None  # no engine yet: the app still loads its parts
        # nothing of the app can start meanwhile: Start (button, Ctrl+Return) is off
        window.panel.goal_edit.setPlainText("open the editor")
        window.menu_actions.start.trigger()
        window.panel.start_button.click()
        assert not window.panel.start_button.isEnabled() and not window.live_running
        window.panel.stop_all_button.click()
        try:
            final = await asyncio.wait_for(asyncio.shield(finished), 5)
        finally:
            go.set()
            release.set()
            await until(lambda: window.client is not None, 10, "the app up")
            window.quit_requested.emit()
            await asyncio.wait_for(serving, 10)
            await asyncio.wait_for(finished, 10)
        return final

    try:
        final = drive(qloop, scenario(), timeout=30)
    finally:
        drive(qloop, server.close())
        for signum in (signal.SIGTERM, signal.SIGINT):
            qloop.remove_signal_handler(signum)  # _serve's, on the test's loop
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert len(asked) == 1


class HeldHotkey:
    """The stop hotkey's grab (desktop.hotkey.start_global_hotkey: an X connection and a few
    round trips, run in a worker thread) held until `go`."""

    def __init__(self) -> None:
        self.grabbing = threading.Event()
        self.go = threading.Event()

    def start(self, combo: str, callback: Any, loop: Any, *, on_change: Any = None) -> Any:
        self.grabbing.set()
        self.go.wait(10)
        return self

    def stop(self) -> None:
        return None


def test_a_run_of_the_window_acts_only_once_the_api_and_the_stop_hotkey_are_up(
    qtbot: Any, qloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window's Start is on from the moment the engine is bound, before the app's API is
    served and its stop hotkey grabbed. A run started then waits for them before it acts
    (its `ready` is set once `before_run` returns), as `run` does: before, it acted while
    the hotkey was not armed and no other process could find this instance to stop it."""
    from tests.gui.test_app_wiring import build

    hotkey = HeldHotkey()
    monkeypatch.setattr("desktop_agent.desktop.hotkey.start_global_hotkey", hotkey.start)
    monkeypatch.delenv("DISPLAY", raising=False)  # no takeover watch
    harness = build(qtbot, qloop, make_agent(tmp_path))
    window = harness.window

    async def scenario() -> None:
        services = asyncio.ensure_future(harness.app.start_services())
        await until(hotkey.grabbing.is_set, what="the hotkey being grabbed")
        assert harness.client.host.api_port  # served; the hotkey still being grabbed
        assert window.before_run is not None
        acting = asyncio.ensure_future(window.before_run())  # what a run's `ready` waits on
        for _ in range(50):  # the window gets out of the way in a step or two (offscreen)
            await asyncio.sleep(0)
        assert not acting.done()

        hotkey.go.set()
        await asyncio.wait_for(services, 10)
        await asyncio.wait_for(acting, 10)
        assert window.bar.hotkey_label.isHidden()  # armed

    try:
        drive(qloop, scenario(), timeout=30)
    finally:
        hotkey.go.set()
        drive(qloop, harness.close())


def test_a_window_that_closes_before_its_run_may_act_never_lets_it_act(
    window: Any, qloop: Any, agent: Any
) -> None:
    """The app is quit (window closed, SIGTERM) while a run of the window still waits to act
    (the services coming, the window going out of the way): the window's wait is cancelled
    and the run never gets its go; closing the engine stops it, nothing asked, nothing done."""
    asked: list[Any] = []

    async def decide(request: Any) -> Any:
        asked.append(request)
        return tool("wait", seconds=0)

    agent.planner_factory = lambda run: ScriptedPlanner([decide], then=done())
    never = asyncio.Event()

    async def still_coming() -> None:
        await never.wait()

    window.before_run = still_coming
    requests: list[Any] = []
    client = window.client
    send = client.send

    def recorded(fn: Any, *args: Any) -> None:
        requests.extend(args)
        send(fn, *args)

    client.send = recorded

    async def start() -> None:
        window.on_start_requested("wait a little", 5, ())
        await until(lambda: agent.runner.active_ids, what="the run admitted")

    drive(qloop, start())

    drive(qloop, window.shutdown())  # the app's close: first the window's tasks end
    assert not requests[0].ready.done()
    drive(qloop, client.close())  # then the engine: every run stopped and awaited

    assert asked == [] and agent.runner.services.executor.calls == []
    stored = drive(qloop, agent.repo.get_run(requests[0].run_id))
    assert stored is not None
    assert (stored.status, stored.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)


# ── a calibration asking the model, and every stop path of the app ───────────


def _stop_by_window_stop_all(harness: Any) -> None:
    harness.window.menu_actions.stop_all.trigger()


def _stop_by_window_stop(harness: Any) -> None:
    harness.window.on_stop_requested()  # the Stop button / Esc of the main window


def _stop_by_tray(harness: Any) -> None:
    harness.app.tray.stop_all_requested.emit()


def _stop_by_hotkey(harness: Any) -> None:
    host = harness.client.host
    harness.client.engine.loop.call_soon_threadsafe(host._on_hotkey)  # as its listener does


def _stop_by_api_stop_all(harness: Any) -> None:
    # another process's `desktop-agent stop-all` reaches the app through its local API
    from desktop_agent.instances.registry import stop_all_blocking

    threading.Thread(target=stop_all_blocking, args=(harness.agent.data_dir,), daemon=True).start()


@pytest.mark.parametrize(
    "stop",
    [
        _stop_by_window_stop_all,
        _stop_by_window_stop,
        _stop_by_tray,
        _stop_by_hotkey,
        _stop_by_api_stop_all,
    ],
    ids=["window-stop-all", "window-stop", "tray", "hotkey", "api-stop-all"],
)
def test_every_stop_of_the_app_ends_a_calibration_mid_model_request(
    qtbot: Any, qloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop: Any
) -> None:
    """Settings… → Calibrate…: the model thinks about the first ring when the user stops; the
    request is cancelled, no other is sent, the window and the dialog say it was stopped."""
    from desktop_agent.host import calibration as host_calibration
    from desktop_agent.ui.calibration import STOPPED_TEXT, CalibrationWindow
    from desktop_agent.ui.settings_dialog import SettingsDialog
    from tests.gui.test_app_wiring import build
    from tests.gui.test_calibration_window import Still, open_windows
    from tests.support.model_server import Hang, ModelServer

    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))
    real = host_calibration.ScreenCalibration

    def on_still_screen(settings: Any, **options: Any) -> Any:  # no screen offscreen
        return real(settings, observer=Still(), **options)

    monkeypatch.setattr(host_calibration, "ScreenCalibration", on_still_screen)
    harness = build(qtbot, qloop, make_agent(tmp_path / "data"))
    try:
        if stop is _stop_by_api_stop_all:
            drive(qloop, harness.client.ask(harness.client.host.serve_api, face="app"))
        harness.app.settings.on_settings_requested()
        dialog = harness.app.settings.dialog
        assert isinstance(dialog, SettingsDialog)
        qtbot.addWidget(dialog)

        async def scenario() -> tuple[int, str]:
            async with ModelServer(script=[Hang()]) as server:
                line(dialog, "base_url").setText(server.base_url)
                line(dialog, "model").setText("some-vlm")
                dialog.calibrate_button.click()
                await server.wait_requests(1)  # the model is thinking about ring A
                (window,) = open_windows()
                assert isinstance(window, CalibrationWindow)
                stop(harness)
                await until(lambda: window.status.text() == STOPPED_TEXT, 10, what="stopped")
                window.close()
                await until(lambda: dialog.calibrate_button.isEnabled(), 10, what="the end")
                return len(server.requests), dialog.calibrate_result.text()

        requests, said = drive(qloop, scenario())
        assert requests == 1  # cancelled mid-request; nothing asked after the stop
        assert said == "calibration stopped"
        assert harness.agent.runner._held == set()  # let go once closed
    finally:
        drive(qloop, harness.close())
