"""TaskRunnerService: starts runs, knows which are active, and stops, pauses or resumes them."""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import replace
from typing import Any

from desktop_agent.core.control import RunControl
from desktop_agent.core.errors import AlreadyRunning, RefusedToStart, RunNotFound
from desktop_agent.core.events import RunFinished, TaskLoopEvent
from desktop_agent.core.loop import LoopDeps, RunnerServices, run_task_loop
from desktop_agent.core.models import RunView, TaskSpec
from desktop_agent.core.ports import Planner

__all__ = ["RunnerServices", "TaskRunnerService"]


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

    def start(self, run: RunView, planner: Planner) -> AsyncGenerator[TaskLoopEvent, None]:
        """Register the run as active now and return its events; iterate them to run it."""
        if run.id in self._active:
            raise AlreadyRunning(f"run {run.id} is running already")
        if run.status.is_terminal:
            raise RefusedToStart(f"run {run.id} has ended ({run.status.value}); start a new one")
        control = RunControl()
        self._active[run.id] = control
        return _RunEvents(
            self._events(run, planner, control), lambda: self._release(run.id, control)
        )

    async def _events(
        self, run: RunView, planner: Planner, control: RunControl
    ) -> AsyncGenerator[TaskLoopEvent, None]:
        deps = LoopDeps.for_run(
            self.services, planner, lambda: f"{run.id}-{next(self._approval_ids)}"
        )
        try:
            async with aclosing(run_task_loop(run, deps, control)) as events:
                async for event in events:
                    if isinstance(event, RunFinished):
                        self._release(run.id, control)
                    for listener in list(self._listeners):
                        listener(event)
                    yield event
        finally:
            self._release(run.id, control)

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
        control = self._active.get(run_id)
        if control is None:
            return False
        control.stop()
        return True

    def pause(self, run_id: str) -> bool:
        control = self._active.get(run_id)
        if control is None:
            return False
        control.pause()
        return True

    def resume(self, run_id: str) -> bool:
        control = self._active.get(run_id)
        if control is None:
            return False
        control.resume()
        return True

    def stop_all(self) -> int:
        """Stop every active run and revoke every task-level grant; how many runs were stopped."""
        controls = list(self._active.values())
        for control in controls:
            control.stop()
        self.services.permissions.revoke_all_task_grants()
        return len(controls)


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
