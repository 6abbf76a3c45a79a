"""Crash recovery: runs left active by a process that is gone end as interrupted / crash.

The rule. While a run is running or paused its row holds its owner: the pid and
start time of the process that saved it (`owner_pid`, `owner_started`). Opening
the store marks an active run interrupted / crash when

- no owner is stored, or
- no process with that pid lives (a zombie counts as gone), or
- a process with that pid lives but started at another time (the pid was reused), or
- the owner is the opening process itself: a process opens its data dir once, so
  a run it left active in a store it had closed has nothing driving it any more.

A run owned by another live process (the app while a CLI run lists the history,
or the other way round) is left alone. Marked runs keep every stored step; steps
still `running` become `skipped` with the error "interrupted", as do the `running` steps
of runs that ended (a store that failed mid-step stored the run's end but not the step's).
"""

from __future__ import annotations

from datetime import datetime

import peewee

from desktop_agent.core.models import RunStatus, StepStatus, StopReason
from desktop_agent.store.process import ProcessIdentity, is_alive
from desktop_agent.store.tables import Tables, time_to_db

CRASH_MESSAGE = "the process ended while the run was active"
_ACTIVE_OR_QUEUED = (RunStatus.RUNNING.value, RunStatus.PAUSED.value, RunStatus.QUEUED.value)
STEP_ERROR = "interrupted"


def owner_is_gone(pid: int | None, started: str | None, me: ProcessIdentity) -> bool:
    if pid is None or pid == me.pid:
        return True
    return not is_alive(ProcessIdentity(pid, started or ""))


def recover_interrupted(
    db: peewee.SqliteDatabase, tables: Tables, me: ProcessIdentity, now: datetime
) -> list[str]:
    """Mark the active runs whose owner is gone, in one IMMEDIATE transaction; their ids."""
    runs, steps = tables.runs, tables.steps
    active = (RunStatus.RUNNING.value, RunStatus.PAUSED.value)
    with db.atomic("IMMEDIATE"):
        rows = runs.select(runs.c.id, runs.c.owner_pid, runs.c.owner_started).where(
            runs.c.status.in_(active)
        )
        gone = [
            row["id"] for row in rows if owner_is_gone(row["owner_pid"], row["owner_started"], me)
        ]
        stamp = time_to_db(now)
        _close_steps_of_ended_runs(tables, stamp)
        if not gone:
            return []
        runs.update(
            {
                runs.c.status: RunStatus.INTERRUPTED.value,
                runs.c.stop_reason: StopReason.CRASH.value,
                runs.c.finished_at: stamp,
                runs.c.message: CRASH_MESSAGE,
                runs.c.owner_pid: None,
                runs.c.owner_started: None,
            }
        ).where(runs.c.id.in_(gone)).execute()
        steps.update(
            {
                steps.c.status: StepStatus.SKIPPED.value,
                steps.c.error: STEP_ERROR,
                steps.c.finished_at: peewee.fn.COALESCE(steps.c.finished_at, stamp),
            }
        ).where(steps.c.run_id.in_(gone) & (steps.c.status == StepStatus.RUNNING.value)).execute()
    return gone


def _close_steps_of_ended_runs(tables: Tables, stamp: str | None) -> None:
    """A run whose end was stored while the store could not store its last step (the disk
    filled up mid-step) leaves that step `running`; nothing drives it any more."""
    runs, steps = tables.runs, tables.steps
    ended = runs.select(runs.c.id).where(runs.c.status.not_in(_ACTIVE_OR_QUEUED))
    steps.update(
        {
            steps.c.status: StepStatus.SKIPPED.value,
            steps.c.error: STEP_ERROR,
            steps.c.finished_at: peewee.fn.COALESCE(steps.c.finished_at, stamp),
        }
    ).where(steps.c.run_id.in_(ended) & (steps.c.status == StepStatus.RUNNING.value)).execute()
