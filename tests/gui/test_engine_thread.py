"""The engine thread (#9): a stop reaches a run from its first instant, from the tray while
the model is being checked, with the GUI thread blocked; an approval dialog whose run ended
closes at once; closing the app leaves no thread or socket behind."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.events import RunFinished
from desktop_agent.core.models import Policy, RunStatus, RunView, StopReason
from desktop_agent.host.host import RunRequest
from desktop_agent.ui.approval import ApprovalDialog
from tests.fakes import ALLOW_ALL, ScriptedPlanner, done, make_agent, tool
from tests.gui.fake_agent import CrossEvent, drive, fake_executor, memory_repo, until
from tests.gui.test_app_wiring import Harness, assert_stopped_by_user, blocking_planner, build

pytestmark = [pytest.mark.gui]


def hang_the_model_check(agent: Any) -> CrossEvent:
    """The model server never answers the check; the event is set once the check began."""
    checking, never = CrossEvent(), CrossEvent()
    real_prepare = agent.prepare

    async def slow_prepare(run: Any, vision: Any = None) -> Any:
        checking.set()
        await never.wait()
        return await real_prepare(run, vision)

    agent.prepare = slow_prepare
    return checking


def hold_until(busy: threading.Event, free: threading.Event) -> bool:
    """On the engine's loop: say it is busy, then keep it so until `free` (10 s at most)."""
    busy.set()
    return free.wait(10)


def test_the_trays_stop_all_while_the_model_is_checked_ends_the_run_before_it_acts(
    harness: Harness, qloop: Any
) -> None:
    agent = harness.agent
    made: list[Any] = []

    def planner_for(run: RunView) -> ScriptedPlanner:
        made.append(run)
        return ScriptedPlanner([done()])

    agent.planner_factory = planner_for
    checking = hang_the_model_check(agent)

    async def scenario() -> None:
        harness.start("anything")
        await until(lambda: checking._event.is_set(), what="the model check")
        assert agent.runner.active_ids, "the run is admitted while its model is checked"
        harness.app.tray.stop_all_action.trigger()
        await harness.finished()

    drive(qloop, scenario())
    run = harness.window.run
    assert_stopped_by_user(run)
    assert made == [], "no planner, so no model request"
    assert agent.runner.services.observer.calls == 0 and agent.runner.services.executor.calls == []
    assert run is not None
    assert memory_repo(agent).runs[run.id].status is RunStatus.STOPPED


def test_a_stop_from_another_thread_ends_the_run_while_the_gui_thread_is_blocked(
    harness: Harness, qloop: Any
) -> None:
    """The hotkey's path: a listener thread hands the stop to the engine's loop; the run ends
    and is stored while the GUI thread does nothing at all (it waits on a plain lock)."""
    agent, client = harness.agent, harness.client
    release = CrossEvent()
    agent.planner_factory = blocking_planner(release)
    stored = threading.Event()

    def on_engine(event: Any) -> None:  # runs on the engine thread
        if isinstance(event, RunFinished):
            stored.set()

    client.engine.call(agent.runner.subscribe, on_engine)
    drive(qloop, _started(harness))

    hotkey = threading.Thread(target=client.engine.call, args=(client.host._on_hotkey,))
    hotkey.start()
    # the GUI thread is blocked from here on: no Qt event, no asyncio callback runs on it
    assert stored.wait(10), "the run did not end while the GUI thread was blocked"
    hotkey.join()
    assert_stopped_by_user(next(iter(memory_repo(agent).runs.values())))
    drive(qloop, harness.finished())  # and the window hears of it once it is free


