"""The user takes over a CLI run: xdotool (the user) pauses it, the agent's own input never
does, and a resume through the local API carries it to the end."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Callable
from typing import Any

from desktop_agent.instances.registry import live_instances, read_token
from tests.e2e.conftest import Cli, Lines
from tests.support.model_server import ModelServer, Reply
from tests.support.xdisplay import wait_until

#: the model "thinks" this long on the turn the user acts in (ends early if the run stops)
THINKING_S = 4.0


def act(tool: str, delay_s: float = 0.0, **args: Any) -> Reply:
    return Reply(
        {"action": "tool", "tool": tool, "args": args, "reason": f"{tool} now"}, delay_s=delay_s
    )


def xdotool(cli: Cli, *command: str) -> None:
    subprocess.run(["xdotool", *command], env=cli.env(), check=True, timeout=10)


def post(cli: Cli, path: str) -> dict[str, Any]:
    (instance,) = live_instances(cli.data_dir)
    request = urllib.request.Request(
        f"http://127.0.0.1:{instance.port}{path}",
        method="POST",
        headers={"Authorization": f"Bearer {read_token(cli.data_dir)}"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        body: dict[str, Any] = json.loads(answer.read() or b"{}")
        return body


def test_the_users_input_between_actions_pauses_the_run_and_the_api_resumes_it(
    cli: Cli, model: Callable[..., ModelServer]
) -> None:
    server = model(
        script=[
            act("move_mouse", x=200, y=200),  # the agent's own input: no pause
            act("click", x=210, y=220),
            act("scroll", amount=-2),
            act("wait", THINKING_S, seconds=0),  # the user acts while the model thinks
            act("click", x=230, y=240),  # after the resume: the agent's input again
            Reply({"action": "done", "message": "finished", "reason": "all done"}),
        ]
    )
    process = cli.start_run("move about", server, "--approve", "all")
    out = Lines(process)
    wait_until(
        lambda: len(server.requests) >= 4 or process.poll() is not None,
        timeout=60,
        what="the model's 4th request",
    )
    assert process.poll() is None
    assert "run_paused" not in out.types()  # three actions of the agent's own paused nothing

    xdotool(cli, "mousemove_relative", "--", "7", "5")  # the user's hand on the mouse
    # the run pauses at its next pause point: once the model has answered
    wait_until(lambda: "run_paused" in out.types(), timeout=30, what="the pause")
    assert "run_resumed" not in out.types()
    run_id = out.events()[0]["run"]["id"]

    post(cli, f"/api/tasks/{run_id}/resume")
    process.wait(timeout=60)
    out.join()
    assert process.stderr is not None
    err = process.stderr.read()

    assert process.returncode == 0, err
    events = out.events()
    types = [event["type"] for event in events]
    assert types.count("run_paused") == 1, types
    assert types.count("run_resumed") == 1
    assert events[-1]["run"]["status"] == "completed"
    actions = [
        (e["step"]["tool"], e["step"]["status"])
        for e in events
        if e["type"] == "step_finished" and e["step"]["kind"] == "action"
    ]
    # the decision made while the user had the mouse is never carried out
    assert actions == [
        ("move_mouse", "ok"), ("click", "ok"), ("scroll", "ok"), ("wait", "skipped"),
        ("click", "ok"),
    ]  # fmt: skip
    assert len(server.requests) == 6


def test_with_pause_on_user_input_off_the_users_input_does_not_pause_the_run(
    cli: Cli, model: Callable[..., ModelServer]
) -> None:
    server = model(
        script=[
            act("wait", THINKING_S, seconds=0),
            Reply({"action": "done", "message": "finished", "reason": "all done"}),
        ]
    )
    process = cli.start_run(
        "wait", server, "--approve", "all", env={"DESKTOP_AGENT_PAUSE_ON_USER_INPUT": "false"}
    )
    out = Lines(process)
    wait_until(lambda: server.requests or process.poll() is not None, timeout=60, what="a request")
    xdotool(cli, "mousemove_relative", "--", "7", "5")
    xdotool(cli, "click", "1")

    assert process.wait(timeout=60) == 0
    out.join()
    types = out.types()
    assert "run_paused" not in types
    assert types[-1] == "run_finished"


def test_the_human_output_says_the_user_took_over_and_its_resume_command_works(
    cli: Cli, model: Callable[..., ModelServer]
) -> None:
    server = model(
        script=[
            act("wait", THINKING_S, seconds=0),
            Reply({"action": "done", "message": "finished", "reason": "all done"}),
        ]
    )
    process = cli.start(
        "run", "wait", "--base-url", server.base_url, "--model", "qwen2.5vl",
        "--vision", "yes", "--approve", "all",
    )  # fmt: skip
    out = Lines(process)
    wait_until(lambda: server.requests or process.poll() is not None, timeout=60, what="a request")
    xdotool(cli, "click", "1")

    paused = wait_until(
        lambda: [line for line in out.lines if "paused: you took over" in line],
        timeout=30,
        what="the pause line",
    )
    hint = paused[0].split("resume: ", 1)[1]
    subprocess.run(["bash", "-c", hint], env=cli.env(), check=True, timeout=30, capture_output=True)

    assert process.wait(timeout=60) == 0
    out.join()
    assert any(line.strip() == "resumed" for line in out.lines)
    # the summary line has the server's usage: 100 + 20 tokens a turn; no price for qwen2.5vl
    assert "after 2 turn(s)" in out.lines[-1]
    assert "; 200 + 40 tokens, cost unknown" in out.lines[-1]
