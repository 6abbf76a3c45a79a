"""A store that fails while a run ends (disk full, database locked): the run still ends —
run_finished is emitted, its grants are revoked — and the next start marks it ended."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.control import RunControl
from desktop_agent.core.events import RunFinished, RunStarted, StepFinished, TaskLoopEvent
from desktop_agent.core.loop import LoopDeps, run_task_loop
from desktop_agent.core.models import (
    ApprovalDecision,
    RunStatus,
    RunView,
    StepStatus,
    StopReason,
    StoreWrite,
    TaskSpec,
)
from desktop_agent.core.permissions import Permissions
from desktop_agent.store import SqliteRunRepository
from desktop_agent.store.process import ProcessIdentity, current_process, process_identity
from tests.fakes import FakeExecutor, FakeObserver, ScriptedGate, ScriptedPlanner, done, tool

TOOLS = ("click", "wait")


class FailingStore(SqliteRunRepository):
    """The real store, whose writes fail at chosen moments, as a full disk or a database
    locked by another process would make them fail."""

    fail_run_end = False
    #: writes numbered from 1; those from `fail_from` on fail, `fail_times` of them
    fail_from: int | None = None
    fail_times = 1_000_000
    writes_asked = 0

    async def save_run(self, run: RunView) -> None:
        if self.fail_run_end and run.status.is_terminal:
            raise sqlite3.OperationalError("database or disk is full")
        await super().save_run(run)

    async def write(self, writes: Sequence[StoreWrite]) -> None:
        self.writes_asked += 1
        if self.fail_run_end and any(
            isinstance(item, RunView) and item.status.is_terminal for item in writes
        ):
            raise sqlite3.OperationalError("database or disk is full")
        start = self.fail_from
        if start is not None and start <= self.writes_asked < start + self.fail_times:
            raise sqlite3.OperationalError("database is locked")
        await super().write(writes)


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
        # 1: observe started; 2: observed, decide started; from 3 on (the decision, the
        # action started, before the person is asked) every write fails
        store.fail_from = 3
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
    # nothing that was not stored was told: the decision's end never was
    told = [(e.step.kind.value, e.step.status) for e in events if isinstance(e, StepFinished)]
    assert told == [("observe", StepStatus.OK)]
    with SqliteRunRepository.open(tmp_path) as reopened:
        assert list(reopened.recovered) == [run.id]
        # the decide row whose end could not be stored is closed by the reopen
        steps = reopened.list_steps_sync(run.id)
        assert [(step.kind.value, step.status) for step in steps] == [
            ("observe", StepStatus.OK),
            ("decide", StepStatus.SKIPPED),
        ]
        assert steps[-1].error == "interrupted"


async def test_a_write_that_failed_once_is_stored_with_the_runs_end(tmp_path: Path) -> None:
    """A write refused once (the database locked by another process for longer than the busy
    timeout) ends the run failed; the run's end stores what that write held, so the history
    is whole: the decision, the action skipped, the run failed."""
    store = open_failing(tmp_path)
    try:
        store.fail_from, store.fail_times = 3, 1
        run, events = await run_once(
            store, Permissions(), ScriptedPlanner([tool("click", x=1, y=1), done()])
        )
        finished = events[-1]
        assert isinstance(finished, RunFinished)
        assert (finished.run.status, finished.run.stop_reason) == (
            RunStatus.FAILED,
            StopReason.ERROR,
        )
        assert "database is locked" in finished.run.message
        assert "not stored" not in finished.run.message
        stored = await store.get_run(run.id)
        assert stored is not None and stored.status is RunStatus.FAILED
        steps = await store.list_steps(run.id)
    finally:
        store.close()
    assert [(step.kind.value, step.status) for step in steps] == [
        ("observe", StepStatus.OK),
        ("decide", StepStatus.OK),
        ("action", StepStatus.SKIPPED),
    ]
    # every stored step was told, in the order stored, and nothing else
    told = [e.step for e in events if isinstance(e, StepFinished)]
    assert told == steps


async def test_a_store_failing_at_the_start_still_tells_start_and_end(tmp_path: Path) -> None:
    store = open_failing(tmp_path)
    try:
        run = await store.create_run(TaskSpec("x", allowed_tools=TOOLS))

        async def broken(run: RunView) -> None:
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
