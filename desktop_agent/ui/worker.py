"""RunWorker: one run's TaskLoopEvents, live or replayed, re-emitted as Qt signals."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator

from PySide6.QtCore import QObject, Signal

from desktop_agent.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StepFinished,
    StepStarted,
    TaskLoopEvent,
)
from desktop_agent.core.models import RunView
from desktop_agent.ui.text import one_line

log = logging.getLogger(__name__)

#: a replay hands over this many events at once before letting Qt paint and take input
REPLAY_SLICE = 200


class RunWorker(QObject):
    """The one consumer of a run's events for the window, whether live or replayed.

    It owns the event generator: `cancel()` (or the window going away) closes it, which
    ends a live run as stopped / user_stop (DESIGN §1, "Who owns a loop"). A replay and
    a live run go through the same signals, so the timeline has one code path.

    Signals:
        run_started(RunView): the run began (a replay shows it as it began live).
        step_started(StepView): a step row opened (live only).
        step_finished(StepView): a step row closed, with its result.
        run_paused(RunView), run_resumed(RunView): the run waits / goes on.
        approval_requested(ApprovalRequest): the run waits for a human's answer.
        approval_resolved(ApprovalRequest, str, str): the answer (once | run | deny) and
            who gave it (user | timeout | ...).
        run_finished(RunView): the final run view.
        failed(str): the events could not be read (one line); `done` follows.
        done: the worker is finished, whatever happened; always the last signal.

    Attributes:
        live: True for a run executing now, False for a replay of a stored run.
        run: the latest run view seen, None before run_started.
    """

    run_started = Signal(object)
    step_started = Signal(object)
    step_finished = Signal(object)
    run_paused = Signal(object)
    run_resumed = Signal(object)
    approval_requested = Signal(object)
    approval_resolved = Signal(object, str, str)
    run_finished = Signal(object)
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
        if self._task is not None:
            raise RuntimeError("a RunWorker starts once")
        self._task = asyncio.get_running_loop().create_task(self._consume())

    def cancel(self) -> None:
        """Stop consuming; a live run then ends stopped / user_stop."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def wait(self) -> None:
        """Until the worker is done (never raises; errors went out as `failed`)."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _consume(self) -> None:
        handed = 0
        try:
            async for event in self._events:
                self._dispatch(event)
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

    def _dispatch(self, event: TaskLoopEvent) -> None:
        if isinstance(event, StepFinished):
            self.step_finished.emit(event.step)
        elif isinstance(event, StepStarted):
            self.step_started.emit(event.step)
        elif isinstance(event, RunStarted):
            self.run = event.run
            self.run_started.emit(event.run)
        elif isinstance(event, RunFinished):
            self.run = event.run
            self.run_finished.emit(event.run)
        elif isinstance(event, RunPaused):
            self.run = event.run
            self.run_paused.emit(event.run)
        elif isinstance(event, RunResumed):
            self.run = event.run
            self.run_resumed.emit(event.run)
        elif isinstance(event, ApprovalRequested):
            self.approval_requested.emit(event.approval)
        elif isinstance(event, ApprovalResolved):
            self.approval_resolved.emit(event.approval, event.decision.value, event.by)


async def _close(events: AsyncIterator[TaskLoopEvent]) -> None:
    if isinstance(events, AsyncGenerator):
        try:
            await events.aclose()
        except Exception:  # noqa: BLE001 - closing must not hide the real outcome
            log.exception("closing the run's events failed")
