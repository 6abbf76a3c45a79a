"""The real app on a real X desktop (Xvfb + openbox) with a scripted model server:
typed goal → approval from the keyboard → completed; the global hotkey stops a run;
the window gets out of the way while acting and comes back; closing it quits."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.app import AppProcess, spawn_app
from tests.support.model_server import Hang, ModelServer, Reply, serve_in_thread
from tests.support.xdisplay import XSession, close_window, start_xsession, wait_until

pytestmark = [pytest.mark.gui, pytest.mark.desktop]

MAIN_TITLE = "^Desktop Agent$"


@dataclass
class RunningApp:
    session: XSession
    server: ModelServer
    app: AppProcess

    @property
    def process(self) -> subprocess.Popen[Any]:
        return self.app.process

    @property
    def data_dir(self) -> Path:
        return self.app.data_dir

    def xdotool(self, *args: str, check: bool = True) -> str:
        return self.session.xdotool(*args, check=check)

    def window(self, title: str = MAIN_TITLE) -> str:
        return self.xdotool("search", "--sync", "--onlyvisible", "--name", title).split()[0]

    def shown(self, title: str) -> list[str]:
        """The visible windows named `title` now (no waiting for one)."""
        return self.xdotool("search", "--onlyvisible", "--name", title, check=False).split()

    def answer_from_the_keyboard(self, title: str, keys: str) -> None:
        """Press `keys` in the approval dialog named `title` until it has taken them. Its
        Allow buttons sleep for ui/approval.py ARM_S after it opened (a key then is no
        answer), which this process cannot see: the keys go again while the dialog is up,
        each time to the dialog made active, and nothing is sent once it is gone."""
        deadline = time.monotonic() + 20
        while dialogs := self.shown(title):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the dialog {title!r} did not take {keys}")
            self.xdotool("windowactivate", "--sync", dialogs[0], check=False)
            if self.shown(title):
                self.xdotool("key", "--clearmodifiers", keys)
            with contextlib.suppress(TimeoutError):
                wait_until(lambda: not self.shown(title), timeout=0.25, what="the dialog gone")

    def hidden(self, window: str) -> bool:
        state = subprocess.run(
            ["xprop", "-id", window, "_NET_WM_STATE", "WM_STATE"],
            env=self.session.child_env(),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return "_NET_WM_STATE_HIDDEN" in state or "Iconic" in state

    def api(self, path: str) -> Any:
        return self.app.api(path)

    def diagnostics(self) -> str:
        return self.app.diagnostics()

    def newest_run(self) -> dict[str, Any] | None:
        runs = self.api("/api/tasks")
        return runs[0] if runs else None

    def type_goal_and_start(self, goal: str) -> None:
        window = self.window()
        self.xdotool("windowactivate", "--sync", window)
        self.xdotool("key", "--clearmodifiers", "ctrl+a")
        self.xdotool("type", "--delay", "2", goal)
        self.xdotool("key", "--clearmodifiers", "ctrl+Return")


def tool_reply(tool: str, reason: str, **args: Any) -> Reply:
    return Reply({"action": "tool", "tool": tool, "args": args, "reason": reason})


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    data_dir = tmp_path_factory.mktemp("app-xvfb")
    session = start_xsession(1280, 800, atspi=False)
    try:
        with (
            serve_in_thread(ModelServer()) as server,
            spawn_app(data_dir, session=session, server=server) as app,
        ):
            app.wait_serving()
            yield RunningApp(session, server, app)
    finally:
        session.close()


def test_the_main_window_is_titled_and_classed_desktop_agent(app: RunningApp) -> None:
    window = app.window()
    assert app.xdotool("getwindowname", window) == "Desktop Agent"
    classes = app.xdotool("search", "--classname", "^desktop-agent$").split()
    assert window in classes


def test_a_typed_goal_runs_and_the_approval_is_given_from_the_keyboard(app: RunningApp) -> None:
    app.server.add(
        tool_reply("click", "the corner is empty", x=3, y=3),
        Reply({"action": "done", "message": "clicked the corner"}),
    )
    main = app.window()
    app.type_goal_and_start("click the empty corner")
    app.window("allow click")
    assert not app.hidden(main), "the window comes back while an approval waits"
    app.answer_from_the_keyboard("allow click", "alt+o")
    run = wait_until(
        lambda: (r := app.newest_run()) and r["status"] not in ("queued", "running") and r,
        timeout=20,
        what="the run to end",
    )
    assert (run["goal"], run["status"], run["stop_reason"]) == (
        "click the empty corner",
        "completed",
        "done",
    )
    steps = app.api(f"/api/tasks/{run['id']}")["steps"]
    actions = [(s["tool"], s["status"], s["target"]) for s in steps if s["kind"] == "action"]
    assert actions == [("click", "ok", [3, 3])]
    wait_until(lambda: not app.hidden(main), timeout=5, what="the window to come back")


def test_the_global_stop_hotkey_stops_a_run_while_the_model_thinks(app: RunningApp) -> None:
    app.server.add(Hang())
    main = app.window()
    asked = len(app.server.requests)
    app.type_goal_and_start("wait for a model that never answers")
    wait_until(lambda: len(app.server.requests) > asked, timeout=20, what="the model request")
    wait_until(lambda: app.hidden(main), timeout=5, what="the window out of the way")
    panel = app.window("Desktop Agent — acting")
    assert panel
    app.xdotool("key", "--clearmodifiers", "ctrl+alt+Escape")
    run = wait_until(
        lambda: (r := app.newest_run()) and r["status"] == "stopped" and r,
        timeout=10,
        what="the hotkey to stop the run",
    )
    assert run["stop_reason"] == "user_stop"
    assert run["goal"] == "wait for a model that never answers"
    wait_until(lambda: not app.hidden(main), timeout=5, what="the window to come back")


def test_closing_the_window_quits_the_app_when_there_is_no_tray(app: RunningApp) -> None:
    main = app.window()
    close_window(app.session.display, main)  # openbox's Close: WM_DELETE_WINDOW
    code = app.app.wait_exit(timeout=15)
    assert code == 0, app.diagnostics()
    assert not (app.data_dir / "instances" / f"{app.process.pid}.json").exists()
    assert "window closed: quitting" in (app.data_dir / "desktop-agent.log").read_text()
