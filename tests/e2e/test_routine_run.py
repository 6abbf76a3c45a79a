"""Teach once, run again, on a real desktop: l3afpad on Xvfb, the real CLI, a loopback model.

The agent writes a note and saves it; the run is saved as a routine with the text and the
file name as parameters; the routine runs again with other values in an editor window
that was moved and resized — no model request, every step checked — and then where the
editor is missing: stopped routine_mismatch without a model, handed to the agent with one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cli, display_clients, json_lines
from tests.e2e.test_whole_task import EditorModel
from tests.support.gtk import still_gtk_env
from tests.support.model_server import ModelServer
from tests.support.xdisplay import wait_until

LINE = "taught line 1"
NEW_LINE = "routine line 2"
_EDIT = re.compile(r'^\[(\d+)\] (?:text|edit) "[^"]*" @', re.M)


class NoteModel(EditorModel):
    """test_whole_task's editor model, which first clicks the editor's text area (an element:
    a step whose target a routine must find again) and writes `line`; it launches the
    editor when there is none."""

    def __init__(self, target: Path, line: str) -> None:
        super().__init__(target)
        self.line = line

    def decide(self, screen: str) -> dict[str, Any]:
        if "L3afpad" in screen and 'window "Save As' not in screen and "type line" not in self.done:
            edit = _EDIT.search(screen)
            if edit is None:
                return _use("wait", "the text area is not listed yet", seconds=0.2)
            if self._once("click text"):
                return _use("click", "put the caret in the text", element=int(edit.group(1)))
            self.done.add("type line")
            return _use("type_text", "write the line", text=self.line)
        return super().decide(screen)


def _use(tool: str, why: str, **args: Any) -> dict[str, Any]:
    return {"action": "tool", "tool": tool, "args": args, "reason": why}


@pytest.fixture
def editors() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The editors a test starts itself; reaped at its end."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def still_editor_env(cli: Cli) -> dict[str, str]:
    """The environment of an l3afpad whose screen changes only when it is acted on (no caret
    blink, no overlay scroll bar fading): the routine checks each step's effect on it."""
    return still_gtk_env(cli.data_dir.parent / "gtk-config")


def start_editor(cli: Cli, editors: list[subprocess.Popen[bytes]]) -> int:
    """A fresh l3afpad in front; its X window id."""
    env = cli.env(still_editor_env(cli))
    editors.append(subprocess.Popen(["l3afpad"], env=env, start_new_session=True))
    found: list[int] = []

    def listed() -> bool:
        out = xdotool(cli, "search", "--onlyvisible", "--class", "l3afpad").split()
        found[:] = [int(w) for w in out]
        return bool(found)

    wait_until(listed, timeout=20, what="l3afpad's window")
    window = found[-1]
    xdotool(cli, "windowactivate", "--sync", str(window))
    return window


def xdotool(cli: Cli, *args: str) -> str:
    done = subprocess.run(["xdotool", *args], env=cli.env(), capture_output=True, text=True,
                          timeout=20, check=False)  # fmt: skip
    return done.stdout


def close_editors(cli: Cli, editors: list[subprocess.Popen[bytes]]) -> None:
    """End the editors on this test's display (never another's)."""
    for pid in display_clients(cli.session.display):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "l3afpad":
                os.kill(pid, signal.SIGKILL)
    for process in editors:
        process.wait(timeout=10)
    wait_until(
        lambda: not xdotool(cli, "search", "--onlyvisible", "--class", "l3afpad").split(),
        timeout=10,
        what="l3afpad to close",
    )


def routine_run(cli: Cli, *options: str, env: dict[str, str] | None = None) -> Any:
    process = cli.start("routine", "run", "note", "--json", "--approve", "all", *options, env=env)
    out, err = process.communicate(timeout=180)
    events = json_lines(out)
    return process.returncode, events, err


def reasons(events: list[dict[str, Any]]) -> list[str]:
    """The decide rows' reasons: what the routine (or the model) did, turn by turn."""
    steps = [e["step"] for e in events if e["type"] == "step_finished"]
    return [s["reason"] for s in steps if s["kind"] == "decide" and s["reason"]]


def actions_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e["step"] for e in events
        if e["type"] == "step_finished" and e["step"]["kind"] == "action"
    ]  # fmt: skip


