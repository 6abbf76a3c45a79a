"""A whole task on a real desktop: the CLI, the real openai client, l3afpad on Xvfb."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Cli, inventory_of, json_lines
from tests.support.model_server import Reply

LINE = "hello from desktop-agent 42"


class EditorModel:
    """A model that looks at the element list it is shown and saves a line in l3afpad.

    It acts only on what the screen shows (a window appearing, the Save As dialog
    opening and closing), so it never races the desktop.
    """

    def __init__(self, target: Path) -> None:
        self.target = target
        self.done: set[str] = set()

    def _once(self, name: str) -> bool:
        if name in self.done:
            return False
        self.done.add(name)
        return True

    def __call__(self, body: dict[str, Any]) -> Reply:
        return Reply(self.decide(inventory_of(body)))

    def decide(self, screen: str) -> dict[str, Any]:
        def use(tool: str, why: str, **args: Any) -> dict[str, Any]:
            return {"action": "tool", "tool": tool, "args": args, "reason": why}

        settle = use("wait", "the screen is still changing", seconds=0.2)
        if 'window "Save As' in screen:
            if self._once("type path"):
                return use("type_text", "type the file name", text=str(self.target))
            if self._once("let completion settle"):
                return use("wait", "path completion swallows an early Enter", seconds=0.4)
            if self._once("confirm"):
                return use("hotkey", "confirm the file name", keys=["enter"])
            return settle
        if "L3afpad" in screen:
            if self._once("type line"):
                return use("type_text", "write the line", text=LINE)
            if self._once("save"):
                return use("hotkey", "open the save dialog", keys=["ctrl", "s"])
            if "confirm" in self.done and self.target.name in screen:
                return {"action": "done", "message": f"saved {self.target}", "reason": "title"}
            return settle
        if self._once("launch"):
            return use("launch_app", "start the editor", command="l3afpad")
        return settle


def test_a_whole_task_saves_the_file_exactly_and_show_replays_the_same_steps(
    cli: Cli, model: Any, tmp_path: Path
) -> None:
    target = tmp_path / "agent-notes.txt"
    server = model(respond=EditorModel(target))

    process = cli.start_run(
        f"write a line in the editor and keep it in {target.name}",
        server,
        "--approve",
        "all",
        "--allow-dangerous",
        "launch_app",  # it starts the editor; --approve all alone would deny that
        "--max-steps",
        "30",
    )
    out, err = process.communicate(timeout=120)

    assert process.returncode == 0, err
    events = json_lines(out)
    final = events[-1]
    assert final["type"] == "run_finished"
    assert (final["run"]["status"], final["run"]["stop_reason"]) == ("completed", "done")
    assert target.read_bytes() == LINE.encode()
    # the model waits while the screen does not show what it needs yet (the editor's window
    # is listed a turn or more after launch_app on a loaded machine): its waits aside
    acted = [
        e["step"]["tool"]
        for e in events
        if e["type"] == "step_finished"
        and e["step"]["kind"] == "action"
        and e["step"]["tool"] != "wait"
    ]
    assert acted[:3] == ["launch_app", "type_text", "hotkey"]
    assert len(server.requests) == final["run"]["step_count"]

    shown = cli.call("show", final["run_id"], "--json")
    assert shown.returncode == 0, shown.stderr
    replayed = json_lines(shown.stdout)
    live_steps = [e["step"] for e in events if e["type"] == "step_finished"]
    assert [e["step"] for e in replayed if e["type"] == "step_finished"] == live_steps
    assert replayed[-1] == final

    listed = cli.call("runs", "--json")
    assert json.loads(listed.stdout)[0]["id"] == final["run_id"]


def test_the_api_key_reaches_the_model_server_and_nowhere_else(cli: Cli, model: Any) -> None:
    secret = "sk-e2e-do-not-leak-7f3a9c"
    server = model(script=[Reply({"action": "done", "message": "nothing to do", "reason": "-"})])
    process = cli.start_run(
        "check the screen", server, "--api-key-env", "E2E_KEY", env={"E2E_KEY": secret}
    )
    out, err = process.communicate(timeout=60)

    assert process.returncode == 0, err
    assert server.authorizations == [f"Bearer {secret}"]
    assert secret not in out + err
    written = [p for p in cli.data_dir.rglob("*") if p.is_file()]
    assert any(p.name == "history.db" for p in written)
    for path in written:
        assert secret.encode() not in path.read_bytes(), path
