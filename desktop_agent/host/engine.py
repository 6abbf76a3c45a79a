"""Engine: an asyncio loop on a thread of its own, where the app's Host (and its Agent) runs.

The app's GUI thread keeps the widgets; everything that talks to the store, the model, the
desktop or the local API runs here. Other threads cross over only through `submit` (a
coroutine, its result as a future), `call` (a plain function, soon) and `hold` (a context
held open here: the window's `Host.serving`). A stop from the global hotkey is delivered
straight to this loop, so it never waits for the GUI thread.

    GUI thread (Qt, qasync)            engine thread (asyncio)          worker threads
    ───────────────────────            ───────────────────────          ──────────────
    widgets, dialogs        ─submit→   Host → Agent: runner, runs,  ───→  capture, input,
    RunsState / views       ←signal─   store, API server, planners       inventory, SQLite
                                       ↑ hotkey listener thread (stop)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

#: how long `close` waits for the loop's last tasks before it gives up on them
CLOSE_TIMEOUT_S = 10.0


class EngineClosed(RuntimeError):
    """The engine's loop has ended; nothing more can be run on it."""


class Engine:
    """An asyncio loop running on its own thread until `close`.

    The thread is a daemon: `close` is how it ends, and a close that never came (a fault on
    the way out) must not keep a quitting process alive.

    Attributes:
        loop: the engine's event loop (use it only through `submit` / `call` from
            other threads).
        thread: the thread the loop runs on.
    """

    def __init__(self, name: str = "desktop-agent-engine") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._started = threading.Event()
        self._closed = False

    def start(self) -> Engine:
        self.thread.start()
        self._started.wait()
        return self

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._started.set)
        try:
            self.loop.run_forever()
        finally:
            try:
                self._cancel_leftovers()
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
                self.loop.run_until_complete(self.loop.shutdown_default_executor())
            finally:
                asyncio.set_event_loop(None)
                self.loop.close()

    def _cancel_leftovers(self) -> None:
        pending = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            log.info("engine: %d task(s) cancelled at close", len(pending))
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))

    @property
    def running(self) -> bool:
        return self.thread.is_alive() and not self._closed

    def in_engine(self) -> bool:
        """True on the engine's own thread."""
        return threading.current_thread() is self.thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run `coro` on the engine; its outcome as a thread-safe future."""
        if self._closed:
            coro.close()
            raise EngineClosed("the engine has stopped")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` run on the engine, from another thread's asyncio loop.

        Cancelling the awaiting task cancels the work on the engine too.
        """
        return await asyncio.wrap_future(self.submit(coro))

    async def hold(self, context: AbstractAsyncContextManager[T]) -> Held[T]:
        """`context` entered on the engine's loop and held open there until `Held.leave`,
        awaited from another thread's loop: the window's `Host.serving`, so the app's Host is
        opened and closed on its own loop in the one way every face's is, while the GUI thread
        only awaits. What entering raises is raised here; cancelling the await leaves what
        was entered. A context still held when the engine closes is left then (`close`
        cancels what is still running on the loop)."""
        entered: concurrent.futures.Future[T] = concurrent.futures.Future()
        leave: concurrent.futures.Future[None] = concurrent.futures.Future()

        async def held() -> None:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    value = await stack.enter_async_context(context)
                except Exception as error:  # noqa: BLE001 - raised on the caller's side
                    entered.set_exception(error)
                    return
                except BaseException:
                    entered.cancel()
                    raise
                entered.set_result(value)
                await asyncio.wrap_future(leave)

        holding = self.submit(held())
        try:
            value = await asyncio.wrap_future(entered)
        except asyncio.CancelledError:
            holding.cancel()  # the context is left on the engine, if it was entered
            raise
        return Held(value, leave, holding)

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call `fn(*args)` on the engine's loop as soon as it is free (from any thread)."""
        if self._closed:
            raise EngineClosed("the engine has stopped")
        self.loop.call_soon_threadsafe(fn, *args)

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """End the loop (its tasks left are cancelled) and join its thread. Idempotent.

        Blocks up to `timeout`: call it off the GUI thread (e.g. through asyncio.to_thread).
        """
        if self._closed:
            return
        self._closed = True
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout)
            if self.thread.is_alive():
                log.error("engine: the thread did not end within %.0f s", timeout)
        elif not self.loop.is_closed():
            self.loop.close()


class Held(Generic[T]):
    """A context entered on an engine's loop and held open there (`Engine.hold`).

    Attributes:
        value: what entering it gave (the Host of `Host.serving`).
    """

    def __init__(
        self,
        value: T,
        leave: concurrent.futures.Future[None],
        holding: concurrent.futures.Future[None],
    ) -> None:
        self.value = value
        self._leave = leave
        self._holding = holding

    async def leave(self) -> None:
        """Leave the context on the engine and await its exit there (`Host.serving`: every run
        stopped and awaited, then what the face turned on, then the services), from another
        thread's loop; what the exit raises is raised here. Idempotent; at once when the
        engine ended first (its close left the context)."""
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            self._leave.set_result(None)  # done already: left before, or the engine ended
        exited = asyncio.wrap_future(self._holding)
        await asyncio.wait([exited])
        if not exited.cancelled():
            exited.result()
