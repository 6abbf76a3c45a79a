"""The Host's public interface: a run admitted at the click (its handle first, stoppable at
once), its events on one stream, a refused start and stop-everything as events too."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.errors import ModelUnreachable, RefusedToStart
from desktop_agent.core.events import (
    RunFinished,
    RunStarted,
    StartRefused,
    StopHotkeyChanged,
    StoppedEverything,
    TaskLoopEvent,
    event_to_json,
)
from desktop_agent.core.models import Policy, Risk, RunStatus, StopReason
from desktop_agent.host import Host, RoutineRequest, RunRequest
from desktop_agent.host.starts import store_queued
from tests.fakes import LosingHotkey, ScriptedPlanner, done, make_agent, tool


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    made = Host(make_agent(tmp_path, script=[tool("click", x=5, y=5), done()]))
    yield made
    await made.close()


def heard(host: Host) -> list[TaskLoopEvent]:
    events: list[TaskLoopEvent] = []
    host.subscribe(events.append)
    return events


async def test_start_returns_the_run_before_any_work_and_it_runs_to_the_end(host: Host) -> None:
    events = heard(host)
    request = RunRequest("click something")
    hosted = host.start(request)

    assert hosted.run_id == request.run_id
    assert host._agent.runner.is_active(request.run_id)  # admitted, nothing stored yet
    assert events == []
    final = await hosted.final()
    assert final is not None and final.status is RunStatus.COMPLETED
    assert [e.type for e in events][0] == "run_started" and isinstance(events[-1], RunFinished)
    assert (await host._agent.repo.get_run(request.run_id)) == final


async def test_a_stop_right_after_start_wins_before_the_model_is_asked(host: Host) -> None:
    planners: list[ScriptedPlanner] = []

    def factory(run: Any) -> ScriptedPlanner:
        planners.append(ScriptedPlanner([tool("click", x=5, y=5)], then=done()))
        return planners[-1]

    host._agent.planner_factory = factory
    hosted = host.start(RunRequest("click something"))
    host.stop(hosted.run_id)

    streamed = [event async for event in hosted.events()]
    final = await hosted.final()
    assert final is not None
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert [e.type for e in streamed] == ["run_started", "run_finished"]
    assert planners == [] and host._agent.runner.services.executor.calls == []  # type: ignore[attr-defined]


async def test_a_stop_everything_right_after_start_reaches_the_run_and_is_an_event(
    host: Host,
) -> None:
    events = heard(host)
    hosted = host.start(RunRequest("click something"))
    assert host.stop_everything() == 1
    final = await hosted.final()
    assert final is not None and final.stop_reason is StopReason.USER_STOP
    for _ in range(200):
        if any(isinstance(e, StoppedEverything) for e in events):
            break
        await asyncio.sleep(0.01)
    assert StoppedEverything(here=1, elsewhere=0) in events


async def test_a_refused_start_is_an_event_on_the_run_and_on_the_stream(host: Host) -> None:
    async def unreachable(run: Any, vision: Any = None) -> Any:
        raise ModelUnreachable("the model server at http://127.0.0.1:9/v1 does not answer")

    host._agent.prepare = unreachable  # type: ignore[method-assign]
    events = heard(host)
    hosted = host.start(RunRequest("click something"))

    assert [e.type async for e in hosted.events()] == ["start_refused"]
    assert await hosted.final() is None
    assert events == [
        StartRefused(hosted.run_id, "the model server at http://127.0.0.1:9/v1 does not answer")
    ]
    assert await host._agent.repo.get_run(hosted.run_id) is None  # forgotten: never stored


async def test_start_refuses_an_empty_goal_and_an_unknown_tool_at_once(host: Host) -> None:
    with pytest.raises(RefusedToStart, match="empty"):
        host.start(RunRequest("  "))
    with pytest.raises(RefusedToStart, match="unknown tool"):
        host.start(RunRequest("x", allowed_tools=("teleport",)))
    assert host._agent.runner.active_ids == ()


async def test_the_host_is_the_faces_door_it_hands_out_no_agent(host: Host) -> None:
    """The faces start, read and answer through the Host (docs/architecture.md, Layers)."""
    with pytest.raises(AttributeError):
        host.agent  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(AttributeError):
        host.records.agent  # type: ignore[attr-defined]  # noqa: B018
    assert host.registry.specs() == host.tools
    assert host.permissions.policy("screen_snapshot", Risk.SAFE) is Policy.ALLOW


async def test_a_start_that_allows_an_empty_list_of_tools_is_refused_not_given_every_tool(
    host: Host,
) -> None:
    with pytest.raises(RefusedToStart, match="no tool is allowed"):
        host.start(RunRequest("x", allowed_tools=()))
    with pytest.raises(RefusedToStart, match="no tool is allowed"):
        await store_queued(host._agent, RunRequest("x", allowed_tools=()))
    assert host._agent.runner.active_ids == ()


async def test_close_stops_a_running_run_and_stores_it_stopped(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    gate = asyncio.Event()

    class Slow(ScriptedPlanner):
        async def decide(self, *args: Any, **kwargs: Any) -> Any:
            gate.set()
            await asyncio.Event().wait()

    agent.planner_factory = lambda run: Slow([])
    host = Host(agent)
    hosted = host.start(RunRequest("wait forever"))
    await gate.wait()
    await host.close()
    final = await hosted.final()
    assert final is not None and final.stop_reason is StopReason.USER_STOP
    started = [e async for e in hosted.events()][0]
    assert isinstance(started, RunStarted)


async def test_a_routine_run_is_started_and_owned_like_any(host: Host) -> None:
    from desktop_agent.core.models import RunKind
    from desktop_agent.core.routine import Routine, RoutineStep

    events = heard(host)
    await host._agent.repo.save_routine(Routine("nap", "wait a bit",
                                               (RoutineStep("wait", {"seconds": 0}),)))  # fmt: skip
    hosted = host.start(RoutineRequest("nap"))

    final = await hosted.final()
    assert final is not None and (final.status, final.kind) == (
        RunStatus.COMPLETED,
        RunKind.ROUTINE,
    )
    assert isinstance(events[-1], RunFinished) and events[-1].run == final


async def test_the_stop_hotkeys_state_is_said_when_grabbed_and_when_it_is_lost(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    hotkey = LosingHotkey()
    monkeypatch.setattr("desktop_agent.desktop.hotkey.start_global_hotkey", hotkey.start)
    monkeypatch.setenv("DISPLAY", ":99")
    events = heard(host)
    lost = asyncio.Event()
    host.subscribe(lambda event: lost.set() if getattr(event, "armed", True) is False else None)

    assert await host.grab_stop_hotkey()
    hotkey.lose("its X11 listener ended: connection lost")
    await asyncio.wait_for(lost.wait(), 5)

    assert events == [
        StopHotkeyChanged(True, ""),
        StopHotkeyChanged(False, "its X11 listener ended: connection lost"),
    ]
    assert host.hotkey_problem == "its X11 listener ended: connection lost"
    assert event_to_json(events[1]) == {
        "type": "stop_hotkey_changed",
        "armed": False,
        "why": "its X11 listener ended: connection lost",
    }


async def test_a_stop_hotkey_that_cannot_be_grabbed_is_said_as_not_armed(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    events = heard(host)

    assert not await host.grab_stop_hotkey()

    assert events == [
        StopHotkeyChanged(False, "no X display for the stop hotkey: DISPLAY is not set")
    ]


async def test_without_the_loops_signal_handlers_a_signal_still_stops_every_run(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows' ProactorEventLoop has no add_signal_handler: its add_signal_handler and
    remove_signal_handler are AbstractEventLoop's, which raise NotImplementedError (CPython
    3.11 Lib/asyncio/events.py:573-577)."""

    def not_here(*args: object) -> None:
        raise NotImplementedError

    loop = asyncio.get_running_loop()
    monkeypatch.setattr(loop, "add_signal_handler", not_here)
    monkeypatch.setattr(loop, "remove_signal_handler", not_here)
    before = signal.getsignal(signal.SIGTERM)
    stopped = asyncio.Event()
    hosted = host.start(RunRequest("click something"))

    host.stop_on_signals(then=stopped.set)
    os.kill(os.getpid(), signal.SIGTERM)

    await asyncio.wait_for(stopped.wait(), 5)
    final = await hosted.final()
    assert final is not None and final.stop_reason is StopReason.USER_STOP
    await host.close()
    assert signal.getsignal(signal.SIGTERM) is before


