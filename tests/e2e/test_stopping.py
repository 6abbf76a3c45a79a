"""Every way to stop a run from outside ends it at once, mid model request, and nothing follows."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.routine import Routine, RoutineStep
from desktop_agent.store import SqliteRunRepository
from tests.e2e.conftest import ROOT, Cli, json_lines
from tests.e2e.stopped import assert_stopped_before_any_model_request, start_checked_run
from tests.support.model_server import Hang, ModelServer
from tests.support.xdisplay import wait_until


def start_hanging_run(cli: Cli, model: Callable[..., ModelServer]) -> tuple[Any, ModelServer]:
    """A run whose first model request never gets an answer."""
    server = model(script=[Hang()])
    process = cli.start_run("open the editor", server, "--approve", "all")
    wait_until(
        lambda: server.requests or process.poll() is not None, timeout=30, what="the model request"
    )
    assert process.poll() is None, process.communicate()
    # the instance registers itself for stop-all before the run starts
    wait_until(
        lambda: list((cli.data_dir / "instances").glob("*.json")),
        timeout=10,
        what="the instance file",
    )
    return process, server


def stop_by_sigint(cli: Cli, process: Any) -> None:
    process.send_signal(signal.SIGINT)


def stop_by_sigterm(cli: Cli, process: Any) -> None:
    process.send_signal(signal.SIGTERM)


def stop_by_hotkey(cli: Cli, process: Any) -> None:
    subprocess.run(["xdotool", "key", "ctrl+alt+Escape"], env=cli.env(), check=True)


def stop_by_stop_all(cli: Cli, process: Any) -> None:
    result = cli.call("stop-all")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "stopped 1 run(s)"


@pytest.mark.parametrize(
    "stop",
    [stop_by_sigint, stop_by_sigterm, stop_by_hotkey, stop_by_stop_all],
    ids=["sigint", "sigterm", "hotkey", "stop-all"],
)
def test_a_stop_during_the_model_request_ends_the_run_user_stop_with_nothing_after(
    cli: Cli, model: Callable[..., ModelServer], stop: Callable[[Cli, Any], None]
) -> None:
    process, server = start_hanging_run(cli, model)
    if stop is stop_by_hotkey:
        # the run grabs the key before its first turn and says so in its log
        wait_until(
            lambda: "stop hotkey ctrl+alt+esc is on" in _log(cli),
            timeout=10,
            what="the hotkey grab",
        )

    stop(cli, process)
    out, err = process.communicate(timeout=30)

    assert process.returncode == 2, err
    events = json_lines(out)
    final = events[-1]
    assert final["type"] == "run_finished"
    assert (final["run"]["status"], final["run"]["stop_reason"]) == ("stopped", "user_stop")
    steps = [e["step"] for e in events if e["type"] == "step_finished"]
    assert [s["kind"] for s in steps] == ["observe", "decide"]
    assert steps[-1]["status"] == "skipped"
    assert len(server.requests) == 1
    assert not list((cli.data_dir / "instances").glob("*.json"))


@pytest.mark.parametrize(
    "stop",
    [stop_by_sigint, stop_by_sigterm, stop_by_hotkey, stop_by_stop_all],
    ids=["sigint", "sigterm", "hotkey", "stop-all"],
)
def test_a_stop_while_the_model_is_checked_ends_the_run_before_any_model_request_or_input(
    cli: Cli, model: Callable[..., ModelServer], stop: Callable[[Cli, Any], None]
) -> None:
    process, server = start_checked_run(cli, model)
    wait_until(
        lambda: list((cli.data_dir / "instances").glob("*.json")), timeout=10, what="the instance"
    )
    if stop is stop_by_hotkey:
        wait_until(lambda: "stop hotkey ctrl+alt+esc is on" in _log(cli), timeout=10)

    stop(cli, process)
    assert_stopped_before_any_model_request(cli, process, server)


def test_a_run_killed_mid_run_shows_as_interrupted_crash(
    cli: Cli, model: Callable[..., ModelServer]
) -> None:
    process, _ = start_hanging_run(cli, model)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()

    listed = cli.call("runs", "--json")

    assert listed.returncode == 0, listed.stderr
    run = json.loads(listed.stdout)[0]
    assert (run["status"], run["stop_reason"]) == ("interrupted", "crash")
    assert run["step_count"] == 0


def _log(cli: Cli) -> str:
    path = cli.data_dir / "desktop-agent.log"
    return path.read_text() if path.exists() else ""


#: `desktop-agent` as its console script runs it, held where it imports its command line (the
#: 0.3-1 s a process spends importing before its Host opens) until a line comes on stdin
HELD_AT_IMPORT = """
import importlib.abc, sys

