"""TaskRunnerService: starts runs, knows which are active, and stops, pauses or resumes them."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any

from desktop_agent.core.control import RunControl
from desktop_agent.core.deps import LoopDeps, RunnerServices
from desktop_agent.core.errors import AlreadyRunning, RefusedToStart, RunNotFound, StopRequested
from desktop_agent.core.events import PauseReason, RunFinished, RunStarted, TaskLoopEvent
from desktop_agent.core.loop import run_task_loop
from desktop_agent.core.models import (
    RunStatus,
    RunView,
    StopReason,
    TaskSpec,
    parse_monitor,
    utcnow,
)
from desktop_agent.core.ports import MonitorChooser, Planner

__all__ = [
    "Find",
    "Prepare",
    "RunHandle",
    "RunnerServices",
    "TaskRunnerService",
    "close_planner",
]

log = logging.getLogger(__name__)

#: the run as it starts, found inside the run: its queued view made in memory, or read from
#: the store (a queued run the API starts, a routine looked up)
Find = Callable[[], Awaitable[RunView]]
#: what a run needs before its first turn: the model checked, its planner made
Prepare = Callable[[RunView], Awaitable[Planner]]


@dataclass(frozen=True, slots=True)
class RunHandle:
    """A run the runner has admitted: active (stoppable) from its first instant.

    Attributes:
        run_id: the run's id (its view is found inside the run: `run_started` carries it).
        control: its pause / resume / stop.
        events: iterate to run it; closing them ends it stopped / user_stop.
    """

    run_id: str
    control: RunControl
    events: AsyncGenerator[TaskLoopEvent, None]


class TaskRunnerService:
    """The active runs of this process, by id.

    `start` refuses a run id that is active (AlreadyRunning) and never replaces
    the active entry; the events it returns belong to the caller, whose leaving
    ends the run stopped / user_stop.
    """

    def __init__(self, services: RunnerServices) -> None:
        self.services = services
        self._active: dict[str, RunControl] = {}
        #: model work that is not a run (a calibration, a model check): stop_all stops it too
        self._held: set[RunControl] = set()
        #: how many stops of held work there have been (each stop_all, each stop_held): work
        #: asked for before a stop that is held only after it compares (Host: `asked_at`)
        self.stops = 0
        self._approval_ids = itertools.count(1)
        self._listeners: list[Callable[[TaskLoopEvent], None]] = []

    @property
    def active_ids(self) -> tuple[str, ...]:
        return tuple(self._active)

    def is_active(self, run_id: str) -> bool:
        return run_id in self._active

    def subscribe(self, listener: Callable[[TaskLoopEvent], None]) -> Callable[[], None]:
        """Hear every event of every run (the tray, the API's instance view)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def create(self, spec: TaskSpec, run_id: str | None = None) -> RunView:
        registry = self.services.registry
        allowed = spec.allowed_tools or registry.offered_names()
        unknown = registry.unknown(allowed)
        if unknown:
            raise RefusedToStart(f"unknown tool(s): {', '.join(unknown)}")
        allowed_spec = replace(spec, allowed_tools=tuple(allowed))
        return await self.services.repo.create_run(allowed_spec, run_id=run_id)

    async def load(self, run_id: str) -> RunView:
        run = await self.services.repo.get_run(run_id)
        if run is None:
            raise RunNotFound(f"no run {run_id!r}")
        return run

    def admit(self, run: RunView, prepare: Prepare) -> RunHandle:
        """`admit_id` for a run whose queued view is at hand (made in memory; the loop stores
        it). RefusedToStart at once for a run that has ended."""
        if run.status.is_terminal:
            raise RefusedToStart(f"run {run.id} has ended ({run.status.value}); start a new one")

        async def found() -> RunView:
            return run

        return self.admit_id(run.id, found, prepare)

    def admit_id(self, run_id: str, find: Find, prepare: Prepare) -> RunHandle:
        """Register `run_id` as active now and return its handle; iterate its events to run it.

        The one way a run starts. From this instant `stop`, `stop_all`, `pause` and `resume`
        reach the run, so the caller admits it in the same step of the loop in which the user
        asked for it: every stop that lands after that reaches it, and no stop is remembered
        for a run not admitted yet.

        Inside the run, `find` gives its queued view (a store read: the API's queued run, a
        routine looked up) and then `prepare` (the model and vision checks, the planner) is
        awaited, raced against a stop like every await of the loop. A stop that lands while
        `find` reads the store takes effect the moment the store answered (the read is not
        cancelled: its view is what the run is stored stopped as); either way the run ends
        stopped / user_stop and never asks the model nor sends input. What `find` raises
        (no such run, an ended one, an unknown routine) and a `RefusedToStart` from
        `prepare` are raised from the events: nothing is stored, the run stays as it was.
        """
        if run_id in self._active:
            raise AlreadyRunning(f"run {run_id} is running already")
        control = RunControl()
        self._active[run_id] = control
        events = _RunEvents(
            self._events(run_id, find, prepare, control), lambda: self._release(run_id, control)
        )
        return RunHandle(run_id, control, events)

    def start(self, run: RunView, planner: Planner) -> AsyncGenerator[TaskLoopEvent, None]:
        """`admit` with a planner at hand; the run's events."""

        async def ready(_: RunView) -> Planner:
            return planner

        return self.admit(run, ready).events

    async def _events(
        self, run_id: str, find: Find, prepare: Prepare, control: RunControl
    ) -> AsyncGenerator[TaskLoopEvent, None]:
        try:
            run = await find()
            ended: RunView | None = None
            try:
                # a stop that landed while the store answered raises here at once
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
            observer = self.services.observer
            if run.monitor and isinstance(observer, MonitorChooser):
                # the run's own monitor (API, MCP, run --monitor) before the settings'
                deps.observer = observer.showing(parse_monitor(run.monitor))
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
            self._release(run_id, control)

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
        """Stop the active run `run_id` (admitted: being prepared, running or paused); whether
        it was active."""
        control = self._active.get(run_id)
        if control is None:
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

    def hold(self, control: RunControl) -> Callable[[], None]:
        """Have every `stop_all` (and `stop_held`) stop `control` too, until the returned
        release is called: for model work that is not a run (a calibration), so each stop
        path that reaches the runs reaches it. It is not a run: `stop_all` does not count it."""
        self._held.add(control)
        return lambda: self._held.discard(control)

    @property
    def busy(self) -> bool:
        """Whether a run is active or held work goes on."""
        return bool(self._active or self._held)

    def stop_held(self) -> int:
        """Stop the held work (not the runs); how much was going on. Counted in `stops`."""
        self.stops += 1
        held = list(self._held)
        for control in held:
            control.stop()
        return len(held)

    def stop_all(self) -> int:
        """Stop every active run and every held piece of work (`hold`), and revoke every
        task-level grant; how many *runs* were stopped."""
        controls = list(self._active.values())
        for control in controls:
            control.stop()
        self.stop_held()
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
