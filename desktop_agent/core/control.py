"""RunControl: pause, resume and stop for one run, as awaitable checkpoints."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable
from typing import TypeVar

from desktop_agent.core.errors import StopRequested
from desktop_agent.core.events import PauseReason

T = TypeVar("T")


class RunControl:
    """Stop and pause flags the loop checks at every await.

    Attributes:
        cancelled: a thread-safe flag set on stop, for work running in threads
            (typing, drags) that `asyncio` cannot cancel.
        halted: a thread-safe flag set on stop and while paused (cleared by a resume): input
            in threads sends no event while it is set — a pause interrupts an action as a
            stop does, only the run goes on after the resume.
        pause_reason: why the run was last asked to pause: "request" (window, tray, API)
            or "user" (the user took over the mouse or keyboard); the run_paused event says it.
    """

    def __init__(self) -> None:
        self._stop = asyncio.Event()
        self._running = asyncio.Event()
        self._running.set()
        self.cancelled = threading.Event()
        self.halted = threading.Event()
        self.pause_reason: PauseReason = "request"

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    @property
    def pause_requested(self) -> bool:
        return not self._running.is_set()

    def stop(self) -> None:
        self.cancelled.set()
        self.halted.set()
        self._stop.set()
        self._running.set()

    def pause(self, reason: PauseReason = "request") -> None:
        if not self._stop.is_set():
            if not self.pause_requested:
                self.pause_reason = reason
            self.halted.set()
            self._running.clear()

    def resume(self) -> None:
        if not self._stop.is_set():
            self.halted.clear()
        self._running.set()

    def check(self) -> None:
        if self._stop.is_set():
            raise StopRequested

    async def guard(self, awaitable: Awaitable[T]) -> T:
        """Await `awaitable`, but give up on it the moment a stop is asked.

        The awaited work is cancelled and StopRequested raised; a stop never
        waits for a model request or a tool to finish.
        """
        if self._stop.is_set():
            if inspect.iscoroutine(awaitable):
                awaitable.close()  # never started: close it, or Python warns it was never awaited
            raise StopRequested
        work = asyncio.ensure_future(awaitable)
        stopper = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({work, stopper}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            work.cancel()
            raise
        finally:
            stopper.cancel()
        if work.done():
            return work.result()
        work.cancel()
        raise StopRequested

    async def wait_resumed(self) -> None:
        """Block while paused; a stop ends the wait with StopRequested."""
        await self.guard(self._running.wait())
        self.check()