class Hold(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "desktop_agent.cli":
            sys.meta_path.remove(self)
            print("held", file=sys.stderr, flush=True)
            sys.stdin.readline()
        return None

sys.meta_path.insert(0, Hold())
from desktop_agent.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("command", ["run", "routine run"])
def test_a_stop_all_while_the_process_is_still_importing_stops_what_it_was_asked_for(
    cli: Cli, model: Callable[..., ModelServer], command: str
) -> None:
    """`stop-all` from another process between the start of `run` (or `routine run`) and its
    Host opening finds no instance to tell; the mark it left is read at the process's entry,
    so the run is stopped before it started: exit 2, no model request of any kind, nothing
    observed or done."""
    server = model(script=[{"action": "done", "message": "ok"}])
    if command == "run":
        words = ["run", "say hi", "--base-url", server.base_url, "--model", "qwen2.5vl",
                 "--vision", "yes"]  # fmt: skip
    else:
        waits = Routine("pause", "wait a moment", (RoutineStep("wait", {"seconds": 0}),))
        asyncio.run(_save_routine(cli.data_dir, waits))
        words = ["routine", "run", "pause", "--no-agent"]
    process = subprocess.Popen(
        [sys.executable, "-c", HELD_AT_IMPORT, *words, "--json", "--approve", "all",
         "--data-dir", str(cli.data_dir)],
        cwd=ROOT, env=cli.env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    cli.started.append(process)
    assert process.stderr is not None and process.stdin is not None
    assert process.stderr.readline().strip() == "held"

    stopped = cli.call("stop-all")  # nobody is registered yet: it can only leave its mark
    assert (stopped.returncode, stopped.stdout) == (0, "stopped 0 run(s)\n"), stopped.stderr
    process.stdin.write("go\n")
    process.stdin.flush()
    out, err = process.communicate(timeout=60)

    assert process.returncode == 2, err
    events = json_lines(out)
    assert [e["type"] for e in events] == ["run_started", "run_finished"]
    final = events[-1]["run"]
    assert (final["status"], final["stop_reason"], final["step_count"]) == (
        "stopped",
        "user_stop",
        0,
    )
    assert (server.requests, server.models_requests) == ([], 0)


async def _save_routine(data_dir: Path, routine: Routine) -> None:
    repo = await asyncio.to_thread(SqliteRunRepository.open, data_dir)
    try:
        await repo.save_routine(routine)
    finally:
        repo.close()


def test_a_run_whose_output_reader_is_gone_is_stopped_quietly(
    cli: Cli, model: Callable[..., ModelServer]
) -> None:
    """`desktop-agent run … --json | head -0`: its first event meets a closed pipe; the run is
    stopped (nobody sees what it does), no traceback, exit 2."""
    server = model(script=[Hang()])
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            cli.command("run", "open the editor", "--base-url", server.base_url, "--model",
                        "qwen2.5vl", "--vision", "yes", "--json", "--approve", "all"),
            cwd=ROOT, env=cli.env(), stdout=write, stderr=subprocess.PIPE, text=True,
            timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 2
    [run] = json.loads(cli.call("runs", "--json").stdout)
    assert (run["status"], run["stop_reason"]) == ("stopped", "user_stop")
