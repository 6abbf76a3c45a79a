"""Crash recovery on open: runs whose owning process is gone end interrupted / crash."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from desktop_agent.core.models import (
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
    TaskSpec,
)
from desktop_agent.store import ProcessIdentity, SqliteRunRepository
from desktop_agent.store.process import current_process, process_identity
from desktop_agent.store.recovery import CRASH_MESSAGE

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
REOPENED_AT = datetime(2024, 6, 1, 8, 30, tzinfo=UTC)


def step(run_id: str, seq: int, status: StepStatus) -> StepView:
    return StepView(
        run_id=run_id,
        seq=seq,
        index=(seq + 2) // 3,
        kind=(StepKind.OBSERVE, StepKind.DECIDE, StepKind.ACTION)[(seq - 1) % 3],
        status=status,
        started_at=T0 + timedelta(seconds=seq),
        tool="wait",
        args={"seconds": 0},
        finished_at=None if status is StepStatus.RUNNING else T0 + timedelta(seconds=seq + 1),
    )


async def leave_runs(data_dir: Path, owner: ProcessIdentity) -> dict[str, RunView]:
    """Runs in every status saved by `owner`, with steps, as a process would leave them."""
    with SqliteRunRepository.open(data_dir, owner=owner) as store:
        runs = {}
        for status in (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.PAUSED, RunStatus.COMPLETED):
            run = await store.create_run(TaskSpec(f"{status.value} run"), run_id=status.value)
            if status is not RunStatus.QUEUED:
                run = run.with_(status=status, started_at=T0, step_count=1)
            if status is RunStatus.COMPLETED:
                run = run.with_(stop_reason=StopReason.DONE, finished_at=T0, message="done")
            await store.save_run(run)
            last = StepStatus.OK if status is RunStatus.COMPLETED else StepStatus.RUNNING
            for seq, step_status in enumerate((StepStatus.OK, StepStatus.FAILED, last), start=1):
                await store.save_step(step(run.id, seq, step_status))
            runs[run.id] = run
        return runs


async def test_runs_of_a_dead_process_become_interrupted_and_keep_their_steps(
    tmp_path: Path, dead_pid: int
) -> None:
    runs = await leave_runs(tmp_path, ProcessIdentity(dead_pid, "12345"))

    with SqliteRunRepository.open(tmp_path, now=lambda: REOPENED_AT) as store:
        assert sorted(store.recovered) == ["paused", "running"]
        for run_id in ("running", "paused"):
            run = await store.get_run(run_id)
            assert run == runs[run_id].with_(
                status=RunStatus.INTERRUPTED,
                stop_reason=StopReason.CRASH,
                finished_at=REOPENED_AT,
                message=CRASH_MESSAGE,
            )
            ok, failed, was_running = await store.list_steps(run_id)
            assert ok == step(run_id, 1, StepStatus.OK)
            assert failed == step(run_id, 2, StepStatus.FAILED)
            assert was_running == step(run_id, 3, StepStatus.RUNNING).with_(
                status=StepStatus.SKIPPED, error="interrupted", finished_at=REOPENED_AT
            )


async def test_recovery_leaves_queued_and_ended_runs_alone(tmp_path: Path, dead_pid: int) -> None:
    runs = await leave_runs(tmp_path, ProcessIdentity(dead_pid, "12345"))

    with SqliteRunRepository.open(tmp_path, now=lambda: REOPENED_AT) as store:
        for run_id in ("queued", "completed"):
            assert await store.get_run(run_id) == runs[run_id]
        assert [s.status for s in await store.list_steps("queued")] == [
            StepStatus.OK,
            StepStatus.FAILED,
            StepStatus.RUNNING,  # a queued run has no owner to lose
        ]


async def test_a_run_active_in_another_live_process_is_left_alone(
    tmp_path: Path, live_process: subprocess.Popen[bytes]
) -> None:
    owner = process_identity(live_process.pid)
    assert owner is not None
    runs = await leave_runs(tmp_path, owner)

    with SqliteRunRepository.open(tmp_path) as store:
        assert store.recovered == ()
        assert await store.get_run("running") == runs["running"]
        assert await store.get_run("paused") == runs["paused"]
        assert (await store.list_steps("running"))[-1].status is StepStatus.RUNNING

    assert live_process.stdin is not None
    live_process.stdin.close()
    live_process.wait(timeout=10)
    with SqliteRunRepository.open(tmp_path) as store:
        assert sorted(store.recovered) == ["paused", "running"]


async def test_a_reused_pid_does_not_keep_a_dead_owners_run_alive(
    tmp_path: Path, live_process: subprocess.Popen[bytes]
) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("process start times are read from /proc")
    await leave_runs(tmp_path, ProcessIdentity(live_process.pid, "started-long-ago"))

    with SqliteRunRepository.open(tmp_path) as store:
        assert sorted(store.recovered) == ["paused", "running"]


async def test_runs_this_process_left_active_are_recovered_when_it_reopens(
    tmp_path: Path,
) -> None:
    await leave_runs(tmp_path, current_process())

    with SqliteRunRepository.open(tmp_path) as store:
        assert sorted(store.recovered) == ["paused", "running"]


async def test_another_process_opening_the_store_leaves_our_active_run_alone(
    tmp_path: Path,
) -> None:
    with SqliteRunRepository.open(tmp_path) as store:
        run = await store.create_run(TaskSpec("long task"), run_id="ours")
        await store.save_run(run.with_(status=RunStatus.RUNNING, started_at=T0))

        other = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "import sys; from pathlib import Path;"
            "from desktop_agent.store import SqliteRunRepository as R;"
            "s = R.open(Path(sys.argv[1]));"
            "print(len(s.recovered), s.get_run_sync('ours').status.value); s.close()",
            str(tmp_path),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=Path(__file__).parents[3],
        )
        out, err = await asyncio.wait_for(other.communicate(), timeout=60)

        assert other.returncode == 0, err.decode()
        assert out.decode().split() == ["0", "running"]
        assert (await store.get_run("ours")) == run.with_(status=RunStatus.RUNNING, started_at=T0)


async def test_the_owner_is_stored_only_while_the_run_is_active(tmp_path: Path) -> None:
    seen = []
    with SqliteRunRepository.open(tmp_path) as store:
        run = await store.create_run(TaskSpec("g"), run_id="r")
        for status in (RunStatus.RUNNING, RunStatus.PAUSED, RunStatus.COMPLETED):
            await store.save_run(run.with_(status=status))
            with sqlite3.connect(tmp_path / "history.db") as con:
                seen.append(con.execute("SELECT owner_pid FROM runs").fetchone())

    assert seen == [(os.getpid(),), (os.getpid(),), (None,)]
