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
from desktop_agent.settings import Settings, save_settings
from tests.fakes import ScriptedPlanner, done, tool
from tests.gui.fake_agent import drive, make_agent, until

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore(r"^This plugin does not support (propagateSizeHints|raise)\(\)"),
]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A data dir with its settings file (not a first start: no finder), no X display (no
    hotkey, no takeover watch: the test's own stop paths only)."""
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path))
    monkeypatch.delenv("DISPLAY", raising=False)
    save_settings(Settings(base_url="http://127.0.0.1:9/v1", probe_ports=[9]))
    yield tmp_path


@pytest.fixture
def held_loading(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[threading.Event, threading.Event]]:
    """The app's import of its heavy parts (before the engine is made) is held until `go`."""
    loading, go = threading.Event(), threading.Event()
    preload = app_module._preload

    def held(modules: tuple[str, ...]) -> None:
        loading.set()
        go.wait(10)
        preload(modules)

    monkeypatch.setattr(app_module, "_preload", held)
    yield loading, go
    go.set()


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
    server = ApiServer(other, pid=os.getppid())  # registered as a live process, not this one
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    guard = app_module.InstanceGuard(home)

    async def scenario() -> Any:
        await server.start()
        run = await other.create_run("a run in the other instance")
        finished = asyncio.ensure_future(other.runner.run(run, other.planner_factory(run)))
        await until(lambda: asked, what="the other run's model request")
        serving = asyncio.ensure_future(app_module._serve(window, guard, home))
        await until(loading.is_set, what="the app loading its engine")

        assert window.client is None  # no engine yet: the app still loads its parts
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
    round trips, run in a worker thread) held until `go`; then armed, and `press` is the key."""

    def __init__(self) -> None:
        self.grabbing = threading.Event()
        self.go = threading.Event()
        self.callback: Any = None
        self.loop: Any = None

    def start(self, combo: str, callback: Any, loop: Any, *, on_change: Any = None) -> Any:
        self.grabbing.set()
        self.go.wait(10)
        self.callback, self.loop = callback, loop
        return self

    def press(self) -> None:
        self.loop.call_soon_threadsafe(self.callback)

    def stop(self) -> None:
        return None


def test_a_run_started_while_the_stop_hotkey_is_grabbed_acts_only_once_it_is_armed(
    qtbot: Any, qloop: Any, agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window's Start is on from the moment the engine is bound, before the app's API is
    served and its stop hotkey grabbed. A run started then waits, as `run` does, until they
    are up: pressed once it acts, the hotkey stops it (before, it acted unheard)."""
    from tests.gui.test_app_wiring import build

    hotkey = HeldHotkey()
    monkeypatch.setattr("desktop_agent.desktop.hotkey.start_global_hotkey", hotkey.start)
    asked: list[Any] = []

    async def decide(request: Any) -> Any:
        asked.append(request)
        await asyncio.Event().wait()  # the model request in flight

    agent.planner_factory = lambda run: ScriptedPlanner([decide], then=done())
    harness = build(qtbot, qloop, agent)
    window = harness.window

    async def scenario() -> Any:
        services = asyncio.ensure_future(harness.app.start_services())
        await until(hotkey.grabbing.is_set, what="the hotkey being grabbed")
        acting = asyncio.ensure_future(window.before_run())  # the run's `ready` waits on it
        for _ in range(50):  # the window gets out of the way in a step or two (offscreen)
            await asyncio.sleep(0)
        assert not acting.done()  # the run would act while the hotkey is not armed

        hotkey.go.set()
        await asyncio.wait_for(services, 10)
        await asyncio.wait_for(acting, 10)
        window.on_start_requested("wait a little", 50, ())
        await until(lambda: asked, what="the run's model request")
        hotkey.press()
        await until(lambda: not window.live_running, what="the run stopped")
        return window.run

    try:
        final = drive(qloop, scenario(), timeout=30)
    finally:
        hotkey.go.set()
        drive(qloop, harness.close())
    assert final is not None
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
