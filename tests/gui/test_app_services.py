"""The app's services on the qasync loop: local API, notices, Stop all across instances,
the vision check, run-end notifications, and runs a crash left behind."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.models import RunStatus, StopReason
from desktop_agent.host import Host
from desktop_agent.host.starts import RunRequest, store_queued
from desktop_agent.settings import Settings
from tests.fakes import LosingHotkey, ScriptedPlanner, done, fail, make_agent, tool
from tests.gui.fake_agent import bind_window, drive, until
from tests.gui.test_app_wiring import Harness, RecordingTray, build

pytestmark = [pytest.mark.gui]


def blocked(release: asyncio.Event) -> Any:
    async def decide(request: Any) -> Any:
        await release.wait()
        return tool("wait", seconds=0)

    return decide


def test_services_serve_the_api_and_say_once_what_is_missing(
    qtbot: Any, qloop: Any, agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    harness = build(qtbot, qloop, agent)
    try:
        drive(qloop, harness.app.start_services())
        message = harness.window.statusBar().currentMessage()
        assert "No system tray here: closing the window quits the app." in message
        assert "Stop hotkey ctrl+alt+esc unavailable" in message
        assert harness.client.host.api_port
        assert (agent.data_dir / "instances" / f"{os.getpid()}.json").exists()
    finally:
        drive(qloop, harness.close())
    assert not (agent.data_dir / "instances" / f"{os.getpid()}.json").exists()


async def settled_harness(qtbot: Any, agent: Any, tray: RecordingTray) -> Harness:
    """The app with `tray`, once the window's start-up tasks have ended."""
    harness = Harness(qtbot, agent, tray=tray)
    await until(lambda: not harness.window.tasks)
    return harness


