"""A small builder of a TaskRunnerService over the fakes, and helpers to wait on events."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.events import PauseReason, TaskLoopEvent
from desktop_agent.core.models import ApprovalDecision, Policy, RunView, TaskSpec, ToolResult
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.ports import Planner, ToolContext, ToolExecutor
from desktop_agent.core.runner import RunnerServices, TaskRunnerService
from desktop_agent.core.tools import ToolSpec
from tests.fakes import FakeExecutor, FakeObserver, ManualClock, MemoryRepository, ScriptedGate

#: a bound on every wait for an event, so a broken run fails its test instead of hanging it
LIMIT_S = 5.0


@dataclass
class Harness:
    """A runner over fakes, with every fake in reach of the test."""

    repo: MemoryRepository
    observer: FakeObserver
    executor: FakeExecutor
    gate: ScriptedGate
    clock: ManualClock
    breakers: BreakerBoard
    permissions: Permissions
    runner: TaskRunnerService
    events: dict[str, list[TaskLoopEvent]] = field(default_factory=dict)

    async def create(
        self,
        goal: str = "do the thing",
        *,
        max_steps: int = 20,
        max_failures: int = 3,
        allowed_tools: Iterable[str] = ("wait", "click", "type_text", "launch_app", "hotkey"),
    ) -> RunView:
        spec = TaskSpec(
            goal=goal,
            max_steps=max_steps,
            max_failures=max_failures,
            allowed_tools=tuple(allowed_tools),
        )
        return await self.runner.create(spec)

    async def collect(self, run: RunView, planner: Planner) -> list[TaskLoopEvent]:
        """Run to the end as the one consumer; every event, in order."""
        events = self.events.setdefault(run.id, [])
        async for event in self.runner.start(run, planner):
            events.append(event)
        return events

    def stored(self, run_id: str) -> RunView:
        return self.repo.runs[run_id]


def make_harness(
    *,
    answers: Iterable[ApprovalDecision | None | asyncio.Future[ApprovalDecision]] = (),
    policies: Mapping[str, Policy] | None = None,
    approval_timeout_s: float = 5.0,
    observer: FakeObserver | None = None,
    **services: Any,
) -> Harness:
    """`services`: more RunnerServices fields (focus, deadlines); `observer`: a FakeObserver
    of the test's own (one that says more of the screen)."""
    repo = MemoryRepository()
    observer = observer or FakeObserver()
    executor = FakeExecutor()
    gate = ScriptedGate(answers)
    clock = ManualClock()
    breakers = BreakerBoard(clock=clock)
    permissions = Permissions(policies)
    runner = TaskRunnerService(
        RunnerServices(
            repo=repo,
            observer=observer,
            executor=executor,
            gate=gate,
            registry=builtin_registry(),
            breakers=breakers,
            permissions=permissions,
            approval_timeout_s=approval_timeout_s,
            **services,
        )
    )
    return Harness(repo, observer, executor, gate, clock, breakers, permissions, runner)


@pytest.fixture
def harness() -> Harness:
    return make_harness()


class Consumer:
    """Iterates a run's events in a task of its own and lets the test wait for one of them."""

    def __init__(self, events: AsyncIterator[TaskLoopEvent]) -> None:
        self.events: list[TaskLoopEvent] = []
        self._source = events
        self._changed = asyncio.Condition()
        self.task = asyncio.create_task(self._consume())

    async def _consume(self) -> None:
        async for event in self._source:
            async with self._changed:
                self.events.append(event)
                self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[TaskLoopEvent], bool]) -> TaskLoopEvent:
        """The first event (seen so far or later) that satisfies `predicate`."""

        async def seen() -> TaskLoopEvent:
            async with self._changed:
                while True:
                    for event in self.events:
                        if predicate(event):
                            return event
                    await self._changed.wait()

        return await asyncio.wait_for(seen(), LIMIT_S)

    async def wait_type(self, type_: str) -> TaskLoopEvent:
        return await self.wait_for(lambda event: event.type == type_)

    async def finished(self) -> list[TaskLoopEvent]:
        await asyncio.wait_for(self.task, LIMIT_S)
        return self.events

    def types(self) -> list[str]:
        return [event.type for event in self.events]


class Blocker:
    """A coroutine the test controls: records that it was entered, then awaits forever
    (or until `release`), remembering whether it was cancelled."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False
        self.completed = False

    async def block(self) -> None:
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        self.completed = True


class TakeOver:
    """A pause asked for from the input thread (the user taking over while keys go out):
    calling it pauses `run_id` on the run's event loop and waits until the pause has landed,
    so the next key is looked at with the run paused. Make it on the event loop."""

    def __init__(self, h: Harness, reason: PauseReason = "user") -> None:
        self.run_id = ""
        self._h = h
        self._reason: PauseReason = reason
        self._loop = asyncio.get_running_loop()
        self._landed = threading.Event()

    def _pause(self) -> None:
        self._h.runner.pause(self.run_id, self._reason)
        self._landed.set()

    def __call__(self) -> None:
        self._landed.clear()
        self._loop.call_soon_threadsafe(self._pause)
        self._landed.wait(LIMIT_S)


def through(h: Harness, executor: ToolExecutor, *tools: str) -> None:
    """The harness's `tools` run by `executor` (the real DesktopExecutor), with the loop's
    own ToolContext."""
    registry = h.runner.services.registry

    for name in tools:
        spec = registry.get(name)

        async def handler(
            args: BaseModel, context: ToolContext, spec: ToolSpec = spec
        ) -> ToolResult:
            return await executor.execute(spec, args, context)

        h.executor.handlers[name] = handler
