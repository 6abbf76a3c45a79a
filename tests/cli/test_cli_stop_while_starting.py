"""`run` and `routine run`: a stop (Ctrl+C, SIGTERM, the API's stop-all) that comes while the
run is on its way in — its routine read from the store, the local API and the hotkey being
set up — ends it stopped / user_stop: exit 2, no model request, no input.

The process is the real CLI code on this test's loop (its signal handlers, its controls-only
API on loopback) over an Agent whose desktop and model are fakes (tests/gui/fake_agent.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.cli.exits import EXIT_STOPPED
from desktop_agent.core.routine import Routine, RoutineStep
from desktop_agent.host import Host
from desktop_agent.launch import local_api
from desktop_agent.settings import Settings
from tests.fakes import ScriptedPlanner, done, make_agent, tool


class Process:
    """The CLI's Host over fakes; what asked the model; the set-up steps a test may hold."""

    def __init__(self, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.agent = make_agent(data_dir)
        self.planners: list[ScriptedPlanner] = []
        self.agent.planner_factory = self._planner
        agent = self.agent
        self.stops_all = 0
        real_stop_all = agent.runner.stop_all

        def stop_all() -> int:
            self.stops_all += 1
            return real_stop_all()

        monkeypatch.setattr(agent.runner, "stop_all", stop_all)

        async def open_host(cls: type[Host], *args: Any, **kwargs: Any) -> Host:
            return cls(agent, local_api=kwargs.get("local_api"))

        async def no_hotkey(host: Host, combo: str | None = None) -> bool:
            return False  # no X display is grabbed from a test

        async def no_watch(host: Host) -> None:
            return None

        monkeypatch.setattr(Host, "open", classmethod(open_host))
        monkeypatch.setattr(Host, "grab_stop_hotkey", no_hotkey)
        monkeypatch.setattr(Host, "watch_takeover", no_watch)

    def _planner(self, run: Any) -> ScriptedPlanner:
        self.planners.append(ScriptedPlanner([tool("click", x=5, y=5)], then=done()))
        return self.planners[-1]

    @property
    def model_requests(self) -> list[Any]:
        return [request for planner in self.planners for request in planner.requests]

    @property
    def inputs(self) -> list[Any]:
        return self.agent.runner.services.executor.calls  # type: ignore[attr-defined,no-any-return]


def stdout_events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


async def test_routine_run_stopped_by_a_signal_while_the_routine_is_read_exits_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from desktop_agent.cli.routines import _run_routine

    process = Process(tmp_path, monkeypatch)
    repo = process.agent.repo
    await repo.save_routine(
        Routine("poke", "click it", (RoutineStep("click", {"x": 5, "y": 5}),), grants=("click",))
    )
    reads: list[str] = []
    reading, release = asyncio.Event(), asyncio.Event()
    real_get = repo.get_routine

    async def held(name: str) -> Any:  # the run's own look-up waits until the test says
        reads.append(name)
        found = await real_get(name)
        if len(reads) == 2:  # the first is the CLI's, for the secrets to ask
            reading.set()
            await release.wait()
        return found

    monkeypatch.setattr(repo, "get_routine", held)
    args = argparse.Namespace(name="poke", set=[], scheduled=False, approve="all",
                              allow_dangerous="", json=True, no_agent=False,
                              local_api=local_api)  # fmt: skip
    running = asyncio.ensure_future(_run_routine(args, tmp_path, Settings()))
    await asyncio.wait_for(reading.wait(), 10)
    os.kill(os.getpid(), signal.SIGINT)  # the CLI's handler: stop every run here
    await _until(lambda: _stopped(process))
    release.set()
    code = await asyncio.wait_for(running, 10)

    events = stdout_events(capsys.readouterr().out)
    assert code == EXIT_STOPPED
    assert [e["type"] for e in events] == ["run_started", "run_finished"]
    final = events[-1]["run"]
    assert (final["status"], final["stop_reason"], final["routine"]) == (
        "stopped",
        "user_stop",
        "poke",
    )
    assert process.model_requests == [] and process.inputs == []


async def test_run_stopped_by_a_signal_while_the_api_is_set_up_exits_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, `run` admitted its run after the API and the hotkey were up: a Ctrl+C while
    they were set up stopped nothing, and the run went on."""
    from desktop_agent.cli.commands import _run

    process = Process(tmp_path, monkeypatch)
    serving, release = asyncio.Event(), asyncio.Event()
    real_serve = Host.serve_api

    async def slow_serve(host: Host, *args: Any, **kwargs: Any) -> int:
        serving.set()
        await release.wait()
        return await real_serve(host, *args, **kwargs)

    monkeypatch.setattr(Host, "serve_api", slow_serve)
    args = argparse.Namespace(
        goal="click it", approve="all", allow_dangerous=None, json=True,
        vision=None, max_steps=None, max_failures=None, allow=None, local_api=local_api,
    )  # fmt: skip
    running = asyncio.ensure_future(_run(args, tmp_path, Settings()))
    await asyncio.wait_for(serving.wait(), 10)
    os.kill(os.getpid(), signal.SIGINT)
    await _until(lambda: _stopped(process))
    release.set()
    code = await asyncio.wait_for(running, 10)

    events = stdout_events(capsys.readouterr().out)
    assert code == EXIT_STOPPED
    assert [e["type"] for e in events] == ["run_started", "run_finished"]
    assert events[-1]["run"]["stop_reason"] == "user_stop"
    assert process.model_requests == [] and process.inputs == []


def _stopped(process: Process) -> bool:
    """The signal's stop-all was carried out."""
    return process.stops_all == 1


async def _until(condition: Any, within_s: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"not within {within_s} s: {condition}")
        await asyncio.sleep(0.002)
