"""`run` and `routine run` share one path (cli/running.py): the run is admitted before the
API and the hotkey are up, and acts only once they are; a refusal is one line and exit 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_agent.cli.exits import EXIT_COMPLETED, EXIT_REFUSED
from desktop_agent.cli.running import run_on_terminal
from desktop_agent.core.events import TaskLoopEvent
from desktop_agent.core.tools import NO_TOOL_ALLOWED
from desktop_agent.host import Host, RunRequest
from desktop_agent.host.requests import Ready, StartRequest
from desktop_agent.launch import local_api
from tests.fakes import LosingHotkey, done, make_agent, tool


async def test_the_run_acts_only_once_the_api_and_the_hotkey_are_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hotkey = LosingHotkey()
    monkeypatch.setattr("desktop_agent.desktop.hotkey.start_global_hotkey", hotkey.start)
    host = Host(make_agent(tmp_path, script=[tool("wait", seconds=0), done()]), local_api=local_api)
    seen: list[str] = []
    host.subscribe(lambda event: seen.append(event.type))
    asked: list[Ready] = []

    def request_for(ready: Ready) -> StartRequest:
        asked.append(ready)
        return RunRequest("wait once", ready=ready)

    def said(event: TaskLoopEvent) -> None:
        if event.type == "run_started":
            # admitted before, acting after: the API serves it and the hotkey is armed
            assert host.api_port is not None and asked[0].done()

    host.subscribe(said)
    try:
        code = await run_on_terminal(host, request_for, as_json=True)
    finally:
        await host.close()
    assert code == EXIT_COMPLETED
    assert "stop_hotkey_changed" in seen and seen.index("stop_hotkey_changed") < seen.index(
        "run_started"
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[-1]["type"] == "run_finished" and lines[-1]["run"]["status"] == "completed"


async def test_a_refused_start_is_one_line_and_exit_3_with_nothing_served(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    host = Host(make_agent(tmp_path, script=[done()]), local_api=local_api)
    try:
        code = await run_on_terminal(
            host, lambda ready: RunRequest("g", allowed_tools=(), ready=ready), as_json=False
        )
    finally:
        await host.close()
    assert code == EXIT_REFUSED
    assert host.api_port is None
    assert capsys.readouterr().err == f"desktop-agent: {NO_TOOL_ALLOWED}\n"
