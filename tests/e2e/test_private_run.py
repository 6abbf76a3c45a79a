"""A real run keeps its files to its user and its API key from the programs it launches."""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cli, json_lines
from tests.support.model_server import Reply

SECRET = "sk-e2e-private-5d1c"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The CLI is started with a umask that lets others read: it must not matter."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.usefixtures("open_umask")
def test_a_real_run_makes_only_private_files_and_launches_without_the_key(
    cli: Cli, model: Any, tmp_path: Path
) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    server = model(
        script=[
            Reply({"action": "tool", "tool": "launch_app", "args": {"command": f"{sleep} 120"},
                   "reason": "start a program"}),
            Reply({"action": "done", "message": "started", "reason": "it runs"}),
        ]
    )  # fmt: skip
    # launch_app asks at every call (an `allow` policy does not cover it): the run approves
    # it by name; the settings live apart from the data dir, which the run makes
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.toml").write_text("")
    fresh = cli.data_dir
    assert not fresh.exists()
    process = cli.start(
        "run", "start a program", "--base-url", server.base_url, "--model", "qwen2.5vl",
        "--vision", "yes", "--json", "--api-key-env", "E2E_MODEL_KEY",
        "--approve", "all", "--allow-dangerous", "launch_app",
        env={
            "DESKTOP_AGENT_HOME": str(home),
            "E2E_MODEL_KEY": SECRET,
            "OPENAI_API_KEY": SECRET + "-openai",
        },
    )  # fmt: skip
    out, err = process.communicate(timeout=90)

    assert process.returncode == 0, err
    events = json_lines(out)
    [launched] = [
        e["step"]
        for e in events
        if e["type"] == "step_finished" and e["step"]["tool"] == "launch_app"
        and e["step"]["kind"] == "action"
    ]  # fmt: skip
    assert launched["status"] == "ok", launched
    pid = int(re.search(r"\(pid (\d+)\)", launched["summary"]).group(1))  # type: ignore[union-attr]
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert b"DESKTOP_AGENT_E2E=1" in environ  # it is the program the run started
    assert not [entry for entry in environ if SECRET.encode() in entry]

    assert mode(fresh) == 0o700
    files = [path for path in fresh.rglob("*") if path.is_file()]
    names = {path.name for path in files}
    assert {"history.db", "api-token", "desktop-agent.log"} <= names
    assert any(name.endswith((".jpg", ".png")) for name in names), names
    assert {str(path.relative_to(fresh)): oct(mode(path)) for path in files} == {
        str(path.relative_to(fresh)): oct(0o600) for path in files
    }
    folders = [path for path in fresh.rglob("*") if path.is_dir()]
    assert all(mode(path) == 0o700 for path in folders), [(p, oct(mode(p))) for p in folders]
