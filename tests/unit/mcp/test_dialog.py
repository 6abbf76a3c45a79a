"""The app's approval dialog shown by `desktop-agent mcp` itself: a child process per question,
only where a display is there; its answer line is the answer, a stop kills it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Risk
from desktop_agent.host.person import desktop_asker, dialog_command
from tests.support.xdisplay import wait_until

ROOT = Path(__file__).resolve().parents[3]


def approval(timeout_s: float = 60) -> ApprovalRequest:
    return ApprovalRequest(
        "a1", "r1", 1, "launch_app", {"command": "xterm"}, "", Risk.DANGEROUS, False, timeout_s,
        caution="launch_app starts a program",
    )  # fmt: skip


def child(script: str) -> list[str]:
    return [sys.executable, "-c", script]


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT), **extra}


async def test_the_childs_answer_line_is_the_answer(tmp_path: Path) -> None:
    script = "import sys, json; m = json.loads(sys.stdin.readline()); print('once')"
    ask = desktop_asker(tmp_path, env=env(), command=lambda: child(script))

    assert await ask(approval()) is ApprovalDecision.ONCE


async def test_a_child_that_ends_without_an_answer_asked_nobody(tmp_path: Path) -> None:
    ask = desktop_asker(tmp_path, env=env(), command=lambda: child("import sys; sys.exit(1)"))

    assert await ask(approval()) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11's DISPLAY")
async def test_without_a_display_no_dialog_is_started(tmp_path: Path) -> None:
    started = tmp_path / "started"
    script = f"open({str(started)!r}, 'w').close(); print('once')"
    bare = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    bare.pop("QT_QPA_PLATFORM", None)
    ask = desktop_asker(tmp_path, env=bare, command=lambda: child(script))

    assert await ask(approval()) is None
    assert not started.exists()


@pytest.mark.posix
async def test_a_stop_while_the_dialog_is_open_kills_its_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    )
    ask = desktop_asker(tmp_path, env=env(), command=lambda: child(script))
    asking = asyncio.ensure_future(ask(approval()))
    started = partial(wait_until, lambda: pid_file.exists() and pid_file.read_text())
    await asyncio.to_thread(started, timeout=30, what="the dialog's process")
    pid = int(pid_file.read_text())

    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking

    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone (and reaped): the dialog went with it


async def test_the_real_dialog_process_denies_by_itself_when_nobody_answers(
    tmp_path: Path,
) -> None:
    # the app's own ApprovalDialog in `desktop-agent --approval-dialog` (offscreen): its
    # countdown is the only one to answer, and it denies
    ask = desktop_asker(tmp_path, env=env(), command=dialog_command)

    assert await asyncio.wait_for(ask(approval(timeout_s=1)), 60) is ApprovalDecision.DENY


def test_the_dialog_closes_unanswered_when_the_server_is_gone(tmp_path: Path) -> None:
    # the mcp process killed while its question is open: the end of the dialog's stdin
    dialog = subprocess.Popen(
        dialog_command(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env(),
        text=True,
    )
    assert dialog.stdin is not None
    message = {"request": approval(timeout_s=600).to_json(), "data_dir": str(tmp_path)}
    dialog.stdin.write(json.dumps(message) + "\n")
    dialog.stdin.flush()

    dialog.stdin.close()  # what the server's death does to the pipe
    try:
        code = dialog.wait(timeout=60)  # well before its 600 s countdown
    finally:
        dialog.kill()
        assert dialog.stdout is not None
        out = dialog.stdout.read()
        dialog.stdout.close()
        dialog.wait()

    assert (code, out) == (0, "")  # no answer: nobody gave one
