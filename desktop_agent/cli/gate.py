"""Approvals on the terminal: --approve ask (a prompt), all or none (fixed answers)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from desktop_agent.cli.words import monitor_words, sentence, tr
from desktop_agent.core.models import ApprovalDecision, ApprovalRequest
from desktop_agent.core.text import printable, quote


class AutoGate:
    """Answers every approval the same way (--approve all / none), except that a question
    only a person answers (`ApprovalRequest.only_a_person_answers`: a dangerous tool such as
    launch_app, a call that asks every time — a launcher key, a paste, a line into a terminal,
    a password field, a sensitive target —, any question that offers no run grant) is allowed
    only for a tool named in `dangerous_allowed` (--allow-dangerous), else denied. A safety
    check of the model's provider, and a call that asks because the screen shows text that
    looks like orders to an AI, are always denied: only a person judges those."""

    def __init__(self, answer: ApprovalDecision, dangerous_allowed: Sequence[str] = ()) -> None:
        self.answer = answer
        self.dangerous_allowed = frozenset(dangerous_allowed)

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        if approval.safety_check is not None or approval.suspicious_text:
            return ApprovalDecision.DENY
        # the one predicate of every face: what a program may not allow by itself
        if approval.only_a_person_answers and approval.tool not in self.dangerous_allowed:
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
    too; a stop or a timeout cancels the question at once (`TerminalLines`: the event
    loop's reader, or a thread where the loop has none, as on Windows).
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
        #: the terminal's lines, made at the first question
        self.lines: TerminalLines | None = None
        self.min_answer_s = min_answer_s
        self._clock = clock

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        if self._stdin is None or not self._stdin.isatty():
            return ApprovalDecision.DENY
        # the answers are typed as their letters (o, r, d), whatever the language
        choices = (
            tr("[o]nce / [r]un / [d]eny") if approval.offer_run_grant else tr("[o]nce / [d]eny")
        )
        # the arguments and the reason are the model's, the caution names the screen's
        # targets: shown, never acted on by the terminal
        # every quoted part escaped, newlines too (`quote`): only our own lines break
        arguments = quote(json.dumps(approval.to_show, ensure_ascii=False))
        caution = ""
        if approval.caution:
            caution = "  " + tr("asks every time: {why}", why=quote(approval.caution)) + "\n"
        check = approval.safety_check
        if check is not None:
            # the provider's words: shown as text, one line each
            said = tr("safety check {code}: {message}", code=quote(check.code),
                      message=quote(check.message))  # fmt: skip
            caution += f"  {said}\n"
        # where the action is, on a desktop of several monitors (the app's own numbers)
        where = ""
        if approval.monitor:
            where = "  " + tr("on: {monitor}", monitor=monitor_words(approval.monitor)) + "\n"
        # the call in plain words first (its outside parts quoted by core/sentences), then
        # the call as the program sees it
        allow = tr("allow {tool} {arguments}?", tool=quote(approval.tool), arguments=arguments)
        reason = tr("reason: {reason}", reason=quote(approval.reason))
        denies = tr("(denies in {seconds} s):", seconds=f"{approval.timeout_s:.0f}")
        self._out.write(
            f"\n{printable(sentence(approval.sentence))}\n"
            f"  {allow}\n  {reason}\n{where}{caution}  {choices} {denies} "
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
        if self.lines is None or self.lines.fd != fd:
            self.lines = TerminalLines(fd)
        discard_pending_input(fd)
        asked_at = self._clock()
        while True:
            line = await self.lines.next_line()
            if line is None or self._clock() - asked_at >= self.min_answer_s:
                return line
            discard_pending_input(fd)
            again = tr("(that came before the question could be read; answer again):")
            self._out.write(f"\n  {again} ")
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


class TerminalLines:
    """The lines typed on a terminal's fd, each read from the fd itself (os.read: no stream
    buffer can hold a line typed before the question), only while a question waits for one.

    The event loop watches the fd where it can (`add_reader`: the selector loops of POSIX).
    Windows' ProactorEventLoop cannot: its `add_reader` is the AbstractEventLoop's, which
    raises NotImplementedError (CPython 3.11 Lib/asyncio/events.py:529-530; neither
    proactor_events.BaseProactorEventLoop nor base_events.BaseEventLoop overrides it). There
    a thread of this object's own reads the fd and hands each chunk to the loop. A read
    cannot be cancelled, so the thread outlives a cancelled question and keeps reading for
    the gate's lifetime (a daemon: it never holds the process); a chunk that comes while no
    question waits was typed ahead and is thrown away, as the selector path never reads it.
    Either way a stop or a timeout cancels the question at once.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._waiting: asyncio.Future[str | None] | None = None
        self._received = bytearray()
        self._thread: threading.Thread | None = None
        #: the thread read the end of the terminal (it went away): every question is denied
        self._ended = False
        #: when the waiting question began to wait (time.monotonic: the thread's stamps)
        self._opened_at = 0.0
        #: chunks the thread read while no question waited (typed ahead), thrown away
        self.thrown_away = 0

    async def next_line(self) -> str | None:
        """The next line typed on the fd; None when the terminal is gone."""
        if self._ended:
            return None
        loop = asyncio.get_running_loop()
        waiting: asyncio.Future[str | None] = loop.create_future()
        self._waiting = waiting
        self._received.clear()
        self._opened_at = time.monotonic()
        watched = self._thread is None and _watch(loop, self.fd, self._on_readable)
        if not watched and self._thread is None:
            self._thread = threading.Thread(
                target=self._read_forever, args=(loop,), name="terminal-lines", daemon=True
            )
            self._thread.start()
        try:
            return await waiting
        finally:
            self._waiting = None
            if watched:
                loop.remove_reader(self.fd)

    def _on_readable(self) -> None:
        self._on_chunk(_read_chunk(self.fd), time.monotonic())

    def _read_forever(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            chunk = _read_chunk(self.fd)
            try:
                loop.call_soon_threadsafe(self._on_chunk, chunk, time.monotonic())
            except RuntimeError:  # the loop is closed: nobody will ask again
                return
            if not chunk:
                return

    def _on_chunk(self, chunk: bytes, read_at: float) -> None:
        """On the loop: a chunk read from the fd at `read_at` (b"": the terminal is gone)."""
        if not chunk and self._thread is not None:
            self._ended = True
        waiting = self._waiting
        if waiting is None or waiting.done() or (chunk and read_at < self._opened_at):
            self.thrown_away += 1  # read before the question waited: typed ahead
            return
        if not chunk:
            waiting.set_result(None)
            return
        self._received.extend(chunk)
        if b"\n" in self._received:
            waiting.set_result(self._received.split(b"\n", 1)[0].decode("utf-8", "replace"))


def _watch(loop: asyncio.AbstractEventLoop, fd: int, callback: Callable[[], None]) -> bool:
    """Watch `fd` with the loop's reader; False where the loop has none (see TerminalLines)."""
    try:
        loop.add_reader(fd, callback)
    except NotImplementedError:
        return False
    return True


def _read_chunk(fd: int) -> bytes:
    try:
        return os.read(fd, 1024)
    except OSError:  # the terminal went away: no answer, which denies
        return b""


def gate_for(mode: str, dangerous_allowed: Sequence[str] = ()) -> AutoGate | TerminalGate:
    if mode == "all":
        return AutoGate(ApprovalDecision.ONCE, dangerous_allowed)
    if mode == "none":
        return AutoGate(ApprovalDecision.DENY)
    return TerminalGate()
