"""What the model (or the screen, through it) says reaches the terminal as text, never as
terminal commands: `run`'s lines, `runs` and `show`, human and JSON."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Cli, json_lines
from tests.support.model_server import Reply

HIDDEN = ("\x1b", "\x9b", "\x07", "\r", "\u202e", "\u2066")
GOAL = "tidy the desktop \x1b[5m\u2066"
MESSAGE = "\x1b[2J\x1b[31mALL GOOD\u202e\x9b"


def assert_literal(text: str) -> None:
    assert not [char for char in HIDDEN if char in text], text


def test_run_runs_and_show_print_the_models_words_without_acting_on_the_terminal(
    cli: Cli, model: Any
) -> None:
    server = model(
        script=[
            Reply({"action": "tool", "tool": "wait", "args": {"seconds": 0},
                   "reason": "\u202etiaw\r"}),
            Reply({"action": "done", "message": MESSAGE, "reason": "\x1b]0;pwned\x07"}),
        ]
    )  # fmt: skip
    process = cli.start(
        "run", GOAL, "--base-url", server.base_url, "--model", "qwen2.5vl", "--vision", "yes"
    )
    out, err = process.communicate(timeout=90)
    assert process.returncode == 0, err

    assert_literal(out)
    assert "\\x1b[2J\\x1b[31mALL GOOD\\u202e\\x9b" in out  # the done line and the summary
    assert "'tidy the desktop \\x1b[5m\\u2066'" in out  # the run's first line

    listed = cli.call("runs")
    assert_literal(listed.stdout)
    assert "tidy the desktop \\x1b[5m\\u2066" in listed.stdout
    [run] = json.loads(cli.call("runs", "--json").stdout)
    assert run["goal"] == GOAL and run["message"] == MESSAGE  # JSON: the same values

    shown = cli.call("show", run["id"])
    assert_literal(shown.stdout)
    assert "ALL GOOD" in shown.stdout
    replayed = cli.call("show", run["id"], "--json")
    assert_literal(replayed.stdout)
    assert json_lines(replayed.stdout)[-1]["run"]["message"] == MESSAGE
