"""End-to-end fixtures: the real CLI in a subprocess, on the test desktop, with a scripted model."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.support.model_server import ModelServer, ScriptItem, serve_in_thread
from tests.support.xdisplay import XSession, wait_until, xsession

__all__ = ["xsession"]

ROOT = Path(__file__).resolve().parents[2]
_INVENTORY = re.compile(r"```text\n(.*?)\n```", re.S)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.desktop)


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")
    return ""


def inventory_of(body: dict[str, Any]) -> str:
    """The element list the model was shown (what is on the screen), or ''."""
    found = _INVENTORY.search(last_user_text(body))
    return found.group(1) if found else ""


@dataclass
class DeskLook:
    """What a computer-use model's screenshot would show of the desk, read with xdotool: the
    visible windows' titles, and whether the editor is up (the scripted models react to it)."""

    session: XSession

    def titles(self) -> str:
        found = self.session.xdotool("search", "--onlyvisible", "--name", ".", check=False)
        names = [self.session.xdotool("getwindowname", wid, check=False) for wid in found.split()]
        return "\n".join(names)

    def editor_shown(self) -> bool:
        return bool(
            self.session.xdotool("search", "--onlyvisible", "--class", "l3afpad", check=False)
        )


class NoteLook(DeskLook):
    """A scripted model of the note task (a line in l3afpad, kept in `target`): which step it
    takes next, as the desk shows it. Each model says the step in its own syntax."""

    def __init__(self, session: XSession, target: Path) -> None:
        super().__init__(session)
        self.target = target
        self.sent: set[str] = set()

    def next_step(self) -> Literal["path", "line", "done", "look"]:
        """ "path" (the Save As dialog is up: the path, a wait and Enter), "line" (the editor
        is: the line and ctrl+s), each once; "done" when a title names the target; else
        "look" (a wait or a screenshot)."""
        screen = self.titles()
        if "Save As" in screen and "path" not in self.sent:
            self.sent.add("path")
            return "path"
        if self.editor_shown() and "line" not in self.sent:
            self.sent.add("line")
            return "line"
        return "done" if self.target.name in screen else "look"


def note_kept(process: subprocess.Popen[str], target: Path, line: str) -> list[dict[str, Any]]:
    """The events of the note task's run `process`, once it ended: it must have completed
    (done) and `target` must hold `line`."""
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    events = json_lines(out)
    final = events[-1]["run"]
    assert (final["status"], final["stop_reason"]) == ("completed", "done")
    assert target.read_bytes() == line.encode()
    return events


def display_clients(display: str) -> list[int]:
    """Pids of processes (not ours) whose DISPLAY is `display`: the apps a run launched."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"DISPLAY={display}".encode() in environ and b"DESKTOP_AGENT_E2E=1" in environ:
            pids.append(int(entry))
    return pids


class Lines:
    """A process's stdout lines as they come (a reader thread)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.lines.append(line)

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in list(self.lines) if line.strip()]

    def types(self) -> list[str]:
        return [event["type"] for event in self.events()]

    def join(self) -> None:
        self._thread.join(timeout=30)


@dataclass
class Cli:
    """`desktop-agent` run as a user would, against the test desktop and a data dir."""

    session: XSession
    data_dir: Path
    started: list[subprocess.Popen[str]] = field(default_factory=list)

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return self.session.child_env(
            {
                "DESKTOP_AGENT_HOME": str(self.data_dir),
                "DESKTOP_AGENT_E2E": "1",
                "PYTHONUNBUFFERED": "1",
                **(extra or {}),
            }
        )

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "desktop_agent", *args, "--data-dir", str(self.data_dir)]

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            self.command(*args),
            cwd=ROOT,
            env=self.env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.started.append(process)
        return process

    def start_run(
        self, goal: str, server: ModelServer, *options: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[str]:
        """`desktop-agent run GOAL --json` against `server`, a model that can see (checked)."""
        return self.start(
            "run", goal, "--base-url", server.base_url, "--model", "qwen2.5vl",
            "--vision", "yes", "--json", *options, env=env,
        )  # fmt: skip

    def call(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args),
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def close(self) -> None:
        for process in self.started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
        for pid in display_clients(self.session.display):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_until(
            lambda: not display_clients(self.session.display),
            timeout=10,
            what="launched apps to end",
        )


@pytest.fixture
def cli(xsession: XSession, tmp_path: Path) -> Iterator[Cli]:
    runner = Cli(xsession, tmp_path / "data")
    yield runner
    runner.close()


@pytest.fixture
def editor(cli: Cli) -> Iterator[None]:
    """l3afpad on the test desktop (a program the runs did not start), once its window shows."""
    session = cli.session
    process = session.spawn(["l3afpad"], extra_env={"DESKTOP_AGENT_E2E": "1"})
    wait_until(
        lambda: session.xdotool("search", "--onlyvisible", "--class", "l3afpad", check=False),
        timeout=20,
        what="l3afpad's window",
    )
    yield
    session.stop(process)


@pytest.fixture
def model() -> Iterator[Callable[..., ModelServer]]:
    """Start a scripted model server in a thread: model(respond=..., script=[...])."""
    servers: list[Any] = []

    def start(
        respond: Callable[[dict[str, Any]], ScriptItem] | None = None,
        script: list[ScriptItem] | None = None,
        **options: Any,
    ) -> ModelServer:
        context = serve_in_thread(ModelServer(script or [], respond=respond, **options))
        servers.append(context)
        return context.__enter__()

    yield start
    for context in reversed(servers):
        context.__exit__(None, None, None)


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]
