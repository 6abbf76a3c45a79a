"""The app's approval dialog shown by `desktop-agent mcp` itself, for a person at this desktop.

When no app runs on the data dir, a question the MCP client may not answer (mcp/gate.py) goes
to the same ApprovalDialog the app shows, in a process of its own started for that question
(ui/approval_prompt.py: Qt never loads in the server, whose main thread runs its event loop).
Lazily: only a question starts it, and only where a display is there; without one nobody is
asked here (None). The server's loop awaits the child's answer line; a stop or the question's
end kills the child, so its dialog goes with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest
from desktop_agent.host.display import display_problem
from desktop_agent.mcp.gate import AskHuman

log = logging.getLogger(__name__)

#: how long a killed dialog process is waited on before the question is given up anyway
KILL_WAIT_S = 5.0


def dialog_command() -> list[str]:
    """The command line of the dialog's process: this program with the dialog's first word."""
    from desktop_agent.mcp import APPROVAL_DIALOG

    if getattr(sys, "frozen", False):  # the bundle's executable is the program itself
        return [sys.executable, APPROVAL_DIALOG]
    return [sys.executable, "-m", "desktop_agent", APPROVAL_DIALOG]


def desktop_asker(
    data_dir: Path,
    *,
    env: Mapping[str, str] = os.environ,
    command: Callable[[], list[str]] = dialog_command,
) -> AskHuman:
    """Ask the person at this desktop in the app's dialog, shown by a child process; None
    when there is no display to show it on, or the dialog could not be shown."""

    async def ask(approval: ApprovalRequest) -> ApprovalDecision | None:
        problem = display_problem(dict(env))
        if problem is not None:
            log.info("the approval dialog cannot be shown: %s", problem)
            return None
        message = {
            "request": approval.to_json(),
            # a known password field's text, for the dialog's "Show" toggle only: on the
            # child's private pipe, never on its command line
            "secret": approval.secret,
            "data_dir": str(data_dir),
        }
        return await _ask_child(command(), dict(env), json.dumps(message) + "\n")

    return ask


async def _ask_child(argv: list[str], env: dict[str, str], message: str) -> ApprovalDecision | None:
    try:
        child = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,  # its complaints go where the server's own go (the client's log)
            env=env,
        )
    except OSError as error:
        log.warning("the approval dialog could not be started: %s", error)
        return None
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write(message.encode("utf-8"))
        with contextlib.suppress(ConnectionError):
            await child.stdin.drain()
        # stdin stays open while the answer is awaited: its end tells the dialog this process
        # is gone (killed, ended), and the dialog closes rather than ask for nobody
        line = await child.stdout.readline()
    finally:
        if child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()  # unanswered (the run stopped, the question ended): it goes
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(child.wait()), KILL_WAIT_S)
    answer = line.decode("utf-8", "replace").strip()
    if answer in {decision.value for decision in ApprovalDecision}:
        return ApprovalDecision(answer)
    log.warning("the approval dialog gave no answer (exit code %s)", child.returncode)
    return None
