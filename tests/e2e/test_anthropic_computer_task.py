"""The note task through Anthropic's computer use: the CLI with the real anthropic client, a
fake Messages server, l3afpad on Xvfb; tool_uses as gated steps, tool_results with the
screen, and a button the model held let go when the run is stopped."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from Xlib import display

from tests.e2e.conftest import Cli, NoteLook, json_lines, note_kept
from tests.support.messages_server import Message, MessagesServer, text, tool_use
from tests.support.model_server import serve_in_thread

LINE = "hello from claude's computer use 5"


class ClaudeModel(NoteLook):
    """A computer-use model that looks at the desktop (its window titles, as a screenshot
    would show them) and answers with tool_uses: the line and ctrl+s, then the path, a wait
    (GTK's path completion swallows an early Enter) and Return."""

    def __call__(self, body: dict[str, Any]) -> Message:
        step = self.next_step()
        if step == "path":
            return Message(
                [
                    tool_use("type", text=str(self.target)),
                    tool_use("wait", duration=1),
                    tool_use("key", text="Return"),
                ]
            )
        if step == "line":
            return Message(
                [text("I'll type the line."), tool_use("type", text=LINE),
                 tool_use("key", text="ctrl+s")]
            )  # fmt: skip
        if step == "done":
            return Message([text(f"Saved the line in {self.target.name}.")])
        return Message([tool_use("screenshot")])


def run_claude(cli: Cli, server: MessagesServer, goal: str, *options: str) -> Any:
    return cli.start(
        "run", goal, "--base-url", server.url, "--model", "claude-sonnet-4-5",
        "--model-profile", "anthropic-computer", "--vision", "yes", "--json", *options,
        env={"ANTHROPIC_API_KEY": "sk-ant-e2e"},
    )  # fmt: skip


def test_the_note_task_completes_through_anthropic_computer(
    cli: Cli, editor: None, tmp_path: Path
) -> None:
    target = tmp_path / "claude-notes.txt"
    with serve_in_thread(MessagesServer(respond=ClaudeModel(cli.session, target))) as server:
        process = run_claude(
            cli, server, f"write a line in the editor and keep it in {target.name}",
            "--approve", "all", "--max-steps", "15",
        )  # fmt: skip
        events = note_kept(process, target, LINE)
    final = events[-1]
    assert server.headers[0]["authorization"] == "Bearer sk-ant-e2e"
    assert server.headers[0]["anthropic-beta"] == "computer-use-2025-01-24"
    actions = [
        (e["step"]["index"], e["step"]["tool"])
        for e in events
        if e["type"] == "step_finished" and e["step"]["kind"] == "action"
    ]
    assert ["type_text", "hotkey"] in [
        [tool for index, tool in actions if index == turn] for turn in {i for i, _ in actions}
    ]
    # every turn after the first answers each tool_use of the last message, the screen last
    for body in server.requests[1:]:
        results = body["messages"][-1]["content"]
        assert {r["type"] for r in results} == {"tool_result"}
        assert results[-1]["content"][-1]["type"] == "image"
    assert final["run"]["prompt_tokens"] > 0


def test_a_button_the_model_holds_is_let_go_when_the_run_is_stopped(cli: Cli, editor: None) -> None:
    script = [Message([tool_use("mouse_move", coordinate=[200, 200]),
                       tool_use("left_mouse_down")])]  # fmt: skip
    server_model = MessagesServer(script, then=Message([tool_use("wait", duration=30)]))
    with serve_in_thread(server_model) as server:
        process = run_claude(cli, server, "drag something", "--approve", "all")
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            event = json.loads(line)
            step = event.get("step") or {}
            if event["type"] == "step_finished" and step.get("tool") == "mouse_down":
                assert step["status"] == "ok"
                held = _buttons(cli.session.display)
                process.send_signal(signal.SIGINT)  # as Ctrl+C on the terminal
                break
        out, err = process.communicate(timeout=60)
    assert process.returncode == 2, err
    assert held == 256  # Button1Mask: the left button was down
    assert _buttons(cli.session.display) == 0
    final = json_lines("".join(lines) + out)[-1]
    assert (final["run"]["status"], final["run"]["stop_reason"]) == ("stopped", "user_stop")


def _buttons(name: str) -> int:
    connection = display.Display(name)
    try:
        mask: int = connection.screen().root.query_pointer().mask
        return mask & (256 | 512 | 1024)
    finally:
        connection.close()
