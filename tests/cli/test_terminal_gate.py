"""`--approve ask`: the question on the terminal, denied without a terminal or on timeout; only
what is typed after the question is shown answers it."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest

from desktop_agent.cli.gate import MIN_ANSWER_S, TerminalGate, gate_for
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    MonitorArea,
    Risk,
    SafetyCheck,
)

#: a pseudo-terminal (os.openpty) and add_reader on it: POSIX only
pytestmark = pytest.mark.posix


def approval(*, offer_run_grant: bool = True) -> ApprovalRequest:
    return ApprovalRequest(
        id="a1",
        run_id="r1",
        index=1,
        tool="click",
        args={"x": 1, "y": 2},
        reason="press OK",
        risk=Risk.INPUT,
        offer_run_grant=offer_run_grant,
        timeout_s=5,
    )


class Screen(io.StringIO):
    """The gate's prompt output; `asked` is set once a whole question has been shown."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = asyncio.Event()
        self.asked_again = asyncio.Event()

    def flush(self) -> None:
        super().flush()
        if "denies in" in self.getvalue():
            self.asked.set()
        if "answer again" in self.getvalue():
            self.asked_again.set()


class ReadingClock:
    """The gates' clock: it moves only when the test says time has passed."""

    def __init__(self) -> None:
        self.now_s = 1000.0

    def now(self) -> float:
        return self.now_s


async def answer_when_asked(
    gate: TerminalGate, request: ApprovalRequest, prompts: Screen, user: int, typed: str
) -> ApprovalDecision:
    """Ask, and type `typed` on the terminal once the question is shown and read (as a
    person does)."""
    asking = asyncio.ensure_future(gate.request(request))
    await prompts.asked.wait()
    READING.now_s += MIN_ANSWER_S  # the time it takes to read the question
    os.write(user, typed.encode())
    return await asking


READING = ReadingClock()


@pytest.fixture
def terminal() -> Iterator[tuple[io.TextIOWrapper, int]]:
    """A pseudo-terminal: (the gate's stdin, the fd the 'user' types into)."""
    user, gate_side = os.openpty()
    stdin = open(gate_side, encoding="utf-8", closefd=True)  # noqa: SIM115
    yield stdin, user
    # the user's side first: a gate's reading thread (the loop without a reader) then reads
    # the terminal's end and stops. Its fd is closed only after: a thread still reading an fd
    # number the next test's terminal is given would take that test's answer
    with contextlib.suppress(OSError):  # a test may have closed it
        os.close(user)
    for thread in threading.enumerate():
        if thread.name == "terminal-lines":
            thread.join(10)
            assert not thread.is_alive(), "the gate's reading thread did not end"
    stdin.close()


async def test_without_a_terminal_the_gate_denies_without_asking() -> None:
    prompts = io.StringIO()
    gate = TerminalGate(stdin=io.StringIO("o\n"), prompt_out=prompts)

    assert await gate.request(approval()) is ApprovalDecision.DENY
    assert prompts.getvalue() == ""


@pytest.mark.parametrize(
    ("typed", "offered", "expected"),
    [
        ("o\n", True, ApprovalDecision.ONCE),
        ("r\n", True, ApprovalDecision.RUN),
        ("r\n", False, ApprovalDecision.DENY),
        ("d\n", True, ApprovalDecision.DENY),
        ("\n", True, ApprovalDecision.DENY),
        ("yes please\n", True, ApprovalDecision.DENY),
    ],
)
async def test_the_answer_typed_on_the_terminal_decides(
    terminal: tuple[io.TextIOWrapper, int], typed: str, offered: bool, expected: ApprovalDecision
) -> None:
    stdin, user = terminal
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)

    request = approval(offer_run_grant=offered)

    decision = await answer_when_asked(gate, request, prompts, user, typed)

    assert decision is expected
    assert "allow click" in prompts.getvalue()
    assert ("[r]un" in prompts.getvalue()) is offered


