"""Every way to stop a run from outside ends it at once, mid model request, and nothing follows."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.conftest import Cli, json_lines
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
    # the model server never answers its listing: the run is still being checked
    server = model(script=[], hang_checks=True)
    process = cli.start_run("open the editor", server, "--approve", "all")
    wait_until(
        lambda: server.models_requests or process.poll() is not None,
        timeout=30,
        what="the model check",
    )
    assert process.poll() is None, process.communicate()
    wait_until(
        lambda: list((cli.data_dir / "instances").glob("*.json")), timeout=10, what="the instance"
    )
    if stop is stop_by_hotkey:
        wait_until(lambda: "stop hotkey ctrl+alt+esc is on" in _log(cli), timeout=10)

    stop(cli, process)
    out, err = process.communicate(timeout=30)

    assert process.returncode == 2, err
    events = json_lines(out)
    assert [e["type"] for e in events] == ["run_started", "run_finished"]
    final = events[-1]["run"]
    assert (final["status"], final["stop_reason"]) == ("stopped", "user_stop")
    assert final["step_count"] == 0  # no screenshot, no decision, no input
    assert server.requests == [], "no chat request after the stop"
    stored = json.loads(cli.call("show", final["id"], "--json").stdout.splitlines()[-1])
    assert stored["run"]["status"] == "stopped"


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
