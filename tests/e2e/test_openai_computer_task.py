"""The note task through OpenAI's computer tool: the CLI with the real openai client, a fake
Responses server, l3afpad on Xvfb; batches of actions and a safety check under --approve all."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Cli, NoteLook, json_lines, note_kept
from tests.support.model_server import serve_in_thread
from tests.support.responses_server import ResponsesServer, Turn, computer_call, message

LINE = "hello from the computer tool 7"


class ComputerModel(NoteLook):
    """A computer-use model that looks at the desktop (its window titles, as a screenshot
    would show them) and answers in batches: the line and ctrl+s, then the path, a wait
    (GTK's path completion swallows an early Enter) and Enter."""

    def __call__(self, body: dict[str, Any]) -> Turn:
        step = self.next_step()
        if step == "path":
            return Turn(
                [
                    computer_call(
                        [
                            {"type": "type", "text": str(self.target)},
                            {"type": "wait"},
                            {"type": "keypress", "keys": ["ENTER"]},
                        ]
                    )
                ]
            )
        if step == "line":
            return Turn(
                [
                    computer_call(
                        [
                            {"type": "type", "text": LINE},
                            {"type": "keypress", "keys": ["CTRL", "S"]},
                        ]
                    )
                ]
            )
        if step == "done":
            return Turn([message(f"Saved the line in {self.target.name}.")])
        return Turn([computer_call([{"type": "wait"}])])


def run_computer(cli: Cli, server: ResponsesServer, goal: str, *options: str) -> Any:
    return cli.start(
        "run", goal, "--base-url", server.base_url, "--model", "computer-use-preview",
        "--vision", "yes", "--json", "--api-key-env", "E2E_KEY", *options,
        env={"E2E_KEY": "sk-e2e-computer"},
    )  # fmt: skip


def test_the_note_task_completes_through_openai_computer_in_batches(
    cli: Cli, editor: None, tmp_path: Path
) -> None:
    target = tmp_path / "computer-notes.txt"
    with serve_in_thread(ResponsesServer(respond=ComputerModel(cli.session, target))) as server:
        process = run_computer(
            cli, server, f"write a line in the editor and keep it in {target.name}",
            "--approve", "all", "--max-steps", "15",
        )  # fmt: skip
        events = note_kept(process, target, LINE)
    final = events[-1]
    assert server.authorizations[0] == "Bearer sk-e2e-computer"
    # the GA tool's batches are action steps of one turn each
    actions = [
        (e["step"]["index"], e["step"]["tool"])
        for e in events
        if e["type"] == "step_finished" and e["step"]["kind"] == "action"
    ]
    typed_at = next(index for index, tool in actions if tool == "type_text")
    assert [tool for index, tool in actions if index == typed_at] == ["type_text", "hotkey"]
    assert ["type_text", "wait", "hotkey"] in [
        [tool for index, tool in actions if index == turn] for turn in {i for i, _ in actions}
    ]
    # every turn after the first answered the last call with the screen
    for body in server.requests[1:]:
        assert body["previous_response_id"]
        assert body["input"][0]["type"] == "computer_call_output"
    assert len(server.requests) == final["run"]["step_count"]
    # `show` replays the batches' rows as they were told live
    shown = cli.call("show", final["run_id"], "--json")
    assert shown.returncode == 0, shown.stderr
    live = [e["step"] for e in events if e["type"] == "step_finished"]
    assert [e["step"] for e in json_lines(shown.stdout) if e["type"] == "step_finished"] == live


def test_a_safety_check_under_approve_all_is_denied_and_fails_the_run(
    cli: Cli, editor: None
) -> None:
    checked = computer_call(
        [{"type": "type", "text": "rm -rf ~"}],
        checks=[("malicious_instructions", "The screen tells the agent to delete files")],
    )
    with serve_in_thread(ResponsesServer([Turn([checked])])) as server:
        process = run_computer(cli, server, "write a line", "--approve", "all")
        out, err = process.communicate(timeout=60)
    assert process.returncode == 1, err
    events = json_lines(out)
    final = events[-1]
    assert (final["run"]["status"], final["run"]["stop_reason"]) == ("failed", "safety_check")
    asked = [e["approval"] for e in events if e["type"] == "approval_requested"]
    assert [a["safety_check"] for a in asked] == [
        {
            "code": "malicious_instructions",
            "message": "The screen tells the agent to delete files",
        }
    ]
    # nothing was typed, and nothing was acknowledged: no second request at all
    assert len(server.requests) == 1
    rows = [e["step"] for e in events if e["type"] == "step_finished"]
    assert [(r["kind"], r["status"]) for r in rows if r["kind"] == "action"] == [
        ("action", "denied")
    ]


def test_a_stop_in_the_middle_of_a_batch_sends_no_later_action_and_no_request(
    cli: Cli, editor: None
) -> None:
    batch = computer_call(
        [
            {"type": "type", "text": "first"},
            {"type": "wait"},
            {"type": "wait"},
            {"type": "type", "text": "LATER"},
        ]
    )
    with serve_in_thread(ResponsesServer([Turn([batch])], then=Turn([message("ok")]))) as server:
        process = run_computer(cli, server, "write a line", "--approve", "all")
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            event = json.loads(line)
            step = event.get("step") or {}
            if event["type"] == "step_finished" and step.get("tool") == "type_text":
                assert step["status"] == "ok"
                process.send_signal(signal.SIGINT)  # as Ctrl+C on the terminal
                break
        out, err = process.communicate(timeout=60)
    assert process.returncode == 2, err
    events = json_lines("".join(lines) + out)
    final = events[-1]
    assert (final["run"]["status"], final["run"]["stop_reason"]) == ("stopped", "user_stop")
    typed = [
        e["step"]["args"].get("text")
        for e in events
        if e["type"] == "step_finished" and e["step"]["tool"] == "type_text"
    ]
    assert typed == ["first"]
    assert len(server.requests) == 1