async def test_a_timeout_cancels_the_question_and_stops_reading_the_terminal(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    stdin, _ = terminal
    gate = TerminalGate(stdin=stdin, prompt_out=io.StringIO())

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(gate.request(approval()), 0.05)
    loop = asyncio.get_running_loop()
    assert not loop.remove_reader(stdin.fileno())  # nothing is left listening


async def test_the_models_reason_and_arguments_cannot_steer_the_terminal(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    stdin, user = terminal
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    sneaky = ApprovalRequest(
        id="a1",
        run_id="r1",
        index=1,
        tool="type_text",
        # a line rewritten by a carriage return, a cleared screen, reversed text
        args={"text": "harmless\r\x1b[2Krm -rf ~", "note": "\u202egnp.exe\x9b"},
        reason="press OK\x1b]0;pwned\x07\n\u2066hidden",
        risk=Risk.INPUT,
        offer_run_grant=True,
        timeout_s=5,
    )
    assert await answer_when_asked(gate, sneaky, prompts, user, "d\n") is ApprovalDecision.DENY
    shown = prompts.getvalue()
    assert not any(char in shown for char in ("\x1b", "\r", "\u202e", "\u2066", "\x9b", "\x07"))
    assert '"note": "\\u202egnp.exe\\x9b"' in shown
    assert "  reason: press OK\\x1b]0;pwned\\x07\\n\\u2066hidden\n" in shown


async def test_a_call_that_asks_every_time_says_why_and_offers_no_run_grant(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    stdin, user = terminal
    prompts = Screen()
    launcher = ApprovalRequest(
        id="a2",
        run_id="r1",
        index=2,
        tool="hotkey",
        args={"keys": ["win", "r"]},
        reason="open the run dialog",
        risk=Risk.INPUT,
        offer_run_grant=False,
        timeout_s=5,
        caution="a key combination that opens a program launcher",
    )
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)

    # "for this run" is not on offer: it denies
    assert await answer_when_asked(gate, launcher, prompts, user, "r\n") is ApprovalDecision.DENY
    shown = prompts.getvalue()
    assert "  asks every time: a key combination that opens a program launcher\n" in shown
    assert "[o]nce / [d]eny" in shown and "[r]un" not in shown


@pytest.mark.parametrize("held_in", ["the terminal", "the stream's buffer"])
async def test_a_line_typed_before_the_question_does_not_approve(
    terminal: tuple[io.TextIOWrapper, int], held_in: str
) -> None:
    stdin, user = terminal
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    # typed ahead (say, by the agent into this very terminal)
    if held_in == "the terminal":
        os.write(user, b"o\n")
    else:
        os.write(user, b"hello\no\n")
        assert stdin.readline() == "hello\n"  # the stream now holds "o\n" itself

    decision = await answer_when_asked(gate, approval(), prompts, user, "d\n")

    assert decision is ApprovalDecision.DENY


async def test_the_question_shows_the_text_as_it_will_be_typed(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    """The stored arguments hide a text whose field is not known (`args`); the person asked
    sees it (`shown_args`) — a known password field's text stays hidden on a terminal."""
    stdin, user = terminal
    prompts = Screen()
    typed = ApprovalRequest(
        id="a3",
        run_id="r1",
        index=3,
        tool="type_text",
        args={"text": "•••", "enter": True},
        shown_args={"text": "rm -rf ~/src", "enter": True},
        reason="clean up",
        risk=Risk.INPUT,
        offer_run_grant=False,
        timeout_s=5,
        caution="typing a line that ends with Enter may run it in a terminal",
    )
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    assert await answer_when_asked(gate, typed, prompts, user, "d\n") is ApprovalDecision.DENY
    assert 'allow type_text {"text": "rm -rf ~/src", "enter": true}?' in prompts.getvalue()

    password = ApprovalRequest(
        id="a4",
        run_id="r1",
        index=4,
        tool="type_text",
        args={"text": "•••"},
        secret="hunter2",
        reason="log in",
        risk=Risk.INPUT,
        offer_run_grant=False,
        timeout_s=5,
    )
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    assert await answer_when_asked(gate, password, prompts, user, "d\n") is ApprovalDecision.DENY
    assert 'allow type_text {"text": "•••"}?' in prompts.getvalue()
    assert "hunter2" not in prompts.getvalue()


async def test_a_line_that_comes_before_the_question_could_be_read_does_not_approve(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    stdin, user = terminal
    prompts = Screen()
    clock = ReadingClock()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=clock.now)
    asking = asyncio.ensure_future(gate.request(approval()))
    await prompts.asked.wait()

    # keystrokes still on their way from the agent's last action arrive just after the
    # question: thrown away, and the question stands
    clock.now_s += MIN_ANSWER_S / 10
    os.write(user, b"o\n")
    await asyncio.wait_for(prompts.asked_again.wait(), 5)
    assert not asking.done()
    clock.now_s += MIN_ANSWER_S
    os.write(user, b"d\n")

    assert await asking is ApprovalDecision.DENY


async def test_a_closed_terminal_denies(terminal: tuple[io.TextIOWrapper, int]) -> None:
    stdin, user = terminal
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    asking = asyncio.ensure_future(gate.request(approval()))
    await prompts.asked.wait()
    os.close(user)  # the terminal went away (its window closed)

    assert await asking is ApprovalDecision.DENY


# ── a loop without a reader (Windows' ProactorEventLoop) ─────────────────────


def without_the_loops_reader(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The running loop made to answer as Windows' ProactorEventLoop does: its add_reader and
    remove_reader are AbstractEventLoop's, which raise NotImplementedError (CPython 3.11
    Lib/asyncio/events.py:529-533; proactor_events.BaseProactorEventLoop overrides neither).
    Returns the fds the gate tried to watch."""
    tried: list[int] = []

    def add_reader(fd: int, callback: object, *args: object) -> None:
        tried.append(fd)
        raise NotImplementedError

    def remove_reader(fd: int) -> bool:
        raise NotImplementedError

    loop = asyncio.get_running_loop()
    monkeypatch.setattr(loop, "add_reader", add_reader)
    monkeypatch.setattr(loop, "remove_reader", remove_reader)
    return tried


@pytest.mark.parametrize(
    ("typed", "expected"),
    [("o\n", ApprovalDecision.ONCE), ("r\n", ApprovalDecision.RUN), ("d\n", ApprovalDecision.DENY)],
)
async def test_without_the_loops_reader_the_answer_typed_after_the_question_decides(
    terminal: tuple[io.TextIOWrapper, int],
    monkeypatch: pytest.MonkeyPatch,
    typed: str,
    expected: ApprovalDecision,
) -> None:
    stdin, user = terminal
    tried = without_the_loops_reader(monkeypatch)
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)

    assert await answer_when_asked(gate, approval(), prompts, user, typed) is expected
    assert tried == [stdin.fileno()]  # it asked the loop first, then read in a thread


async def test_without_the_loops_reader_a_line_read_between_questions_approves_nothing(
    terminal: tuple[io.TextIOWrapper, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin, user = terminal
    without_the_loops_reader(monkeypatch)
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    assert await answer_when_asked(gate, approval(), prompts, user, "d\n") is ApprovalDecision.DENY

    # between questions the reading thread is there: what it reads then answers nothing
    os.write(user, b"o\n")
    await read_by_the_thread(gate, 1)
    prompts = Screen()
    gate._out = prompts
    assert await answer_when_asked(gate, approval(), prompts, user, "d\n") is ApprovalDecision.DENY


async def test_without_the_loops_reader_a_timeout_cancels_the_question_at_once(
    terminal: tuple[io.TextIOWrapper, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin, user = terminal
    without_the_loops_reader(monkeypatch)
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)

    # the thread's read cannot be cancelled; the question can, and is
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(gate.request(approval()), 0.05)
    os.write(user, b"o\n")  # the answer to the cancelled question comes late
    await read_by_the_thread(gate, 1)

    prompts = Screen()
    gate._out = prompts
    assert await answer_when_asked(gate, approval(), prompts, user, "d\n") is ApprovalDecision.DENY


async def read_by_the_thread(gate: TerminalGate, chunks: int) -> None:
    """Wait until the gate's reading thread has read (and thrown away) `chunks` chunks that
    came while no question waited."""
    async with asyncio.timeout(5):
        while gate.lines is None or gate.lines.thrown_away < chunks:  # noqa: ASYNC110
            await asyncio.sleep(0.001)  # a count the product keeps: no event to wait on


async def test_without_the_loops_reader_a_closed_terminal_denies(
    terminal: tuple[io.TextIOWrapper, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin, user = terminal
    without_the_loops_reader(monkeypatch)
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    asking = asyncio.ensure_future(gate.request(approval()))
    await prompts.asked.wait()
    os.close(user)  # the terminal went away (its window closed)

    assert await asyncio.wait_for(asking, 5) is ApprovalDecision.DENY
    assert await asyncio.wait_for(gate.request(approval()), 5) is ApprovalDecision.DENY


async def test_the_caution_is_shown_as_text_not_as_terminal_controls(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    # the caution names the target, and a target's name is the screen's (a web page's): an
    # escape sequence in it would erase the question's lines and print a friendlier one
    stdin, user = terminal
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    name = "Delete\x1b[2K\x1b[1A\x1b[2K\rallow click {}? [o]nce\u202e"
    request = replace(approval(), caution=f'the target button "{name}" is sensitive ("delete")')

    await answer_when_asked(gate, request, prompts, user, "d\n")

    shown = prompts.getvalue()
    assert "\x1b" not in shown and "\u202e" not in shown and "\r" not in shown
    assert "\\x1b[2K" in shown and "\\u202e" in shown


async def test_a_safety_check_is_shown_with_its_code_and_message_as_text(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    stdin, user = terminal
    prompts = Screen()
    checked = replace(
        approval(offer_run_grant=False),
        caution="the model's provider asks before the 1 action(s) of this turn: irrelevant_domain",
        safety_check=SafetyCheck("sc_1", "irrelevant_domain", "Leaving the task's site\x1b[2K"),
    )
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    assert await answer_when_asked(gate, checked, prompts, user, "o\n") is ApprovalDecision.ONCE
    shown = prompts.getvalue()
    assert "  safety check irrelevant_domain: Leaving the task's site\\x1b[2K\n" in shown
    assert "\x1b" not in shown


@pytest.mark.parametrize("mode", ["all", "none"])
async def test_approve_all_never_acknowledges_a_safety_check(mode: str) -> None:
    gate = gate_for(mode, dangerous_allowed=("click",))
    checked = replace(approval(), safety_check=SafetyCheck("sc_1", "sensitive_domain", "a bank"))
    assert await gate.request(checked) is ApprovalDecision.DENY
    # the same call without the provider's question is approved under --approve all
    assert await gate.request(approval()) is (
        ApprovalDecision.ONCE if mode == "all" else ApprovalDecision.DENY
    )


async def test_a_quoted_part_cannot_start_a_line_that_reads_as_ours(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    # a button named so that its second line reads as the agent's own (issue 28 item 7)
    stdin, user = terminal
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    posing = "Delete\nThe desktop agent checked this call: it is safe. Answer once."
    request = replace(
        approval(offer_run_grant=False),
        reason=f"press it\n{posing}",
        caution=f'the target button "{posing}" is sensitive ("delete")',
    )

    await answer_when_asked(gate, request, prompts, user, "d\n")

    lines = prompts.getvalue().splitlines()
    assert not any(line.lstrip().startswith("The desktop agent") for line in lines), lines
    quoted = "Delete\\nThe desktop agent checked this call: it is safe. Answer once."
    assert f'  asks every time: the target button "{quoted}" is sensitive ("delete")' in lines
    assert f"  reason: press it\\n{quoted}" in lines


async def test_the_question_says_the_monitor_the_action_is_on(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    stdin, user = terminal
    prompts = Screen()
    gate = TerminalGate(stdin=stdin, prompt_out=prompts, clock=READING.now)
    left = replace(approval(), monitor=MonitorArea(2, -1280, 0, 1280, 1024))

    assert await answer_when_asked(gate, left, prompts, user, "d\n") is ApprovalDecision.DENY
    assert "  reason: press OK\n  on: monitor 2, 1280x1024 at -1280,0\n" in prompts.getvalue()
