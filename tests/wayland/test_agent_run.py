"""A whole agent run on the headless GNOME Wayland desk (issue 34): `desktop-agent run` as a
user starts it, the real openai client against a loopback model server, a scripted model that
reads the element list it is shown; the app picks the portal backend by itself, the person
answers the desktop's consent dialog, and the note is written and saved in native l3afpad."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.eval.wayland_desk import WaylandSession
from tests.e2e.conftest import inventory_of, json_lines
from tests.support.gtk import still_gtk_env
from tests.support.model_server import ModelServer, Reply, serve_in_thread
from tests.support.wayland import AtspiRig, person_answers

ROOT = Path(__file__).resolve().parents[2]
LINE = "a note from an agent on Wayland"
#: a swallowed Enter leaves the Save As dialog up: it is pressed again, this often at most
ENTERS = 4


def element_id(screen: str, role: str, name: str) -> int | None:
    """The id of the first listed element of `role` named `name` (the list's own lines)."""
    for line in screen.splitlines():
        if line.startswith("[") and f'] {role} "{name}" @ ' in line:
            return int(line[1 : line.index("]")])
    return None


class WaylandEditorModel:
    """Saves a line in l3afpad by what the element list shows: the editor (its File menu and
    text box), GTK's Save As dialog (its Cancel and Save As buttons); it never races the desk.
    On Wayland the list holds the active window's controls only, so a window is known by its
    controls."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.done: list[str] = []
        self.screens: list[str] = []

    def once(self, name: str) -> bool:
        if name in self.done:
            return False
        self.done.append(name)
        return True

    def __call__(self, body: dict[str, Any]) -> Reply:
        screen = inventory_of(body)
        self.screens.append(screen)
        return Reply(self.decide(screen))

    def decide(self, screen: str) -> dict[str, Any]:
        def use(tool: str, why: str, **args: Any) -> dict[str, Any]:
            return {"action": "tool", "tool": tool, "args": args, "reason": why}

        settle = use("wait", "the screen is still changing", seconds=0.3)
        # GTK's Save As dialog, listed by id or, where it was not found on the screenshot (it
        # fills the screen here), relative to it: its buttons are known either way
        if 'button "Cancel" @ ' in screen and 'button "Save As" @ ' in screen:
            if self.once("type path"):
                return use("type_text", "type the file name", text=str(self.target))
            if self.once("let completion settle"):
                return use("wait", "path completion swallows an early Enter", seconds=0.4)
            enters = sum(1 for step in self.done if step.startswith("confirm"))
            if enters < ENTERS:
                self.done.append(f"confirm {enters}")
                return use("hotkey", "confirm the file name", keys=["enter"])
            return {"action": "fail", "reason": "the Save As dialog stays"}
        editor = element_id(screen, "menu", "File")
        text = element_id(screen, "edit", "")
        if editor and text:
            if self.once("click the text"):
                return use("click", "put the caret in the text", element=text)
            if self.once("type line"):
                return use("type_text", "write the line", text=LINE)
            if self.once("save"):
                return use("hotkey", "open the save dialog", keys=["ctrl", "s"])
            if "type path" in self.done:
                return {"action": "done", "message": f"saved {self.target}", "reason": "closed"}
            return settle
        if self.once("launch"):
            return use("launch_app", "start the editor", command="l3afpad")
        return settle


@pytest.fixture
def model_server(tmp_path: Path) -> Iterator[tuple[ModelServer, WaylandEditorModel]]:
    respond = WaylandEditorModel(tmp_path / "wayland-note.txt")
    with serve_in_thread(ModelServer([], respond=respond)) as server:
        yield server, respond


def launched_editors(session: WaylandSession) -> list[int]:
    """The l3afpad processes on this desk (the run launched them; the test ends them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"l3afpad") and f"WAYLAND_DISPLAY={session.display}".encode() in (
            environ
        ):
            found.append(int(entry.name))
    return found


def test_a_whole_run_writes_and_saves_a_note_through_the_portal(
    wayland_session: WaylandSession,
    atspi_rig: AtspiRig,
    model_server: tuple[ModelServer, WaylandEditorModel],
    tmp_path: Path,
) -> None:
    server, model = model_server
    target = model.target
    data = tmp_path / "data"
    # the editor the run launches inherits the desk's XDG_CONFIG_HOME: a still GTK there
    still_gtk_env(Path(wayland_session.env["XDG_CONFIG_HOME"]))
    command = [
        sys.executable, "-m", "desktop_agent", "run",
        f"write a line in the editor and keep it in {target.name}",
        "--base-url", server.base_url, "--model", "qwen2.5vl", "--vision", "yes", "--json",
        "--approve", "all", "--allow-dangerous", "launch_app,click,type_text,hotkey",
        "--max-steps", "40", "--data-dir", str(data),
    ]  # fmt: skip
    env = wayland_session.child_env({"DESKTOP_AGENT_HOME": str(data), "PYTHONUNBUFFERED": "1"})
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        with person_answers(atspi_rig) as errors:
            out, err = process.communicate(timeout=240)
        assert not errors
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        for pid in launched_editors(wayland_session):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    assert process.returncode == 0, err[-3000:]
    assert "a Wayland session lets no program watch the person's input" in err
    events = json_lines(out)
    final = events[-1]
    assert final["type"] == "run_finished"
    status = (final["run"]["status"], final["run"]["stop_reason"])
    assert status == ("completed", "done"), (status, json.dumps(model.screens[-3:]), err[-2000:])
    assert target.read_text(encoding="utf-8") == LINE
    acted = [
        e["step"] for e in events if e["type"] == "step_finished" and e["step"]["kind"] == "action"
    ]
    tools = [step["tool"] for step in acted if step["tool"] != "wait"]
    assert tools[:4] == ["launch_app", "click", "type_text", "hotkey"]
    # the click went by the element list's box (placed on the screenshot), not by guessed pixels
    click = next(step for step in acted if step["tool"] == "click")
    assert click["status"] == "ok" and click["element"]["role"] == "edit", click
    asked = [e["approval"] for e in events if e["type"] == "approval_requested"]
    assert [a["tool"] for a in asked] == tools
    # each asked whatever --approve all says, with why (--allow-dangerous answered): the click
    # because Wayland hides the app's own windows, an Enter because the focused one is unknown
    assert all(a["caution"] for a in asked if a["tool"] != "launch_app"), asked
    assert "(Wayland)" in next(a["caution"] for a in asked if a["tool"] == "click")
