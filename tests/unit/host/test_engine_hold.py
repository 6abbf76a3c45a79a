"""Engine.hold: a context (the window's `Host.serving`) entered and left on the engine's thread
while the caller's loop, on its own thread, only awaits."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from desktop_agent.host.engine import Engine


@pytest.fixture
def engine() -> Iterator[Engine]:
    engine = Engine("test-engine").start()
    try:
        yield engine
    finally:
        engine.close()


class Recorded:
    """A context that says on which thread it was entered and left, and how it was left."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.entering = threading.Event()
        self.cancelled = threading.Event()
        #: set on the engine's loop to let the entering go on (None: it goes on at once)
        self.hold_entering: asyncio.Event | None = None

    @contextlib.asynccontextmanager
    async def context(self) -> AsyncIterator[str]:
        self.events.append(("entered", threading.current_thread().name))
        self.entering.set()
        try:
            if self.hold_entering is not None:
                await self.hold_entering.wait()
        except asyncio.CancelledError:
            self.events.append(("cancelled while entering", threading.current_thread().name))
            self.cancelled.set()
            raise
        try:
            yield "the value"
        finally:
            self.events.append(("left", threading.current_thread().name))


def test_the_context_is_entered_and_left_on_the_engine_and_leave_awaits_its_exit(
    engine: Engine,
) -> None:
    recorded = Recorded()

    async def face() -> list[tuple[str, str]]:
        held = await engine.hold(recorded.context())
        assert held.value == "the value"
        assert recorded.events == [("entered", "test-engine")], "held open until leave"
        await held.leave()
        seen = list(recorded.events)
        await held.leave()  # idempotent
        return seen

    assert asyncio.run(face()) == [("entered", "test-engine"), ("left", "test-engine")]
    assert recorded.events == [("entered", "test-engine"), ("left", "test-engine")]


def test_an_error_entering_is_raised_to_the_caller() -> None:
    @contextlib.asynccontextmanager
    async def failing() -> AsyncIterator[None]:
        raise OSError("the store cannot be opened")
        yield  # pragma: no cover - an async generator

    engine = Engine("test-engine").start()
    try:
        with pytest.raises(OSError, match="the store cannot be opened"):
            asyncio.run(engine.hold(failing()))
        assert engine.running, "the engine goes on (the window says what is wrong)"
    finally:
        engine.close()


def test_an_error_leaving_is_raised_by_leave(engine: Engine) -> None:
    @contextlib.asynccontextmanager
    async def failing_exit() -> AsyncIterator[None]:
        yield
        raise RuntimeError("closing failed")

    async def face() -> None:
        held = await engine.hold(failing_exit())
        await held.leave()

    with pytest.raises(RuntimeError, match="closing failed"):
        asyncio.run(face())


def test_a_context_still_held_when_the_engine_closes_is_left_on_the_engine() -> None:
    recorded = Recorded()
    engine = Engine("test-engine").start()
    try:

        async def face() -> None:
            held = await engine.hold(recorded.context())
            await asyncio.to_thread(engine.close)
            await held.leave()  # at once: the engine's close left it

        asyncio.run(face())
    finally:
        engine.close()
    assert recorded.events == [("entered", "test-engine"), ("left", "test-engine")]


def test_cancelling_the_hold_while_entering_cancels_the_entering_on_the_engine(
    engine: Engine,
) -> None:
    recorded = Recorded()

    async def make_hold_event() -> None:
        recorded.hold_entering = asyncio.Event()  # never set: the entering waits

    engine.submit(make_hold_event()).result(5)

    async def face() -> None:
        holding = asyncio.ensure_future(engine.hold(recorded.context()))
        await asyncio.to_thread(recorded.entering.wait, 5)
        holding.cancel()
        with pytest.raises(asyncio.CancelledError):
            await holding

    asyncio.run(face())
    assert recorded.cancelled.wait(5)
    assert recorded.events == [
        ("entered", "test-engine"),
        ("cancelled while entering", "test-engine"),
    ]


def test_the_callers_loop_goes_on_while_the_context_is_entered(engine: Engine) -> None:
    recorded = Recorded()

    async def make_hold_event() -> None:
        recorded.hold_entering = asyncio.Event()

    engine.submit(make_hold_event()).result(5)

    async def face() -> None:
        holding = asyncio.ensure_future(engine.hold(recorded.context()))
        await asyncio.to_thread(recorded.entering.wait, 5)
        ticks = 0
        for _ in range(5):  # the caller's loop runs other work meanwhile
            await asyncio.sleep(0)
            ticks += 1
        assert ticks == 5 and not holding.done()
        event = recorded.hold_entering
        assert event is not None
        engine.call(event.set)
        held = await holding
        await held.leave()

    asyncio.run(face())
    assert [what for what, _ in recorded.events] == ["entered", "left"]
