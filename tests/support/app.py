"""The real app (`python -m desktop_agent`, or one of its sub-commands) in a subprocess, as a user
starts it: on a test X desktop (Qt's xcb) or offscreen, on its own data dir.

`spawn_app` starts it and ends it (its process group) when the block is left; `AppProcess`
waits on what the app writes (its instance file once its API serves, its log's first paint),
asks its API, and quits it as the system does (SIGTERM), asserting a clean exit (0). A wait
that ends because the app died says so at once, with its log and stderr.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest

from tests.support.model_server import ModelServer
from tests.support.xdisplay import XSession, stop_process_group, wait_until

if TYPE_CHECKING:
    from mcp import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
#: `python -m desktop_agent`: the app, or with a sub-command the CLI
APP = (sys.executable, "-m", "desktop_agent")
#: the model the scripted server stands in for (its name says it can see)
MODEL = "qwen2.5vl"


def app_env(data_dir: Path, server: ModelServer | None = None, **extra: str) -> dict[str, str]:
    """What the app is given beside the desktop's DISPLAY: its data dir (settings, store, log),
    Qt on X, and the scripted model when there is one."""
    env = {"DESKTOP_AGENT_HOME": str(data_dir), "QT_QPA_PLATFORM": "xcb"}
    if server is not None:
        env |= {"DESKTOP_AGENT_BASE_URL": server.base_url, "DESKTOP_AGENT_MODEL": MODEL}
    return env | extra


def offscreen_env(data_dir: Path, server: ModelServer | None = None) -> dict[str, str]:
    """This process's environment without a display, and the app's: Qt offscreen."""
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return env | app_env(data_dir, server, QT_QPA_PLATFORM="offscreen")


def run_python(
    script: str, data_dir: Path, *, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`python -c script` from the checkout as the app's tests start it: offscreen on
    `data_dir` unless `env` says otherwise, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=offscreen_env(data_dir) if env is None else env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def mcp_server(data_dir: Path, env: dict[str, str], *options: str) -> StdioServerParameters:
    """`desktop-agent mcp [OPTIONS]` on `data_dir` (its whole environment `env`), as an MCP
    client starts it: the MCP SDK's stdio parameters."""
    from mcp import StdioServerParameters

    args = [*APP[1:], "mcp", "--data-dir", str(data_dir), *options]
    return StdioServerParameters(command=APP[0], args=args, env=env, cwd=ROOT)


@dataclass
class AppProcess:
    """A running app process on `data_dir`; its stderr is in `stderr_path`."""

    process: subprocess.Popen[Any]
    data_dir: Path
    stderr_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def instance(self) -> Path:
        """The instance file the app writes once its local API serves (and removes at exit)."""
        return self.data_dir / "instances" / f"{self.process.pid}.json"

    def log(self) -> str:
        path = self.data_dir / "desktop-agent.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def diagnostics(self) -> str:
        return f"--- desktop-agent.log\n{self.log()[-3000:]}\n--- stderr\n{self.stderr()[-3000:]}"

    def wait_for(self, condition: Any, what: str, timeout: float = 20) -> Any:
        """Wait until `condition()` is true; fail at once, with the log, if the app exits first."""

        def met_or_exited() -> Any:
            return condition() or self.process.poll() is not None

        wait_until(met_or_exited, timeout=timeout, what=what)
        if not condition():
            pytest.fail(f"the app exited ({self.process.returncode}) before {what}\n"
                        f"{self.diagnostics()}")  # fmt: skip
        return condition()

    def wait_serving(self, timeout: float = 20) -> None:
        """Until the app's local API is registered (its instance file exists)."""
        self.wait_for(self.instance.exists, "the app's API registration", timeout)

    def wait_painted(self, timeout: float = 20) -> None:
        self.wait_for(lambda: "first window painted at" in self.log(), "the first paint", timeout)

    def api(self, path: str) -> Any:
        """GET `path` of the app's local API with its token; the JSON answer."""
        port = json.loads(self.instance.read_text())["port"]
        token = (self.data_dir / "api-token").read_text().strip()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.loads(response.read())

    def wait_exit(self, timeout: float = 15) -> int:
        """The exit code; fails, with the log, if the app is still running after `timeout`."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the app did not exit within {timeout:.0f} s\n{self.diagnostics()}")

    def quit_with_sigterm(self, timeout: float = 15) -> None:
        """SIGTERM, as a session's end or `kill` sends it: the app quits cleanly, exit 0."""
        self.process.send_signal(signal.SIGTERM)
        code = self.wait_exit(timeout)
        assert code == 0, self.diagnostics()


@contextmanager
def spawn_app(
    data_dir: Path,
    *args: str,
    session: XSession | None = None,
    server: ModelServer | None = None,
    extra_env: dict[str, str] | None = None,
    command: Sequence[str] = APP,
    stdout: IO[Any] | int = subprocess.DEVNULL,
) -> Iterator[AppProcess]:
    """`command ARGS --data-dir DATA_DIR` on `session` (offscreen without one), with
    `app_env(data_dir, server)` and `extra_env`; ended with its process group at the end."""
    data_dir.mkdir(parents=True, exist_ok=True)
    stderr_path = data_dir / "stderr.txt"
    argv = [*command, *args, "--data-dir", str(data_dir)]
    with stderr_path.open("wb") as stderr:
        if session is not None:
            env = app_env(data_dir, server) | (extra_env or {})
            process = session.spawn(argv, extra_env=env, cwd=ROOT, stdout=stdout, stderr=stderr)
        else:
            process = subprocess.Popen(
                argv, env=offscreen_env(data_dir, server) | (extra_env or {}), cwd=ROOT,
                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, start_new_session=True,
            )  # fmt: skip
        try:
            yield AppProcess(process, data_dir, stderr_path)
        finally:
            if session is not None:
                session.stop(process)
            else:
                stop_process_group(process)


#: a GNOME session's desktop (Ubuntu's default), as Qt reads it to pick its platform theme
GNOME_DESKTOP = {"XDG_CURRENT_DESKTOP": "GNOME", "DESKTOP_SESSION": "gnome"}


def libraries_loaded_by_the_first_paint(
    data_dir: Path,
    *args: str,
    session: XSession,
    extra_env: dict[str, str] | None = None,
    command: Sequence[str] = APP,
) -> str:
    """The files the app (`command ARGS` on `session`) and what it started had loaded by its
    window's first paint: the dynamic linker's own list (LD_DEBUG=files, glibc's ld.so; one
    file a process, LD_DEBUG_OUTPUT.<pid>), written beside `data_dir`."""
    debug = data_dir.parent / f"{data_dir.name}-ld"
    env = {**(extra_env or {}), "LD_DEBUG": "files", "LD_DEBUG_OUTPUT": str(debug)}
    with spawn_app(data_dir, *args, session=session, extra_env=env, command=command) as app:
        app.wait_painted(timeout=30)
        return "".join(
            path.read_text(errors="replace") for path in data_dir.parent.glob(f"{debug.name}.*")
        )
