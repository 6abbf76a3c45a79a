"""`run --approve ask` in a real terminal (a pty): a line typed before the question, as the
agent could type into the CLI's own terminal, approves nothing."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from tests.e2e.conftest import ROOT, Cli, json_lines
from tests.support.model_server import Reply

LAUNCH = {"action": "tool", "tool": "launch_app", "args": {"command": "true"}, "reason": "go"}
DONE = {"action": "done", "message": "nothing more", "reason": "-"}


def test_a_line_typed_ahead_into_the_terminal_does_not_approve(cli: Cli, model: Any) -> None:
    server = model(script=[Reply(LAUNCH), Reply(DONE)])
    cli.data_dir.mkdir(parents=True)
    # the question denies by itself after a second: nobody answers it in this test
    (cli.data_dir / "settings.toml").write_text("approval_timeout_s = 1\n")
    user, terminal = os.openpty()
    try:
        process = subprocess.Popen(
            cli.command(
                "run",
                "look",
                "--base-url",
                server.base_url,
                "--model",
                "qwen2.5vl",
                "--vision",
                "yes",
                "--json",
                "--approve",
                "ask",
            ),  # fmt: skip
            cwd=ROOT,
            env=cli.env(),
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        cli.started.append(process)
        # typed while the run starts, long before it asks: "allow once"
        os.write(user, b"o\n")
        out, err = process.communicate(timeout=60)
    finally:
        os.close(user)
        os.close(terminal)

    assert "allow launch_app" in err, err
    events = json_lines(out)
    resolved = [e["approval"] for e in events if e["type"] == "approval_resolved"]
    assert [(e["decision"], e["by"]) for e in resolved] == [("deny", "timeout")], resolved
    launched = [
        e["step"]
        for e in events
        if e["type"] == "step_finished"
        and (e["step"]["kind"], e["step"]["tool"]) == ("action", "launch_app")
    ]
    assert [step["status"] for step in launched] == ["denied"], launched
