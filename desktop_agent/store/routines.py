"""The routines table: saved routines with their grants and schedule (core/routine.py)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from desktop_agent.core.routine import (
    Routine,
    RoutineError,
    Schedule,
    routine_from_file,
    routine_to_file,
)
from desktop_agent.store.tables import Tables, columns_of, time_to_db


def _row(routine: Routine, now: datetime) -> dict[str, Any]:
    return {
        "name": routine.name,
        "body": json.dumps(routine_to_file(routine, local=True), ensure_ascii=False),
        "grants": json.dumps(list(routine.grants)),
        "schedule": json.dumps(routine.schedule.to_json()) if routine.schedule else None,
        "created_at": time_to_db(routine.created_at),
        "updated_at": time_to_db(now),
    }


def _from_row(row: dict[str, Any]) -> Routine:
    routine = routine_from_file(json.loads(row["body"]), source=f"stored routine {row['name']!r}",
                                local=True)  # fmt: skip
    schedule = json.loads(row["schedule"]) if row["schedule"] else None
    return routine.with_(
        grants=tuple(json.loads(row["grants"])),
        schedule=Schedule(schedule["at"], bool(schedule["weekdays"])) if schedule else None,
    )


def save_routine(tables: Tables, routine: Routine, now: datetime, *, replace: bool) -> None:
    """Insert `routine`; with `replace` an existing one of that name is overwritten (its
    grants and schedule are the new routine's), else RoutineError."""
    table = tables.routines
    row = columns_of(table, _row(routine, now))
    if replace:
        table.insert(row).on_conflict_replace().execute()
        return
    if list(table.select(table.c.name).where(table.c.name == routine.name)):
        raise RoutineError(f"a routine named {routine.name!r} exists already")
    table.insert(row).execute()


def get_routine(tables: Tables, name: str) -> Routine | None:
    table = tables.routines
    rows = list(table.select().where(table.c.name == name))
    return _from_row(rows[0]) if rows else None


def list_routines(tables: Tables) -> list[Routine]:
    table = tables.routines
    return [_from_row(row) for row in table.select().order_by(table.c.name)]


def delete_routine(tables: Tables, name: str) -> bool:
    table = tables.routines
    return bool(table.delete().where(table.c.name == name).execute())


def update_routine(tables: Tables, name: str, now: datetime, **changes: Any) -> Routine:
    """Change a stored routine's grants or schedule; RoutineError when there is none."""
    routine = get_routine(tables, name)
    if routine is None:
        raise RoutineError(f"no routine named {name!r}")
    changed = routine.with_(**changes)
    save_routine(tables, changed, now, replace=True)
    return changed
