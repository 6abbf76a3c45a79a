"""A real run on the real store that prints `ack <seq> <status>` for each step row stored,
once the write that held it has returned.

Run as `python -m tests.crash.worker DATA_DIR` from the repository root; the crash
tests kill it with SIGKILL at chosen points and then inspect the store.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.models import Policy, RunStatus, RunView, StepView, StoreWrite, TaskSpec
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.runner import RunnerServices, TaskRunnerService
from desktop_agent.store import SqliteRunRepository
from tests.fakes import FakeExecutor, FakeObserver, ScriptedGate, ScriptedPlanner, tool


class AckingRepository:
    """The real repository; each stored write is announced on stdout once it has returned."""

    def __init__(self, inner: SqliteRunRepository) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    async def write(self, writes: Sequence[StoreWrite]) -> None:
        await self.inner.write(writes)
        for item in writes:
            if isinstance(item, StepView):
                print(f"ack {item.seq} {item.status.value}", flush=True)

    async def save_run(self, run: RunView) -> None:
        await self.inner.save_run(run)
        if run.status is RunStatus.RUNNING and run.step_count == 0:
            print(f"run {run.id}", flush=True)


async def main(data_dir: Path) -> None:
    store = SqliteRunRepository.open(data_dir)
    repo = AckingRepository(store)
    registry = builtin_registry()
    runner = TaskRunnerService(
        RunnerServices(
            repo=repo,  # type: ignore[arg-type]
            observer=FakeObserver(),
            executor=FakeExecutor(),
            gate=ScriptedGate(),
            registry=registry,
            breakers=BreakerBoard(),
            permissions=Permissions({name: Policy.ALLOW for name in registry.names()}),
        )
    )
    run = await runner.create(TaskSpec("wait until killed", max_steps=1_000_000))
    planner = ScriptedPlanner([], then=tool("wait", seconds=0))
    await runner.run(run, planner)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
