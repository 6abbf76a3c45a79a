"""Helpers to drive the window's engine and a qasync loop in GUI tests (fakes: tests/fakes.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_agent.agent import Agent
from tests.fakes import FakeExecutor, FakeObserver, MemoryRepository

if TYPE_CHECKING:
    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.main_window import MainWindow

T = TypeVar("T")

# ── the fakes behind a bound window ─────────────────────────────────────────


def engine_of(window: MainWindow) -> EngineClient:
    """The client of a window bound to an engine (bind_window, the `window` fixture)."""
    assert window.client is not None
    return window.client


def memory_repo(agent: Agent) -> MemoryRepository:
    """make_agent's repository, the MemoryRepository standing in for SqliteRunRepository."""
    assert isinstance(agent.repo, MemoryRepository)
    return agent.repo


def fake_executor(agent: Agent) -> FakeExecutor:
    """make_agent's executor: a FakeExecutor, its calls recorded."""
    executor = agent.runner.services.executor
    assert isinstance(executor, FakeExecutor)
    return executor


def fake_observer(agent: Agent) -> FakeObserver:
    """make_agent's observer: a FakeObserver, its looks counted."""
    observer = agent.runner.services.observer
    assert isinstance(observer, FakeObserver)
    return observer


# ── the engine thread ────────────────────────────────────────────────────────


def make_client(agent: Agent) -> Any:
    """An EngineClient over `agent`, on an engine thread of its own (close it with
    `client.close()`, which ends the thread)."""
    from desktop_agent.host.engine import Engine
    from desktop_agent.host.host import Host
    from desktop_agent.launch import local_api
    from desktop_agent.ui.engine_client import EngineClient

    return EngineClient(Engine().start(), Host(agent, local_api=local_api))


def bind_window(window: Any, agent: Agent) -> Any:
    """Bind `window` to `agent` through an engine, as the app does; the client."""
    from desktop_agent.ui.runs_state import RunsState

    client = make_client(agent)
    runs = RunsState()
    client.run_event.connect(runs.apply)
    window.bind(client, runs)
    return client


class CrossEvent:
    """An asyncio.Event that a test on the GUI thread may set while the engine's loop waits
    on it (asyncio's own Event must be set on the loop that waits)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def wait(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self._event.wait()

    def set(self) -> None:
        loop = self._loop
        if loop is None:
            self._event.set()
        else:
            loop.call_soon_threadsafe(self._event.set)


# ── driving a qasync loop from a synchronous test ───────────────────────────


def open_loop(qapp: Any) -> asyncio.AbstractEventLoop:
    import qasync

    loop: asyncio.AbstractEventLoop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    return loop


def _dropped(*_args: Any, **_kwargs: Any) -> None:
    return None


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
    asyncio.set_event_loop(None)
    # a thread that finishes one of this loop's futures after it closed (an engine thread at the
    # end of a test: asyncio.wrap_future's callback) posts through qasync's call_soon signal,
    # whose slot calls loop.call_soon on the timer deleted below ("Internal C++ object
    # (_SimpleTimer) already deleted", caught in Qt's loop during a later teardown): a closed
    # loop drops such a callback, posted or still to come
    loop.call_soon = _dropped  # type: ignore[method-assign,assignment]
    # qasync keeps a Qt timer per pending callback, cancelled ones too, until it fires:
    # delete the loop's timer object now, on this thread, rather than whenever it is collected
    import shiboken6

    timer = getattr(loop, "_timer", None)
    if timer is not None and shiboken6.isValid(timer):
        shiboken6.delete(timer)


def drive(loop: asyncio.AbstractEventLoop, work: Awaitable[T], timeout: float = 10.0) -> T:
    """Run `work` on the qasync loop (Qt events flow meanwhile) and return its result."""
    return loop.run_until_complete(asyncio.wait_for(work, timeout))


async def until(condition: Callable[[], Any], timeout: float = 5.0, what: str = "") -> Any:  # noqa: ASYNC109
    """Wait (letting Qt and asyncio run) until `condition()` is truthy; that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what or condition}")
        await asyncio.sleep(0.005)