def test_a_stop_the_engine_hears_before_a_start_asked_earlier_still_stops_that_run(
    harness: Harness, qloop: Any
) -> None:
    """Start, then the stop hotkey, while the engine is busy: both wait in its queue and the
    stop runs first (nothing to stop yet). The run asked for before it must not act."""
    agent, client = harness.agent, harness.client
    asked: list[Any] = []

    def planner_for(run: RunView) -> ScriptedPlanner:
        asked.append(run)
        return ScriptedPlanner([tool("click", x=5, y=5)], then=done())

    agent.planner_factory = planner_for
    busy, free = threading.Event(), threading.Event()
    client.engine.call(hold_until, busy, free)
    assert busy.wait(5)

    async def scenario() -> Any:
        request = RunRequest("click something")
        client.send(client.host.submit, request)  # in the engine's queue, its id known here
        client.send(client.host.stop_everything)  # and the stop behind it
        run_id = request.run_id
        free.set()
        await until(
            lambda: run_id in agent.repo.runs and agent.repo.runs[run_id].status.is_terminal,
            what="the run's end",
        )
        return agent.repo.runs[run_id]

    final = drive(qloop, scenario())
    assert_stopped_by_user(final)
    assert asked == [] and fake_executor(agent).calls == []


def test_the_windows_stop_while_the_run_is_on_its_way_in_ends_it_before_the_model_check(
    harness: Harness, qloop: Any
) -> None:
    """Start, then Stop in the window before the run is admitted (the engine is busy): the
    run ends stopped / user_stop without its model check even beginning."""
    agent, client = harness.agent, harness.client
    checking = hang_the_model_check(agent)
    busy, free = threading.Event(), threading.Event()
    client.engine.call(hold_until, busy, free)
    assert busy.wait(5)

    async def scenario() -> None:
        harness.start("click something")
        await until(lambda: harness.window.live_running, what="the start")
        # the start is in the engine's queue
        harness.window.panel.stop_button.click()
        free.set()
        await harness.finished()

    drive(qloop, scenario())
    assert_stopped_by_user(harness.window.run)
    assert not checking._event.is_set(), "the model check began after the Stop"


async def _started(harness: Harness) -> None:
    harness.start("long task")
    await until(lambda: harness.window.panel.state == "running", what="running")


def test_an_approval_dialog_closes_when_its_run_is_stopped(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, policies={**ALLOW_ALL, "click": Policy.ASK})
    agent.planner_factory = lambda run: ScriptedPlanner([tool("click", x=1, y=2), done()])
    harness = build(qtbot, qloop, agent)
    window = harness.window

    def open_dialogs() -> list[ApprovalDialog]:
        return [d for d in window.findChildren(ApprovalDialog) if d.isVisible()]

    async def scenario() -> None:
        harness.start("press")
        await until(lambda: open_dialogs(), what="the approval dialog")
        harness.app.acting_panel.stop_requested.emit()  # the acting panel's Stop
        await harness.finished()
        await until(lambda: not open_dialogs(), what="the dialog to close")

    try:
        drive(qloop, scenario())
    finally:
        drive(qloop, harness.close())
    run = window.run
    assert run is not None and run.stop_reason is StopReason.USER_STOP
    assert harness.app.approvals.open_dialogs == {}
    assert fake_executor(agent).calls == []
    assert agent.approvals.pending == []


def _threads() -> set[str]:
    # Python's own threads; a "Dummy" entry stands for a thread Qt started (the image
    # loader's pool) and stays listed after it ended, so it says nothing about a leak
    return {
        thread.name
        for thread in threading.enumerate()
        if not isinstance(thread, threading._DummyThread)
    }


def _sockets() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):  # the listing's own, closed by now
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return count


@pytest.mark.posix
def test_closing_the_app_stops_its_runs_and_leaves_no_thread_or_socket(
    qtbot: Any, qloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)  # no hotkey here: its thread is tested apart
    threads_before, sockets_before = _threads(), _sockets()
    agent = make_agent(tmp_path)
    release = CrossEvent()
    agent.planner_factory = blocking_planner(release)
    harness = build(qtbot, qloop, agent)

    async def scenario() -> None:
        await harness.app.start_services()  # the local API, on the engine
        assert harness.client.host.api_port
        await _started(harness)
        await harness.close()

    drive(qloop, scenario())
    assert_stopped_by_user(next(iter(memory_repo(agent).runs.values())))
    assert not harness.client.engine.thread.is_alive()
    assert not (tmp_path / "instances" / f"{os.getpid()}.json").exists()
    left = _threads() - threads_before
    assert left <= {"asyncio_0", "asyncio_1"}, left  # the GUI loop's own to_thread pool
    assert _sockets() <= sockets_before, "a socket was left open"
