"""The note task through each open agent model's own format: the CLI with the real openai
client, a fake chat server answering as Qwen3-VL, GUI-Owl-1.5 or UI-Venus-1.5 would (their
own call syntax), l3afpad on Xvfb. MAI-UI is not here: its action space has no key
combination, so it cannot save a file by the keyboard (docs/planner.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cli, NoteLook, note_kept
from tests.support.model_server import ModelServer, Reply, serve_in_thread
from tests.support.xdisplay import XSession

LINE = "hello from an open agent model 7"
#: one abstract step: ("type", text) | ("keys", [..]) | ("wait", seconds) | ("done", text)
Step = tuple[str, Any]


def _qwen_call(step: Step) -> str:
    kind, value = step
    arguments: dict[str, Any] = {
        "type": {"action": "type", "text": value},
        "keys": {"action": "key", "keys": value},
        "wait": {"action": "wait", "time": value},
        "done": {"action": "terminate", "status": "success"},
    }[kind]
    return (
        f"<tool_call>\n{json.dumps({'name': 'computer_use', 'arguments': arguments})}\n</tool_call>"
    )


def qwen3_vl(steps: list[Step]) -> str:
    return f"Thought: next.\nAction: do it.\n{_qwen_call(steps[0])}"


def gui_owl(steps: list[Step]) -> str:
    return "Action: the next steps.\n" + "\n".join(_qwen_call(step) for step in steps)


def ui_venus(steps: list[Step]) -> str:
    kind, value = steps[0]
    action = {
        "type": f"Type(content='{value}')",
        "keys": "PressEnter()" if value == ["enter"] else f"Hotkey(keys={value!r})",
        "wait": "Wait()",
        "done": f"Finished(content='{value}')",
    }[kind]
    return f"<think>next</think>\n<action>{action}</action>\n<conclusion>ok</conclusion>"


class OpenModel(NoteLook):
    """A model that looks at the desk (its window titles, as the screenshot shows them) and
    answers in its own syntax: the line and ctrl+s, then the path, a wait (GTK's path
    completion swallows an early Enter) and Enter, then done. A format of one action a turn
    is given the steps one by one; GUI-Owl all of them at once (its batch)."""

    def __init__(
        self, session: XSession, target: Path, render: Callable[[list[Step]], str], batch: bool
    ) -> None:
        super().__init__(session, target)
        self.render = render
        self.batch = batch
        self.pending: list[Step] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        if not self.pending:
            self.pending = self.plan()
        steps = self.pending if self.batch else self.pending[:1]
        self.pending = self.pending[len(steps) :]
        return Reply(self.render(steps))

    def plan(self) -> list[Step]:
        step = self.next_step()
        if step == "path":
            return [("type", str(self.target)), ("wait", 1), ("keys", ["enter"])]
        if step == "line":
            return [("type", LINE), ("keys", ["ctrl", "s"])]
        if step == "done":
            return [("done", f"saved {self.target.name}")]
        return [("wait", 1)]


@pytest.mark.parametrize(
    ("model", "backend", "render", "batch"),
    [
        ("Qwen/Qwen3-VL-8B-Instruct", "qwen3_vl", qwen3_vl, False),
        ("mPLUG/GUI-Owl-1.5-8B-Instruct", "gui_owl", gui_owl, True),
        ("inclusionAI/UI-Venus-1.5-8B", "ui_venus", ui_venus, False),
    ],
    ids=["qwen3-vl", "gui-owl-1.5", "ui-venus-1.5"],
)
def test_the_note_task_completes_through_each_open_format(
    cli: Cli,
    editor: None,
    tmp_path: Path,
    model: str,
    backend: str,
    render: Callable[[list[Step]], str],
    batch: bool,
) -> None:
    target = tmp_path / "open-notes.txt"
    respond = OpenModel(cli.session, target, render, batch)
    with serve_in_thread(ModelServer([], respond=respond)) as server:
        process = cli.start(
            "run", f"write a line in the editor and keep it in {target.name}",
            "--base-url", server.base_url, "--model", model, "--vision", "yes", "--json",
            "--approve", "all", "--max-steps", "20",
        )  # fmt: skip
        events = note_kept(process, target, LINE)
    # the model was spoken to in its own format, picked by its name
    system = server.requests[0]["messages"][0]["content"]
    user = server.requests[0]["messages"][1]["content"][0]["text"]
    assert {"qwen3_vl": "<tools>", "gui_owl": "interact", "ui_venus": "helpful"}[backend] in system
    assert "response_format" not in server.requests[0]
    assert "write a line in the editor" in user
    actions = [
        (e["step"]["index"], e["step"]["tool"])
        for e in events
        if e["type"] == "step_finished" and e["step"]["kind"] == "action"
    ]
    turns = [
        [tool for index, tool in actions if index == turn]
        for turn in sorted({i for i, _ in actions})
    ]
    if batch:  # one turn's calls are that turn's steps, in order
        assert ["type_text", "hotkey"] in turns
    else:
        assert all(len(turn) == 1 for turn in turns)
