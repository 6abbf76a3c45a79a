"""A store that fails while a run ends (disk full, database locked): the run still ends —
run_finished is emitted, its grants are revoked — and the next start marks it ended."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.control import RunControl
from desktop_agent.core.events import RunFinished, RunStarted, TaskLoopEvent
from desktop_agent.core.loop import LoopDeps, run_task_loop
from desktop_agent.core.models import (
    ApprovalDecision,
    RunStatus,
    RunView,
    StepStatus,
    StopReason,
    TaskSpec,
)
from desktop_agent.core.permissions import Permissions
from desktop_agent.store import SqliteRunRepository
from desktop_agent.store.process import ProcessIdentity, current_process, process_identity
from tests.fakes import FakeExecutor, FakeObserver, ScriptedGate, ScriptedPlanner, done, tool

TOOLS = ("click", "wait")


class FailingStore(SqliteRunRepository):
    """The real store, whose writes fail from a chosen moment on, like a full disk would."""

    fail_run_end = False
    fail_steps_after: int | None = None
    steps_saved = 0

    async def save_run(self, run: RunView) -> None:
        if self.fail_run_end and run.status.is_terminal:
            raise sqlite3.OperationalError("database or disk is full")
        await super().save_run(run)

    async def save_step(self, step: Any) -> None:
        if self.fail_steps_after is not None and self.steps_saved >= self.fail_steps_after:
            raise sqlite3.OperationalError("database is locked")
        self.steps_saved += 1
        await super().save_step(step)


def open_failing(data_dir: Path, owner: ProcessIdentity | None = None) -> FailingStore:
    store = SqliteRunRepository.open(data_dir, owner=owner)
    store.__class__ = FailingStore
    assert isinstance(store, FailingStore)
    return store


async def run_once(
    store: SqliteRunRepository, permissions: Permissions, planner: ScriptedPlanner
) -> tuple[RunView, list[TaskLoopEvent]]:
    run = await store.create_run(TaskSpec("click once", allowed_tools=TOOLS))
    deps = LoopDeps(
        repo=store,
        observer=FakeObserver(),
        executor=FakeExecutor(),
        gate=ScriptedGate([ApprovalDecision.RUN]),
        registry=builtin_registry(),
        breakers=BreakerBoard(),
        permissions=permissions,
        planner=planner,
    )
    events = [event async for event in run_task_loop(run, deps, RunControl())]
    return run, events


async def test_a_store_failing_at_the_end_still_ends_the_run_and_the_reopen_marks_it(
    tmp_path: Path,
) -> None:
    permissions = Permissions()
    store = open_failing(tmp_path)
    try:
        store.fail_run_end = True
        run, events = await run_once(
            store, permissions, ScriptedPlanner([tool("click", x=1, y=1), done()])
        )
        finished = events[-1]
        assert isinstance(finished, RunFinished)
        assert (finished.run.status, finished.run.stop_reason) == (
            RunStatus.COMPLETED,
            StopReason.DONE,
        )
        assert "the end was not stored: OperationalError: database or disk is full" in (
            finished.run.message
        )
        # the grant given during the run is gone although the store failed
        assert permissions.task_grants(run.id) == frozenset()
        stored = await store.get_run(run.id)
        assert stored is not None and stored.status is RunStatus.RUNNING
    finally:
        store.close()

    # the next start of this program (here: this process opening the store again)
    with SqliteRunRepository.open(tmp_path) as reopened:
        assert list(reopened.recovered) == [run.id]
        ended = reopened.get_run_sync(run.id)
        assert ended is not None
        assert (ended.status, ended.stop_reason) == (RunStatus.INTERRUPTED, StopReason.CRASH)


async def test_a_row_left_running_by_a_dead_process_is_marked_by_another_process(
    tmp_path: Path, dead_pid: int
) -> None:
    store = open_failing(tmp_path, owner=ProcessIdentity(dead_pid, "gone"))
    try:
        store.fail_run_end = True
        run, events = await run_once(store, Permissions(), ScriptedPlanner([done()]))
        assert isinstance(events[-1], RunFinished)
    finally:
        store.close()
    with SqliteRunRepository.open(tmp_path) as reopened:
        assert list(reopened.recovered) == [run.id]


async def test_a_row_left_running_by_a_live_process_stays_running_for_the_others(
    tmp_path: Path, live_process: Any
) -> None:
    owner = process_identity(live_process.pid)
    assert owner is not None and owner != current_process()
    store = open_failing(tmp_path, owner=owner)
    try:
        store.fail_run_end = True
        run, _ = await run_once(store, Permissions(), ScriptedPlanner([done()]))
    finally:
        store.close()
    # the owner lives on: a CLI listing the history must not declare its run dead
    with SqliteRunRepository.open(tmp_path) as other:
        assert list(other.recovered) == []
        assert other.get_run_sync(run.id).status is RunStatus.RUNNING  # type: ignore[union-attr]


async def test_a_store_failing_mid_run_ends_it_failed_with_run_finished(tmp_path: Path) -> None:
    permissions = Permissions()
    store = open_failing(tmp_path)
    try:
        store.fail_steps_after = 3  # observe started, observe ended, decide started
        run, events = await run_once(
            store, permissions, ScriptedPlanner([tool("click", x=1, y=1), done()])
        )
    finally:
        store.close()
    assert isinstance(events[0], RunStarted)
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.run.status, finished.run.stop_reason) == (RunStatus.FAILED, StopReason.ERROR)
    assert "database is locked" in finished.run.message
    with SqliteRunRepository.open(tmp_path) as reopened:
        stored = reopened.get_run_sync(run.id)
        assert stored is not None and stored.status is RunStatus.FAILED
        # the decide row whose end could not be stored is closed by the reopen
        steps = reopened.list_steps_sync(run.id)
        assert [(step.kind.value, step.status) for step in steps] == [
            ("observe", StepStatus.OK),
            ("decide", StepStatus.SKIPPED),
        ]
        assert steps[-1].error == "interrupted"


async def test_a_store_failing_at_the_start_still_tells_start_and_end(tmp_path: Path) -> None:
    store = open_failing(tmp_path)
    try:
        run = await store.create_run(TaskSpec("x", allowed_tools=TOOLS))

        async def broken(_run: RunView) -> None:
            raise sqlite3.OperationalError("disk I/O error")

        store.save_run = broken  # type: ignore[method-assign]
        planner = ScriptedPlanner([done()])
        deps = LoopDeps(
            repo=store,
            observer=FakeObserver(),
            executor=FakeExecutor(),
            gate=ScriptedGate(),
            registry=builtin_registry(),
            breakers=BreakerBoard(),
            permissions=Permissions(),
            planner=planner,
        )
        events = [event async for event in run_task_loop(run, deps, RunControl())]
    finally:
        store.close()
    assert [event.type for event in events] == ["run_started", "run_finished"]
    assert planner.requests == []
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert final.run.status is RunStatus.FAILED
    assert "cannot store the run: OperationalError: disk I/O error" in final.run.message
