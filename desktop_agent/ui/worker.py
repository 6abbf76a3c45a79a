"""RunWorker: a stored run's events (a replay) read on the GUI loop, handed on as one signal."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from desktop_agent.core.events import (
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    TaskLoopEvent,
)
from desktop_agent.core.models import RunView
from desktop_agent.ui.text import one_line

if TYPE_CHECKING:
    import asyncio

    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.run_on_show import RunOnShow

log = logging.getLogger(__name__)

#: a replay hands over this many events at once before letting Qt paint and take input
REPLAY_SLICE = 200


class RunWorker(QObject):
    """Reads one stored run's events (a replay) and hands them on as they come.

    The window puts a replay on show through the same path as the live run's events
    (`RunOnShow.apply`, rendered by the window): one code path, live or replayed.
    `cancel()` (or the window going away) closes the events.

    Signals:
        run_event(object): each TaskLoopEvent, in order (`object`: the events are a union
            of dataclasses, which a Qt signal cannot name as one type).
        failed(str): the events could not be read (one line); `done` follows.
        done: the worker is finished, whatever happened; always the last signal.

    Attributes:
        live: True for a run executing now, False for a replay of a stored run.
        run: the latest run view seen, None before run_started.
    """

    run_event = Signal(object)
    failed = Signal(str)
    done = Signal()

    def __init__(
        self,
        events: AsyncIterator[TaskLoopEvent],
        *,
        live: bool,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.live = live
        self.run: RunView | None = None
        self._events = events
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin consuming on the running asyncio loop (qasync's, in the app)."""
        import asyncio  # not at the top: the main window paints before asyncio is loaded

        if self._task is not None:
            raise RuntimeError("a RunWorker starts once")
        self._task = asyncio.get_running_loop().create_task(self._consume())

    def cancel(self) -> None:
        """Stop consuming (closing the events)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def show_on(self, shown: RunOnShow) -> None:
        """Hand the events to `shown` (the live run's path), and start."""
        self.run_event.connect(shown.apply)
        self.failed.connect(shown.replay_failed)
        self.done.connect(shown.replay_done)
        self.start()

    def drop(self) -> None:
        """Cancel, and hand on nothing more."""
        self.cancel()
        for signal in (self.run_event, self.failed, self.done):
            signal.disconnect()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def wait(self) -> None:
        """Until the worker is done (never raises; errors went out as `failed`)."""
        import asyncio

        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _consume(self) -> None:
        import asyncio

        handed = 0
        try:
            async for event in self._events:
                if isinstance(event, RunStarted | RunPaused | RunResumed | RunFinished):
                    self.run = event.run
                self.run_event.emit(event)
                if not self.live:
                    handed += 1
                    if handed % REPLAY_SLICE == 0:
                        # a replay yields without awaiting: give Qt a turn now and then
                        await asyncio.sleep(0)
        except Exception as error:  # noqa: BLE001 - shown to the user as one line
            log.exception("reading the run's events failed")
            self.failed.emit(one_line(error))
        finally:
            await _close(self._events)
            self.done.emit()


async def stored_events(client: EngineClient, run_id: str) -> AsyncIterator[TaskLoopEvent]:
    """A stored run's events (a replay), read on the engine and handed over in batches."""
    async with contextlib.aclosing(client.stream(client.host.records.replay, run_id)) as batches:
        async for batch in batches:
            for event in batch:
                yield event


async def _close(events: AsyncIterator[TaskLoopEvent]) -> None:
    if isinstance(events, AsyncGenerator):
        try:
            await events.aclose()
        except Exception:  # noqa: BLE001 - closing must not hide the real outcome
            log.exception("closing the run's events failed")
