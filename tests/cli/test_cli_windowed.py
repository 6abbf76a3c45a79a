"""The windowed Windows exe (`desktop-agent-app.exe show …`: console=False) has no stdout,
stderr or stdin: a sub-command's output goes to the log in the data dir, and it exits with
its documented code instead of an AttributeError nobody sees."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_agent.cli import EXIT_REFUSED
from desktop_agent.cli.gate import TerminalGate
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Risk,
    RunStatus,
    StopReason,
    TaskSpec,
)
from desktop_agent.core.routine import REDACTED, Routine, RoutineParam, RoutineStep
from desktop_agent.logs import LOG_NAME
from desktop_agent.store import SqliteRunRepository

#: what pythonw.exe gives a program started without a console
WINDOWED = """\
import sys
sys.stdin = sys.stdout = sys.stderr = None
from desktop_agent.__main__ import main
raise SystemExit(main(sys.argv[1:]))
"""


def windowed(*argv: str, home: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "DESKTOP_AGENT_HOME": str(home)}
    env.pop("DISPLAY", None)
    return subprocess.run(
        [sys.executable, "-c", WINDOWED, *argv],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).parents[2],
    )


def stored_run(data_dir: Path) -> str:
    async def make() -> str:
        repo = SqliteRunRepository.open(data_dir)
        try:
            run = await repo.create_run(TaskSpec(goal="write a note"))
            done = run.with_(status=RunStatus.COMPLETED, stop_reason=StopReason.DONE)
            await repo.save_run(done)
            return run.id
        finally:
            repo.close()

    return asyncio.run(make())


def log_of(data_dir: Path) -> str:
    return (data_dir / LOG_NAME).read_text(encoding="utf-8")


def test_a_sub_commands_output_goes_to_the_log_and_it_exits_0(tmp_path: Path) -> None:
    run_id = stored_run(tmp_path)

    done = windowed("show", run_id, "--json", "--data-dir", str(tmp_path), home=tmp_path)

    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = log_of(tmp_path)
    assert "Traceback" not in log
    assert f'INFO desktop_agent.stdout: {{"type": "run_started", "run_id": "{run_id}"' in log
    assert f'INFO desktop_agent.stdout: {{"type": "run_finished", "run_id": "{run_id}"' in log


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["show", "nope"], "desktop-agent: no run 'nope'"),
        (["run", "x", "--max-steps", "abc"], "desktop-agent: argument --max-steps: not a whole"),
        (["mcp"], "desktop-agent: mcp over stdio needs the client's pipes, and this program"),
    ],
)
def test_a_refusal_is_one_line_in_the_log_and_exit_3(
    tmp_path: Path, argv: list[str], said: str
) -> None:
    done = windowed(*argv, "--data-dir", str(tmp_path / "data"), home=tmp_path / "home")

    assert (done.returncode, done.stdout, done.stderr) == (EXIT_REFUSED, b"", b"")
    log = log_of(tmp_path / "data")
    assert f"WARNING desktop_agent.stderr: {said}" in log
    assert "Traceback" not in log


def test_a_routine_that_needs_a_secret_is_refused_in_the_log_not_asked(tmp_path: Path) -> None:
    async def save() -> None:
        repo = SqliteRunRepository.open(tmp_path)
        try:
            step = RoutineStep("type_text", {"text": REDACTED})
            secret = RoutineParam("password", (1,), None, secret=True)
            await repo.save_routine(Routine("login", "log in", (step,), (secret,)))
        finally:
            repo.close()

    asyncio.run(save())

    done = windowed("routine", "run", "login", "--data-dir", str(tmp_path), home=tmp_path)

    assert (done.returncode, done.stdout, done.stderr) == (EXIT_REFUSED, b"", b"")
    assert "desktop_agent.stderr: desktop-agent: routine login needs password" in log_of(tmp_path)


async def test_with_no_stdin_the_terminal_gate_denies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    request = ApprovalRequest(id="a1", run_id="r1", index=1, tool="click", args={"x": 1, "y": 2},
                              reason="press OK", risk=Risk.INPUT, offer_run_grant=True,
                              timeout_s=5)  # fmt: skip

    assert await TerminalGate(stdin=None).request(request) is ApprovalDecision.DENY