def test_a_stop_hotkey_that_could_not_be_armed_stays_said_in_the_status_bar_and_tray(
    qtbot: Any, qloop: Any, agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    tray = RecordingTray()

    harness = drive(qloop, settled_harness(qtbot, agent, tray))
    try:
        drive(qloop, harness.app.start_services())
        label = harness.window.bar.hotkey_label
        assert label.isVisible()
        assert label.text() == (
            "Stop hotkey not armed: no X display for the stop hotkey: DISPLAY is not set"
        )
        assert tray.tooltip().endswith(label.text())
    finally:
        drive(qloop, harness.close())


def test_a_stop_hotkey_that_stops_being_armed_is_said_in_the_status_bar_and_tray(
    qtbot: Any, qloop: Any, agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    hotkey = LosingHotkey()
    monkeypatch.setattr("desktop_agent.desktop.hotkey.start_global_hotkey", hotkey.start)
    tray = RecordingTray()

    harness = drive(qloop, settled_harness(qtbot, agent, tray))
    try:
        drive(qloop, harness.app.start_services())
        label = harness.window.bar.hotkey_label
        assert not label.isVisible() and "not armed" not in tray.tooltip()

        hotkey.lose("its X11 listener ended: connection lost")
        drive(qloop, until(label.isVisible, what="the status bar to say it"))

        assert label.text() == "Stop hotkey not armed: its X11 listener ended: connection lost"
        assert tray.tooltip().endswith(label.text())
        assert harness.client.host.hotkey_problem == "its X11 listener ended: connection lost"
    finally:
        drive(qloop, harness.close())


def test_stop_all_also_stops_a_run_of_another_instance_on_the_data_dir(
    qtbot: Any, qloop: Any, agent: Any
) -> None:
    from desktop_agent.api.server import ApiServer

    harness = build(qtbot, qloop, agent)
    release = asyncio.Event()
    other = make_agent(agent.data_dir)  # another process's agent on the same data dir
    other.planner_factory = lambda run: ScriptedPlanner([blocked(release)], then=done())
    # it registers as a live process that is not this one (our parent)
    server = ApiServer(Host(other), pid=os.getppid())

    async def scenario() -> Any:
        await server.start()
        run = await store_queued(other, RunRequest("a run in the other instance"))
        assert other.planner_factory is not None
        finished = asyncio.ensure_future(other.runner.run(run, other.planner_factory(run)))
        await until(lambda: other.runner.active_ids, what="the other run to start")
        harness.app.stop_everything()
        final = await asyncio.wait_for(finished, 10)
        await until(lambda: "in other instances" in harness.window.bar.status_label.text())
        return final

    try:
        final = drive(qloop, scenario())
    finally:
        drive(qloop, server.close())
        drive(qloop, harness.close())
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert harness.window.bar.status_label.text() == (
        "Stop all: 0 run(s) here, 1 in other instances."
    )


@pytest.mark.parametrize(
    ("capabilities", "state", "reason"),
    [
        (["completion", "vision"], "yes", "Ollama lists its capabilities: completion, vision"),
        (["completion"], "no", "Ollama lists its capabilities: completion"),
    ],
)
def test_the_task_panel_says_whether_the_model_can_see_and_why(
    qtbot: Any, qloop: Any, tmp_path: Path, capabilities: list[str], state: str, reason: str
) -> None:
    from desktop_agent.ui.main_window import MainWindow
    from tests.support.model_server import ModelServer

    server = drive(
        qloop, ModelServer(ollama={"somemodel": capabilities}, models=["somemodel"]).start()
    )
    try:
        agent = make_agent(tmp_path, settings=Settings(base_url=server.base_url, model="somemodel"))
        agent.check_model = True
        window = MainWindow()
        qtbot.addWidget(window)

        async def bind() -> Any:
            client = bind_window(window, agent)
            await until(lambda: window.panel.vision_label.property("vision") in ("yes", "no"))
            return client

        client = drive(qloop, bind())
        drive(qloop, client.close())
    finally:
        drive(qloop, server.close())
    label = window.panel.vision_label
    assert label.property("vision") == state
    assert reason in label.text()
    assert "somemodel" in window.panel.model_label.text()
    assert len(server.requests) == 0  # no chat completion was sent to find out


def test_the_end_of_a_run_is_notified_and_the_tray_follows(
    qtbot: Any, qloop: Any, agent: Any
) -> None:
    tray = RecordingTray()
    agent.planner_factory = lambda run: ScriptedPlanner([fail("the app is not installed")])

    async def scenario() -> None:
        harness.start("open the missing app")
        await harness.finished()

    async def make() -> Harness:
        return Harness(qtbot, agent, tray=tray)

    harness = drive(qloop, make())
    try:
        drive(qloop, scenario())
    finally:
        drive(qloop, harness.close())
    assert tray.state == "failed"
    assert tray.notes == [("Run failed", "open the missing app\nFailed: the app is not installed")]


def test_runs_a_crash_left_running_show_as_interrupted(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    from desktop_agent.agent import Agent
    from desktop_agent.core.models import TaskSpec
    from desktop_agent.store import ProcessIdentity, SqliteRunRepository
    from desktop_agent.ui.main_window import MainWindow
    from tests.fakes import FakeExecutor, FakeObserver

    dead = subprocess.Popen(["true"])  # a process that has ended: its runs were orphaned
    dead.wait()

    async def crashed_run() -> str:
        repo = SqliteRunRepository.open(tmp_path, owner=ProcessIdentity(dead.pid, "0"))
        try:
            run = await repo.create_run(TaskSpec(goal="left running by a crash"))
            await repo.save_run(run.with_(status=RunStatus.RUNNING))
            return run.id
        finally:
            repo.close()

    run_id = drive(qloop, crashed_run())

    async def open_app() -> Any:
        agent = await Agent.open(
            tmp_path,
            Settings(),
            observer=FakeObserver(),
            executor=FakeExecutor(),
            check_model=False,
        )
        window = MainWindow()
        qtbot.addWidget(window)
        client = bind_window(window, agent)
        await until(lambda: window.history.model.rowCount() == 1, what="the history")
        return client, window

    client, window = drive(qloop, open_app())
    try:
        (run,) = window.history.visible_runs()
        assert (run.id, run.status, run.stop_reason) == (
            run_id,
            RunStatus.INTERRUPTED,
            StopReason.CRASH,
        )
        assert window.history.model.index(0, 0).data() == "interrupted"
    finally:
        drive(qloop, window.shutdown())
        drive(qloop, client.close())


def test_the_agent_opens_its_store_and_reads_the_api_key_off_the_gui_thread(
    qloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import desktop_agent.planner
    import desktop_agent.settings
    from desktop_agent.agent import Agent
    from desktop_agent.store import SqliteRunRepository
    from tests.fakes import FakeExecutor, FakeObserver, real_observation

    threads: dict[str, threading.Thread] = {}
    real_open = SqliteRunRepository.open.__func__  # type: ignore[attr-defined]

    def recording_open(cls: Any, *args: Any, **kwargs: Any) -> Any:
        threads["store"] = threading.current_thread()
        return real_open(cls, *args, **kwargs)

    def recording_key(url: str, settings: Any, *args: Any) -> str:
        threads["keyring"] = threading.current_thread()
        return "sk-test"

    async def answers(*args: Any, **kwargs: Any) -> None:
        return None

    monkeypatch.setattr(SqliteRunRepository, "open", classmethod(recording_open))
    monkeypatch.setattr(desktop_agent.settings, "api_key_for", recording_key)
    monkeypatch.setattr(desktop_agent.planner, "check_reachable", answers)

    async def scenario() -> None:
        settings = Settings(base_url="http://127.0.0.1:9/v1")  # the key is for this server
        agent = await Agent.open(
            tmp_path, settings, observer=FakeObserver(real_observation()), executor=FakeExecutor()
        )
        try:
            await agent.ensure_model("http://127.0.0.1:9/v1", "llava")
        finally:
            await agent.close()

    drive(qloop, scenario())
    assert set(threads) == {"store", "keyring"}
    assert all(thread is not threading.main_thread() for thread in threads.values()), threads