# ── a stop-all that came while the process started (its mark, instances/stop_all.py) ─────


async def test_a_stop_all_marked_since_the_given_entry_mark_stops_the_run_at_its_start(
    tmp_path: Path,
) -> None:
    """`run` hands over the mark as its process started: a stop-all since (the process was
    importing, nobody could find it) stops its run at admission, before its model check."""
    from desktop_agent.instances.stop_all import mark_stop_all, read_stop_mark

    at_entry = read_stop_mark(str(tmp_path))
    mark_stop_all(str(tmp_path))  # another process's stop-all, while this one imported
    host = Host(make_agent(tmp_path, script=[tool("click", x=5, y=5), done()]), stop_mark=at_entry)
    try:
        hosted = host.start(RunRequest("click something"))
        streamed = [event.type async for event in hosted.events()]
        final = await hosted.final()
        assert final is not None
        assert (final.status, final.stop_reason, final.step_count) == (
            RunStatus.STOPPED,
            StopReason.USER_STOP,
            0,
        )
        assert streamed == ["run_started", "run_finished"]
        assert host._agent.runner.services.executor.calls == []  # type: ignore[attr-defined]

        # the mark is seen once: a run asked for after it goes on
        later = await host.start(RunRequest("click something")).final()
        assert later is not None and later.status is RunStatus.COMPLETED
    finally:
        await host.close()


