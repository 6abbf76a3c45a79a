"""EngineClient only crosses the thread: `send` lands calls on the engine in order, `ask` awaits
a coroutine run there, `stream` hands an engine-side iterator's items to the GUI loop; what
fails over there is raised here."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from desktop_agent.core.errors import RunNotFound
from tests.gui.fake_agent import drive, make_client, until

pytestmark = pytest.mark.gui


@pytest.fixture
def client(qloop: Any, agent: Any) -> Iterator[Any]:
    made = make_client(agent)
    yield made
    drive(qloop, made.close())


def test_sent_calls_run_on_the_engine_thread_in_the_order_sent(client: Any, qloop: Any) -> None:
    seen: list[tuple[int, bool]] = []

    def note(n: int, *, last: bool = False) -> None:
        seen.append((n, threading.current_thread() is client.engine.thread))

    for n in range(50):
        client.send(note, n)
    client.send(note, 50, last=True)

    drive(qloop, until(lambda: len(seen) == 51, what="the calls"))
    assert seen == [(n, True) for n in range(51)]


def test_ask_awaits_the_engines_answer_and_raises_its_error_here(client: Any, qloop: Any) -> None:
    async def where(add: int) -> tuple[bool, int]:
        await asyncio.sleep(0)
        return threading.current_thread() is client.engine.thread, 41 + add

    async def refuse() -> None:
        raise RunNotFound("no run 'x'")

    assert drive(qloop, client.ask(where, 1)) == (True, 42)
    with pytest.raises(RunNotFound, match="no run 'x'"):
        drive(qloop, client.ask(refuse))


def test_a_stream_hands_over_what_was_read_before_an_error_then_raises_it(
    client: Any, qloop: Any
) -> None:
    async def two_then_a_fault() -> AsyncIterator[int]:
        yield 1
        yield 2
        raise OSError("disk I/O error")

    got: list[int] = []

    async def read() -> None:
        async for item in client.stream(two_then_a_fault):
            got.append(item)

    with pytest.raises(OSError, match="disk I/O error"):
        drive(qloop, read())
    assert got == [1, 2]


def test_a_stream_closed_early_ends_the_engines_side(client: Any, qloop: Any) -> None:
    closed = threading.Event()

    async def endless() -> AsyncIterator[int]:
        n = 0
        try:
            while True:
                yield n
                n += 1
                await asyncio.sleep(0.001)
        finally:
            closed.set()

    async def read_three() -> list[int]:
        items = client.stream(endless)
        got = [await anext(items) for _ in range(3)]
        await items.aclose()
        return got

    assert drive(qloop, read_three()) == [0, 1, 2]
    drive(qloop, until(closed.is_set, what="the engine's side to end"))


def test_each_turn_waits_for_the_gui_to_hand_on_the_events_before_it_without_a_call_back(
    client: Any, qloop: Any, agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine keeps pace with the window (a turn starts once the GUI thread has handed on
    and painted what came before), and the GUI thread never calls into the engine for that: a
    call across costs the GUI thread ~1 ms at every catch-up (GIL handover)."""
    from desktop_agent.core.events import RunFinished
    from desktop_agent.host.host import RunRequest
    from desktop_agent.ui import engine_client
    from tests.fakes import ScriptedPlanner, done, tool

    monkeypatch.setattr(engine_client, "PACE_MAX_S", 60.0)  # wait as long as it takes
    agent.planner_factory = lambda run: ScriptedPlanner(
        [tool("wait", seconds=0), tool("wait", seconds=0), tool("wait", seconds=0), done()]
    )
    made: list[object] = []  # on the engine thread, as the run makes them
    shown: list[object] = []  # on the GUI thread, as the client hands them on
    behind_at_turns: list[int] = []
    client.send(agent.runner.subscribe, made.append)
    client.run_event.connect(shown.append)
    services = agent.runner.services
    drive(qloop, until(lambda: services.pace is not None, what="the client's pace"))
    pace = services.pace

    async def watched_pace() -> None:
        await pace()
        behind_at_turns.append(len(made) - len(shown))

    services.pace = watched_pace
    calls: list[str] = []
    send = client.engine.call

    def counted(fn: Any, *args: Any) -> Any:
        calls.append(getattr(getattr(fn, "func", fn), "__name__", repr(fn)))
        return send(fn, *args)

    monkeypatch.setattr(client.engine, "call", counted)
    client.send(client.host.submit, RunRequest("four turns"))
    drive(qloop, until(lambda: any(isinstance(e, RunFinished) for e in shown), what="the run"))

    assert len(behind_at_turns) >= 4 and set(behind_at_turns) == {0}, behind_at_turns
    assert calls == ["submit"], calls  # the start; nothing for the catching up


def test_handing_on_a_runs_events_makes_no_timer_per_event(
    client: Any, qloop: Any, agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GUI thread's 1 ms waits (the rest of a burst, the paint before 'caught up') are the
    client's own timers: QTimer.singleShot(1, callable) made a timer object and its connection
    at each call, 20-80 µs with its delivery, several times per event."""
    from PySide6.QtCore import QTimer

    from desktop_agent.core.events import RunFinished
    from desktop_agent.host.host import RunRequest
    from tests.fakes import ScriptedPlanner, done, tool

    made_for_client: list[str] = []
    single_shot = QTimer.singleShot

    def counted(*args: Any) -> Any:
        target = args[-1]
        if getattr(target, "__self__", None) is client:
            made_for_client.append(target.__name__)
        return single_shot(*args)

    monkeypatch.setattr(QTimer, "singleShot", counted)
    agent.planner_factory = lambda run: ScriptedPlanner([tool("wait", seconds=0), done()])
    shown: list[object] = []
    client.run_event.connect(shown.append)
    client.send(client.host.submit, RunRequest("two turns"))
    drive(qloop, until(lambda: any(isinstance(e, RunFinished) for e in shown), what="the run"))
    assert len(shown) >= 6
    assert made_for_client == []
