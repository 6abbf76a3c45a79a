"""Every face turns on what it serves in the Host's one order (`Host.turn_on`, issue 32
item 2): the takeover watch, the signals, the face's first run, the local API, the stop
hotkey — so a stop from the signals on reaches the run, and whatever the API starts has the
takeover watch from its first instant. `Host.serving` closes the host however the face's
work ends.

The faces are the real CLI code (`run`, `serve`, `mcp`) on a Host over an Agent whose desktop
and model are fakes (tests/fakes.py); the API is the real one on loopback. The hotkey and the
takeover watch are recorded, not grabbed (no X display here).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.models import RunStatus, StopReason
from desktop_agent.host import Host, RunRequest
from desktop_agent.launch import local_api
from desktop_agent.settings import Settings
from tests.fakes import done, make_agent, tool

#: the one order (Host.turn_on); a face without a first run has no "start"
ORDER = ["takeover", "signals", "start", "api", "hotkey"]


class Recorder:
    """The Host's start-up steps as a face takes them, in order; `at_api` runs once the
    API is served (a test ends its face there)."""

    def __init__(self, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.agent = make_agent(data_dir, script=[tool("wait", seconds=0), done()])
        self.steps: list[str] = []
        self.at_api: Any = None
        agent, steps = self.agent, self.steps
        real_serve, real_start, real_signals = Host.serve_api, Host.start, Host.stop_on_signals

        async def open_host(cls: type[Host], *args: Any, **kwargs: Any) -> Host:
            return cls(agent, local_api=kwargs.get("local_api"))

        async def hotkey(host: Host, combo: str | None = None) -> bool:
            steps.append("hotkey")
            return False  # no X display is grabbed from a test

        async def takeover(host: Host) -> None:
            steps.append("takeover")

        def signals(host: Host, then: Any = None) -> None:
            steps.append("signals")
            real_signals(host, then)

        def start(host: Host, request: Any, **kwargs: Any) -> Any:
            steps.append("start")
            return real_start(host, request, **kwargs)

        async def serve(host: Host, *args: Any, **kwargs: Any) -> int:
            steps.append("api")
            port = await real_serve(host, *args, **kwargs)
            if self.at_api is not None:
                self.at_api()
            return port

        monkeypatch.setattr(Host, "open", classmethod(open_host))
        monkeypatch.setattr(Host, "grab_stop_hotkey", hotkey)
        monkeypatch.setattr(Host, "watch_takeover", takeover)
        monkeypatch.setattr(Host, "stop_on_signals", signals)
        monkeypatch.setattr(Host, "start", start)
        monkeypatch.setattr(Host, "serve_api", serve)


def interrupt() -> None:
    """Ctrl+C: the face's signal handler ends it."""
    os.kill(os.getpid(), signal.SIGINT)


async def test_run_admits_its_run_after_the_signals_and_before_its_api_and_hotkey(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from desktop_agent.cli.commands import _run

    recorder = Recorder(tmp_path, monkeypatch)
    args = argparse.Namespace(
        goal="wait once", approve="all", allow_dangerous=None, json=True,
        vision=None, max_steps=None, max_failures=None, allow=None, local_api=local_api,
    )  # fmt: skip

    assert await _run(args, tmp_path, Settings()) == 0
    assert recorder.steps == ORDER


def test_serve_watches_for_a_takeover_before_its_api_can_start_a_run(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, `serve` served its API first and watched for a takeover last, after the
    hotkey's grab: a run the API started meanwhile was not paused by the user's input."""
    from desktop_agent.cli.commands import _cmd_serve

    recorder = Recorder(tmp_path, monkeypatch)
    recorder.at_api = interrupt

    assert _cmd_serve(argparse.Namespace(port=0, local_api=local_api), tmp_path) == 0
    assert recorder.steps == [step for step in ORDER if step != "start"]


async def test_mcp_watches_for_a_takeover_before_its_api_can_start_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, `mcp` served its API first and watched for a takeover last."""
    from desktop_agent.mcp.serve import serve_mcp

    recorder = Recorder(tmp_path, monkeypatch)
    recorder.at_api = interrupt

    assert await serve_mcp(tmp_path, Settings(), http=True, port=0, local_api=local_api) == 0
    assert recorder.steps == [step for step in ORDER if step != "start"]


async def test_serving_closes_the_host_when_the_faces_work_fails(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, script=[tool("wait", seconds=0), done()])

    async def open_host(*args: Any, **kwargs: Any) -> Host:
        return Host(agent)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Host, "open", open_host)
        with pytest.raises(RuntimeError, match="the face broke"):
            async with Host.serving(tmp_path, Settings()) as host:
                hosted = host.start(RunRequest("wait once"))
                raise RuntimeError("the face broke")

    final = await asyncio.wait_for(hosted.final(), 10)
    assert final is not None
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert agent.runner.active_ids == ()