async def test_without_an_entry_mark_a_stop_all_before_the_host_opened_stops_nothing(
    tmp_path: Path,
) -> None:
    """The app asks for nothing at its start: the mark it compares with is the one as its
    Host opened."""
    from desktop_agent.instances.stop_all import mark_stop_all

    mark_stop_all(str(tmp_path))
    host = Host(make_agent(tmp_path, script=[tool("click", x=5, y=5), done()]))
    try:
        final = await host.start(RunRequest("click something")).final()
        assert final is not None and final.status is RunStatus.COMPLETED
    finally:
        await host.close()


async def test_the_hosts_own_stop_everything_does_not_stop_a_run_started_after_it(
    tmp_path: Path,
) -> None:
    """Its stop-all marks the file for the instances still starting; this host stopped its
    own runs at that instant, so its next start (before its API is up) is not stopped."""
    host = Host(make_agent(tmp_path, script=[tool("click", x=5, y=5), done()]))
    try:
        assert host.stop_everything() == 0
        final = await host.start(RunRequest("click something")).final()
        assert final is not None and final.status is RunStatus.COMPLETED
    finally:
        await host.close()


async def test_a_stop_all_reaches_an_instance_whose_api_is_not_served(tmp_path: Path) -> None:
    """The app whose local API could not be served (or `run` before it is): no stop-all can
    find it, so it watches the mark while its runs go on; another process's stop-all stops
    them all the same (it went on before)."""
    from desktop_agent.instances.registry import stop_all_blocking

    release = asyncio.Event()
    asked: list[Any] = []

    async def hang(request: Any) -> Any:
        asked.append(request)
        await release.wait()
        return done()

    host = Host(make_agent(tmp_path))
    host._agent.planner_factory = lambda run: ScriptedPlanner([hang])
    try:
        hosted = host.start(RunRequest("click something"))
        for _ in range(500):
            if asked:
                break
            await asyncio.sleep(0.01)
        assert asked  # the model is thinking

        # another process's stop-all: it finds no instance file and leaves its mark
        assert await asyncio.to_thread(stop_all_blocking, tmp_path) == 0
        final = await asyncio.wait_for(hosted.final(), 5)
        assert final is not None
        assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
        assert len(asked) == 1
    finally:
        release.set()
        await host.close()
