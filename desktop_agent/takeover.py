"""UserTakeover: the user's own mouse or keyboard input pauses every active run at once.

Runs on the loop the runner runs on (the CLI's, the app's engine thread). It starts the
takeover watch (desktop/takeover.py) when a run starts and stops it when no run is active;
the watch's reports come from its own thread and are handed to the loop. A run it paused
resumes only when the user says so (window, tray, API). Input is not the user's taking over
while the run is asking the user (an approval dialog or prompt is open), while every run is
paused already, and, after a resume or an answered approval, until the user has let go of
the mouse and keyboard for `idle_s` (the click on Resume or Allow would pause it again).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Protocol

from desktop_agent.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    RunFinished,
    RunResumed,
    RunStarted,
    TaskLoopEvent,
)
from desktop_agent.core.runner import TaskRunnerService
from desktop_agent.desktop.takeover import (
    InjectionWindows,
    TakeoverUnavailable,
    TakeoverWatch,
    start_takeover_watch,
)

log = logging.getLogger(__name__)

#: after a resume or an answered approval, input counts once the user was idle this long
RESUME_IDLE_S = 1.0
#: the longest `settle` waits for the watch to read what came before it (it takes ~0.2 ms)
SETTLE_TIMEOUT_S = 0.5

StartWatch = Callable[[Callable[[], None], InjectionWindows], TakeoverWatch]


class TakeoverListener(Protocol):
    def took_over(self, run_ids: tuple[str, ...]) -> None:
        """The user's input paused these runs (on the runner's loop)."""

    def unavailable(self, why: str) -> None:
        """The watch cannot start: runs go on unwatched (said once per process)."""


class UserTakeover:
    """Pauses the runner's active runs when the user takes over; see the module docstring.

    Attributes:
        paused_by_user: the runs this paused that have not resumed since.
        problem: why the watch could not start ("" while it can).
    """

    def __init__(
        self,
        runner: TaskRunnerService,
        injections: InjectionWindows,
        *,
        start_watch: StartWatch = start_takeover_watch,
        clock: Callable[[], float] = time.monotonic,
        idle_s: float = RESUME_IDLE_S,
    ) -> None:
        self._runner = runner
        self._injections = injections
        self._start_watch = start_watch
        self._clock = clock
        self._idle_s = idle_s
        self._listeners: list[TakeoverListener] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watch: TakeoverWatch | None = None
        self._starting: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._asking: set[str] = set()  # approvals open now
        self._last_input = float("-inf")
        self._settling = False  # after a resume / an answer: wait for the user to let go
        self.paused_by_user: set[str] = set()
        self.problem = ""

    # ── set-up (on the runner's loop) ────────────────────────────────────────

    def attach(self) -> None:
        """Follow the runner's runs from now on; call on the runner's loop."""
        self._loop = asyncio.get_running_loop()
        if self._unsubscribe is None:
            self._unsubscribe = self._runner.subscribe(self._on_event)
            self._runner.services.after_action = self.settle
        if self._runner.active_ids:
            self._arm()

    def add_listener(self, listener: TakeoverListener) -> None:
        self._listeners.append(listener)
        if self.problem:
            listener.unavailable(self.problem)

    @property
    def watching(self) -> bool:
        return self._watch is not None

    async def close(self) -> None:
        """Stop following runs and end the watch (its thread is joined off the loop)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
            if self._runner.services.after_action == self.settle:
                self._runner.services.after_action = None
        if self._starting is not None:
            await asyncio.gather(self._starting, return_exceptions=True)
        await self._disarm()

    # ── the runs' events ─────────────────────────────────────────────────────

    def _on_event(self, event: TaskLoopEvent) -> None:
        if isinstance(event, RunStarted):
            self._arm()
        elif isinstance(event, ApprovalRequested):
            self._asking.add(event.approval.id)
        elif isinstance(event, ApprovalResolved):
            self._asking.discard(event.approval.id)
            self._settling = True
        elif isinstance(event, RunResumed):
            self.paused_by_user.discard(event.run.id)
            self._settling = True
        elif isinstance(event, RunFinished):
            self.paused_by_user.discard(event.run.id)
            if not self._runner.active_ids:
                self._asking.clear()
                self._spawn(self._disarm())

    def _arm(self) -> None:
        if self._watch is not None or self._starting is not None or self.problem:
            return
        self._starting = self._spawn(self._start())

    async def _start(self) -> None:
        try:
            # an X connection and a few round trips: not on the loop's thread
            watch = await asyncio.to_thread(self._start_watch, self._report, self._injections)
        except TakeoverUnavailable as error:
            self.problem = " ".join(str(error).split())
            log.warning("the user's input is not watched: %s", self.problem)
            for listener in list(self._listeners):
                listener.unavailable(self.problem)
            return
        finally:
            self._starting = None
        log.info("watching the user's input (%s)", watch.backend)
        self._watch = watch
        if not self._runner.active_ids:  # every run ended while the watch started
            await self._disarm()

    async def _disarm(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            await asyncio.to_thread(watch.stop)

    def _spawn(self, work: object) -> asyncio.Task[None]:
        assert self._loop is not None
        task: asyncio.Task[None] = self._loop.create_task(work)  # type: ignore[arg-type]
        _keep.add(task)
        task.add_done_callback(_keep.discard)
        return task

    async def settle(self) -> None:
        """After an action (the loop's `after_action`): the watch reads every input event
        made until now and reports the user's, so a user who took over during the action
        has paused the run before its next turn (the reports reach the loop before this
        returns: both cross with call_soon_threadsafe, in order)."""
        watch = self._watch
        if watch is not None:
            await asyncio.to_thread(watch.flush, SETTLE_TIMEOUT_S)

    # ── the user's input ─────────────────────────────────────────────────────

    def _report(self) -> None:
        """The watch's thread: hand the report to the loop (cheap, never blocks)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.user_input)

    def user_input(self) -> None:
        """The user moved, clicked, scrolled or typed (on the runner's loop)."""
        now = self._clock()
        idle = now - self._last_input
        self._last_input = now
        active = self._runner.active_ids
        if not active or self._asking:
            return
        if self._settling:
            if idle < self._idle_s:
                return  # still the hand that clicked Resume / Allow
            self._settling = False
        running = tuple(run_id for run_id in active if run_id not in self.paused_by_user)
        if not running:
            return
        for run_id in running:
            self._runner.pause(run_id, reason="user")
            self.paused_by_user.add(run_id)
        log.info("the user took over: paused %s", ", ".join(running))
        for listener in list(self._listeners):
            listener.took_over(running)


#: tasks the takeover spawned, kept until done (the loop holds only weak references)
_keep: set[asyncio.Task[None]] = set()
