"""What every stop of a run still being checked must show, whichever way it came (a signal,
the hotkey, stop-all, the GlobalShortcuts portal): shared by test_stopping.py and
test_stop_global_shortcuts.py so the two say the same thing once."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

from tests.e2e.conftest import Cli, json_lines
from tests.support.model_server import ModelServer
from tests.support.xdisplay import wait_until


def start_checked_run(
    cli: Cli, model: Callable[..., ModelServer], env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], ModelServer]:
    """A run whose model check never ends: the model server never answers its listing."""
    server = model(script=[], hang_checks=True)
    process = cli.start_run("open the editor", server, "--approve", "all", env=env)
    wait_until(
        lambda: server.models_requests or process.poll() is not None,
        timeout=30,
        what="the model check",
    )
    assert process.poll() is None, process.communicate()
    return process, server


def assert_stopped_before_any_model_request(
    cli: Cli, process: subprocess.Popen[str], server: ModelServer
) -> dict[str, Any]:
    """The run ends stopped / user_stop (exit 2) with no step, no chat request, and is stored
    so; its final view."""
    out, err = process.communicate(timeout=30)
    assert process.returncode == 2, err
    events = json_lines(out)
    assert [e["type"] for e in events] == ["run_started", "run_finished"]
    final: dict[str, Any] = events[-1]["run"]
    assert (final["status"], final["stop_reason"]) == ("stopped", "user_stop")
    assert final["step_count"] == 0  # no screenshot, no decision, no input
    assert server.requests == [], "no chat request after the stop"
    stored = json.loads(cli.call("show", final["id"], "--json").stdout.splitlines()[-1])
    assert stored["run"]["status"] == "stopped"
    return final
