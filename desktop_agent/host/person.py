"""The person at this desktop: who answers a question only a person may answer
(`ApprovalRequest.only_a_person_answers`) in a process with no window of its own (`mcp`,
`serve`).

In order: the desktop app running on the same data dir (its approval dialog, asked through
the instance registry and its API: `app_asker`), else the same ApprovalDialog shown by a
process of its own started for that question (`desktop_asker`: ui/approval_prompt.py; Qt never
loads in the server, whose main thread runs its event loop), else nobody, and the question is
denied. The dialog's process starts lazily, only for a question and only where a display is;
the server's loop awaits the child's answer line; a stop or the question's end kills the
child, so its dialog goes with it.

`PersonOnlyGate` is `serve`'s gate: its ordinary questions wait in the broker an API client
answers; one only a person answers goes to the person at this desktop (an API client may
still deny it there, never allow it: api/routes.py answer_approval).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from desktop_agent.core.errors import NobodyToAsk
from desktop_agent.core.models import ApprovalDecision, ApprovalRequest
from desktop_agent.core.permissions import ApprovalBroker
from desktop_agent.host.display import display_problem
from desktop_agent.instances import APPROVAL_DIALOG

#: asks a human through one channel; None: nobody could be asked there
AskHuman = Callable[[ApprovalRequest], Awaitable[ApprovalDecision | None]]

log = logging.getLogger(__name__)

#: how long a killed dialog process is waited on before the question is given up anyway
KILL_WAIT_S = 5.0


def dialog_command() -> list[str]:
    """The command line of the dialog's process: this program with the dialog's first word."""
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


async def first_of(channels: list[AskHuman], approval: ApprovalRequest) -> ApprovalDecision | None:
    """The first answer of `channels` in order; None when none could ask (then it is denied)."""
    for ask in channels:
        try:
            answer = await ask(approval)
        except Exception:  # noqa: BLE001 - a channel that fails: the next one, else deny
            log.warning("asking about %s failed", approval.tool, exc_info=True)
            continue
        if answer is not None:
            return answer
    log.info("nobody could be asked about %s: denied", approval.tool)
    return None


def app_asker(data_dir: Path) -> AskHuman:
    """Ask the desktop app on `data_dir`, if one runs (instances/registry.ask_app_instance)."""

    async def ask(approval: ApprovalRequest) -> ApprovalDecision | None:
        from desktop_agent.instances.registry import ask_app_instance

        return await ask_app_instance(data_dir, approval)

    return ask


def person_asker(data_dir: Path, env: Mapping[str, str] = os.environ) -> AskHuman:
    """The person at this desktop: the app on `data_dir`, else the dialog's own process."""
    channels = [app_asker(data_dir), desktop_asker(data_dir, env=env)]

    async def ask(approval: ApprovalRequest) -> ApprovalDecision | None:
        return await first_of(channels, approval)

    return ask


class PersonOnlyGate:
    """`serve`'s PermissionGate: an ordinary question waits in `broker`, where an API client
    answers it; a question only a person answers (`ApprovalRequest.only_a_person_answers`)
    is asked of the person at this desktop (`ask_person`) and waits in `broker` too, where an
    API client may deny it (the API refuses to allow it). The first answer wins; nobody to
    ask at this desktop denies it at once. A stop cancels both (the loop's guard)."""

    def __init__(self, broker: ApprovalBroker, ask_person: AskHuman) -> None:
        self.broker = broker
        self._ask_person = ask_person

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        if not approval.only_a_person_answers:
            return await self.broker.request(approval)
        person = asyncio.ensure_future(self._ask_person(approval))
        api = asyncio.ensure_future(self.broker.request(approval))
        try:
            await asyncio.wait({person, api}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (person, api):
                waiting.cancel()
            await asyncio.gather(person, api, return_exceptions=True)
        if api.done() and not api.cancelled() and api.exception() is None:
            return api.result()  # an API client's deny (api/routes.py allows nothing else)
        answer = None
        if not person.cancelled():
            if person.exception() is not None:
                log.warning("asking about %s failed", approval.tool, exc_info=person.exception())
            else:
                answer = person.result()
        if answer is None:
            log.warning(
                "nobody at this desktop could be asked about %s (no app on the data dir, no "
                "display for the approval dialog): denied",
                approval.tool,
            )
            raise NobodyToAsk(f"nobody at this desktop could be asked about {approval.tool}")
        return answer
