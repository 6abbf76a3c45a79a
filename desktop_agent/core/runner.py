"""TaskRunnerService: starts runs, knows which are active, and stops, pauses or resumes them."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any

from desktop_agent.core.control import RunControl
from desktop_agent.core.errors import AlreadyRunning, RefusedToStart, RunNotFound, StopRequested
from desktop_agent.core.events import PauseReason, RunFinished, RunStarted, TaskLoopEvent
from desktop_agent.core.loop import LoopDeps, RunnerServices, run_task_loop
from desktop_agent.core.models import RunStatus, RunView, StopReason, TaskSpec, utcnow
from desktop_agent.core.ports import Planner

__all__ = ["Prepare", "RunHandle", "RunnerServices", "TaskRunnerService", "close_planner"]

log = logging.getLogger(__name__)

#: how many stops of runs not admitted (yet) are remembered
STOPPED_EARLY_KEPT = 256

#: what a run needs before its first turn: the model checked, its planner made
Prepare = Callable[[RunView], Awaitable[Planner]]


@dataclass(frozen=True, slots=True)
class RunHandle:
    """A run the runner has admitted: active (stoppable) from its first instant.

    Attributes:
        run: the run as admitted (queued).
        control: its pause / resume / stop.
        events: iterate to run it; closing them ends it stopped / user_stop.
    """

    run: RunView
    control: RunControl
    events: AsyncGenerator[TaskLoopEvent, None]

    @property
    def run_id(self) -> str:
        return self.run.id


class TaskRunnerService:
    """The active runs of this process, by id.

    `start` refuses a run id that is active (AlreadyRunning) and never replaces
    the active entry; the events it returns belong to the caller, whose leaving
    ends the run stopped / user_stop.
    """

    def __init__(self, services: RunnerServices) -> None:
        self.services = services
        self._active: dict[str, RunControl] = {}
        self._approval_ids = itertools.count(1)
        self._listeners: list[Callable[[TaskLoopEvent], None]] = []
        #: how many times stop_all was asked; a front end reads it when the user asks for a
        #: run and hands it to `admit`, which stops the run if a stop-all came in between
        self.stop_all_count = 0
        #: runs asked to stop before they were admitted (the API's stop of a queued run
        #: racing its start): admitted later after all, they end before they act
        self._stopped_early: OrderedDict[str, bool] = OrderedDict()

    @property
    def active_ids(self) -> tuple[str, ...]:
        return tuple(self._active)

    def is_active(self, run_id: str) -> bool:
        return run_id in self._active

    def subscribe(self, listener: Callable[[TaskLoopEvent], None]) -> Callable[[], None]:
        """Hear every event of every run (the tray, the API's instance view)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def create(self, spec: TaskSpec) -> RunView:
        registry = self.services.registry
        allowed = spec.allowed_tools or registry.offered_names()
        unknown = registry.unknown(allowed)
        if unknown:
            raise RefusedToStart(f"unknown tool(s): {', '.join(unknown)}")
        return await self.services.repo.create_run(replace(spec, allowed_tools=tuple(allowed)))

    async def load(self, run_id: str) -> RunView:
        run = await self.services.repo.get_run(run_id)
        if run is None:
            raise RunNotFound(f"no run {run_id!r}")
        return run

    def admit(self, run: RunView, prepare: Prepare, *, stops_seen: int | None = None) -> RunHandle:
        """Register `run` as active now and return its handle; iterate its events to run it.

        From this instant `stop`, `stop_all`, `pause` and `resume` reach the run. `prepare`
        (the model and vision checks, the planner) is awaited inside the run, raced against
        a stop like every await of the loop: a run stopped while it is being prepared ends
        stopped / user_stop and never asks the model nor sends input. A `RefusedToStart`
        from `prepare` is raised from the events (the run stays as it was: queued).

        A stop that came while the run was on its way in, when nothing of it was active to
        stop, ends it here too, before its events begin: a `stop(run.id)` before now, or a
        `stop_all` since `stop_all_count` was `stops_seen` (read when the user asked for
        the run).
        """
        if run.id in self._active:
            raise AlreadyRunning(f"run {run.id} is running already")
        if run.status.is_terminal:
            raise RefusedToStart(f"run {run.id} has ended ({run.status.value}); start a new one")
        control = RunControl()
        self._active[run.id] = control
        stopped_early = self._stopped_early.pop(run.id, False)
        stopped_all = stops_seen is not None and stops_seen != self.stop_all_count
        if stopped_early or stopped_all:
            control.stop()  # it ends "stopped before it started", as a stop during prepare
        events = _RunEvents(
            self._events(run, prepare, control), lambda: self._release(run.id, control)
        )
        return RunHandle(run, control, events)

    def start(self, run: RunView, planner: Planner) -> AsyncGenerator[TaskLoopEvent, None]:
        """`admit` with a planner at hand; the run's events."""

        async def ready(_: RunView) -> Planner:
            return planner

        return self.admit(run, ready).events

    async def _events(
        self, run: RunView, prepare: Prepare, control: RunControl
    ) -> AsyncGenerator[TaskLoopEvent, None]:
        try:
            ended: RunView | None = None
            try:
                planner = await control.guard(prepare(run))
            except StopRequested:
                ended = await self._never_started(run, "stopped before it started")
            except asyncio.CancelledError:
                await self._never_started(run, "the viewer went away before it started")
                raise
            except RefusedToStart:
                raise
            except Exception as error:  # noqa: BLE001 - a fault ends the run, said in one line
                log.exception("preparing run %s failed", run.id)
                why = f"unexpected fault before it started: {_describe(error)}"
                ended = await self._never_started(run, why, failed=True)
            if ended is not None:
                # the same shape as every run (and its replay): run_started, run_finished
                self._release(run.id, control)
                bracket: tuple[TaskLoopEvent, ...] = (RunStarted(run), RunFinished(ended))
                for event in bracket:
                    self._tell(event)
                    yield event
                return
            deps = LoopDeps.for_run(
                self.services, planner, lambda: f"{run.id}-{next(self._approval_ids)}"
            )
            try:
                async with aclosing(run_task_loop(run, deps, control)) as events:
                    async for event in events:
                        if isinstance(event, RunFinished):
                            self._release(run.id, control)
                        self._tell(event)
                        yield event
            finally:
                await close_planner(planner)
        finally:
            self._release(run.id, control)

    async def _never_started(self, run: RunView, why: str, *, failed: bool = False) -> RunView:
        """Store a run that ended while it was being prepared: it never acted."""
        self.services.permissions.revoke_run(run.id)
        final = run.with_(
            status=RunStatus.FAILED if failed else RunStatus.STOPPED,
            stop_reason=StopReason.ERROR if failed else StopReason.USER_STOP,
            message=why,
            finished_at=utcnow(),
        )
        await self.services.repo.save_run(final)
        return final

    def relay(self, event: TaskLoopEvent) -> None:
        """Tell the listeners an event of a run of another process that asks a person here
        (the app shows a `desktop-agent mcp` call's approval in its dialog)."""
        self._tell(event)

    def _tell(self, event: TaskLoopEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    def _release(self, run_id: str, control: RunControl) -> None:
        if self._active.get(run_id) is control:
            del self._active[run_id]

    async def run(self, run: RunView, planner: Planner) -> RunView:
        """Run to the end without a viewer; the final run view."""
        final = run
        async with aclosing(self.start(run, planner)) as events:
            async for event in events:
                if isinstance(event, RunFinished):
                    final = event.run
        return final

    def stop(self, run_id: str) -> bool:
        """Stop the active run `run_id`; whether it was active. A run not admitted yet is
        remembered: if it is admitted after all, it ends at once."""
        control = self._active.get(run_id)
        if control is None:
            self._stopped_early[run_id] = True
            while len(self._stopped_early) > STOPPED_EARLY_KEPT:
                self._stopped_early.popitem(last=False)
            return False
        control.stop()
        return True

    def pause(self, run_id: str, reason: PauseReason = "request") -> bool:
        """Pause the active run `run_id` at its next pause point; whether it was active.
        `reason` travels on its run_paused event ("user": the user took over)."""
        control = self._active.get(run_id)
        if control is None:
            return False
        control.pause(reason)
        return True

    def resume(self, run_id: str) -> bool:
        control = self._active.get(run_id)
        if control is None:
            return False
        control.resume()
        return True

    def stop_all(self) -> int:
        """Stop every active run and revoke every task-level grant; how many runs were stopped."""
        self.stop_all_count += 1
        controls = list(self._active.values())
        for control in controls:
            control.stop()
        self.services.permissions.revoke_all_task_grants()
        return len(controls)


async def close_planner(planner: Planner) -> None:
    """A planner with a client of its own (connections, a thread) lets it go with the run."""
    aclose = getattr(planner, "aclose", None)
    if aclose is None:
        return
    try:
        await aclose()
    except Exception:  # noqa: BLE001 - the run's outcome stands; the leak is logged
        log.exception("closing the planner failed")


def _describe(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class _RunEvents(AsyncGenerator[TaskLoopEvent, None]):
    """A started run's events. Closing them before the first event still frees the run id.

    The body of an async generator only runs once it is iterated, so a consumer that
    goes away before that (a client that disconnects at once) would otherwise leave the
    run marked active for good. Such a run never ran: it stays as it was (queued).
    """

    def __init__(
        self, events: AsyncGenerator[TaskLoopEvent, None], release: Callable[[], None]
    ) -> None:
        self._events = events
        self._release = release

    async def asend(self, value: None) -> TaskLoopEvent:
        return await self._events.asend(value)

    async def athrow(self, typ: Any, val: Any = None, tb: Any = None) -> TaskLoopEvent:
        if val is None and tb is None:
            return await self._events.athrow(typ)
        return await self._events.athrow(typ, val, tb)

    async def aclose(self) -> None:
        try:
            await self._events.aclose()
        finally:
            self._release()
