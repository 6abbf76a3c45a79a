"""Approvals on the terminal: --approve ask (a prompt), all or none (fixed answers)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Risk
from desktop_agent.core.text import printable, visible

if TYPE_CHECKING:
    pass


class AutoGate:
    """Answers every approval the same way (--approve all / none), except that a dangerous
    call — a dangerous tool (launch_app), or a call that asks every time (a launcher key,
    a paste, a line into a terminal, a password field, a sensitive target) — is allowed
    only for a tool named in `dangerous_allowed` (--allow-dangerous), else denied."""

    def __init__(self, answer: ApprovalDecision, dangerous_allowed: Sequence[str] = ()) -> None:
        self.answer = answer
        self.dangerous_allowed = frozenset(dangerous_allowed)

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        dangerous = approval.risk is Risk.DANGEROUS or bool(approval.caution)
        if dangerous and approval.tool not in self.dangerous_allowed:
            return ApprovalDecision.DENY
        return self.answer


#: an answer sooner than this after the question was shown was not typed in answer to it
MIN_ANSWER_S = 0.5


class TerminalGate:
    """Asks on the terminal: once / for this run / deny. No terminal (or no stdin at all:
    the windowed Windows exe) → deny.

    Only what the user types after the question is shown answers it: the terminal's pending
    input is thrown away once the question is out (a line typed ahead, maybe by the agent
    itself into this very terminal, approves nothing), a line that comes within
    `min_answer_s` of the question is thrown away too (keystrokes still on their way from
    the agent's last action: nobody reads a question that fast), and the answer is read
    from the terminal itself, never from a buffer filled before. The loop's timeout denies
    too; reading uses the event loop's reader, so a stop or a timeout cancels the question
    at once.
    """

    def __init__(
        self,
        stdin: TextIO | None = None,
        prompt_out: TextIO | None = None,
        *,
        min_answer_s: float = MIN_ANSWER_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # the process's streams as they are when the gate is made (None: the windowed exe's)
        self._stdin = sys.stdin if stdin is None else stdin
        self._out = sys.stderr if prompt_out is None else prompt_out
        self.min_answer_s = min_answer_s
        self._clock = clock

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        if self._stdin is None or not self._stdin.isatty():
            return ApprovalDecision.DENY
        choices = "[o]nce / [r]un / [d]eny" if approval.offer_run_grant else "[o]nce / [d]eny"
        # the arguments and the reason are the model's: shown, never acted on by the terminal
        arguments = visible(json.dumps(approval.to_show, ensure_ascii=False))
        caution = f"  asks every time: {approval.caution}\n" if approval.caution else ""
        self._out.write(
            f"\nallow {approval.tool} {arguments}?\n"
            f"  reason: {printable(approval.reason)}\n{caution}  {choices} "
            f"(denies in {approval.timeout_s:.0f} s): "
        )
        self._out.flush()
        line = await self._answer(self._stdin.fileno())
        answer = (line or "").strip().lower()[:1]
        if answer == "o":
            return ApprovalDecision.ONCE
        if answer == "r" and approval.offer_run_grant:
            return ApprovalDecision.RUN
        return ApprovalDecision.DENY

    async def _answer(self, fd: int) -> str | None:
        """The first line typed on `fd` at least `min_answer_s` after the question was shown
        (what was typed before is thrown away); None when the terminal is gone."""
        discard_pending_input(fd)
        asked_at = self._clock()
        while True:
            line = await _read_line(fd)
            if line is None or self._clock() - asked_at >= self.min_answer_s:
                return line
            discard_pending_input(fd)
            self._out.write("\n  (that came before the question could be read; answer again): ")
            self._out.flush()


def discard_pending_input(fd: int) -> None:
    """Throw away what was typed on the terminal `fd` and not read yet (POSIX: the tty's
    input queue; Windows: the console's key buffer)."""
    if sys.platform == "win32":
        import msvcrt

        while msvcrt.kbhit():
            msvcrt.getwch()
        return
    import termios

    termios.tcflush(fd, termios.TCIFLUSH)


async def _read_line(fd: int) -> str | None:
    """The next line typed on `fd`, read from the fd itself (os.read: no stream buffer can
    hold a line typed before the question); None when the terminal is gone."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[str | None] = loop.create_future()
    received = bytearray()

    def on_readable() -> None:
        if ready.done():
            return
        try:
            chunk = os.read(fd, 1024)
        except OSError:  # the terminal went away: no answer, which denies
            chunk = b""
        if not chunk:
            ready.set_result(None)
            return
        received.extend(chunk)
        if b"\n" in received:
            ready.set_result(received.split(b"\n", 1)[0].decode("utf-8", "replace"))

    loop.add_reader(fd, on_readable)
    try:
        return await ready
    finally:
        loop.remove_reader(fd)


def gate_for(mode: str, dangerous_allowed: Sequence[str] = ()) -> AutoGate | TerminalGate:
    if mode == "all":
        return AutoGate(ApprovalDecision.ONCE, dangerous_allowed)
    if mode == "none":
        return AutoGate(ApprovalDecision.DENY)
    return TerminalGate()