@pytest.mark.timeout(600)
def test_a_taught_note_runs_again_moved_and_resized_without_the_model_then_hands_over(
    cli: Cli, model: Any, tmp_path: Path, editors: list[subprocess.Popen[bytes]]
) -> None:
    taught = tmp_path / "taught.txt"
    server: ModelServer = model(respond=NoteModel(taught, LINE))
    start_editor(cli, editors)

    process = cli.start_run("write a line in the editor and save it", server,
                            "--approve", "all", "--max-steps", "30")  # fmt: skip
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    events = json_lines(out)
    assert taught.read_bytes() == LINE.encode()
    typed = [s["index"] for s in actions_of(events) if s["tool"] == "type_text"]
    run_id = events[-1]["run_id"]

    saved = cli.call("routine", "save", run_id, "note", "--param", f"text={typed[0]}",
                     "--param", f"path={typed[1]}",
                     "--grant", "click,type_text,hotkey")  # fmt: skip
    assert saved.returncode == 0, saved.stderr
    assert f"parameters: text='{LINE}', path='{taught}'" in saved.stdout

    # again, with other values, in a fresh editor that was moved and resized
    close_editors(cli, editors)
    window = start_editor(cli, editors)
    xdotool(cli, "windowsize", "--sync", str(window), "900", "560")
    xdotool(cli, "windowmove", "--sync", str(window), "700", "380")
    xdotool(cli, "windowactivate", "--sync", str(window))
    asked_before = len(server.requests)
    again = tmp_path / "again.txt"

    code, events, err = routine_run(cli, "--set", f"text={NEW_LINE}", "--set", f"path={again}",
                                    "--no-agent")  # fmt: skip

    final = events[-1]["run"]
    assert code == 0, (err, final["message"], reasons(events))
    assert (final["status"], final["kind"], final["routine"]) == ("completed", "routine", "note")
    assert again.read_bytes() == NEW_LINE.encode()
    assert len(server.requests) == asked_before  # no model request
    assert (final["prompt_tokens"], final["completion_tokens"]) == (0, 0)
    decides = [e["step"] for e in events if e["type"] == "step_finished"
               and e["step"]["kind"] == "decide"]  # fmt: skip
    played = [d for d in decides if re.match(r"routine step \d+/\d+: ", d["reason"] or "")]
    steps = len(played)
    assert [d["reason"].split(":")[0] for d in played] == [
        f"routine step {n}/{steps}" for n in range(1, steps + 1)
    ]
    shown = cli.call("show", final["id"], "--json")  # a routine run replays like any run
    live = [e["step"] for e in events if e["type"] == "step_finished"]
    assert [e["step"] for e in json_lines(shown.stdout) if e["type"] == "step_finished"] == live
    click = next(s for s in actions_of(events) if s["tool"] == "click")
    # the text area of the moved window: its target is right of and below the new corner
    x, y = click["target"]
    assert x >= 700 * 1280 // 1920 and y >= 380 * 720 // 1080, click

    # the editor is missing: without a model the run stops naming the step
    close_editors(cli, editors)
    code, events, err = routine_run(cli, "--no-agent")
    final = events[-1]["run"]
    assert code == 1, err
    assert (final["status"], final["stop_reason"]) == ("failed", "routine_mismatch")
    assert re.match(
        r'routine note: step \d+ \(click on \w+ "[^"]*" in "[^"]*L3afpad"\) does '
        r"not match: ",
        final["message"],
    ), final["message"]
    assert len(server.requests) == asked_before

    # with a model, the agent takes over (it starts the editor) and the model is asked again
    third = tmp_path / "third.txt"
    helper: ModelServer = model(respond=NoteModel(third, "third line"))
    code, events, err = routine_run(
        cli, "--set", "text=third line", "--set", f"path={third}",
        "--allow-dangerous", "launch_app",
        env={"DESKTOP_AGENT_BASE_URL": helper.base_url, "DESKTOP_AGENT_MODEL": "qwen2.5vl",
             "DESKTOP_AGENT_VISION": "yes", **still_editor_env(cli)},  # the editor it launches
    )  # fmt: skip
    final = events[-1]["run"]
    assert code == 0, (err, final["message"], reasons(events))
    assert final["kind"] == "routine" and len(helper.requests) > 0
    assert third.read_bytes() == b"third line"
    first_ask = json.dumps(helper.requests[0])
    assert "Remaining steps of the routine" in first_ask
