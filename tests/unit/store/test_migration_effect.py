"""Schema v2: steps get an `effect` column; a v1 store is migrated and keeps its rows."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from desktop_agent.core.models import Effect, StepKind, StepStatus, StepView, TaskSpec
from desktop_agent.store import SqliteRunRepository
from desktop_agent.store.db import DB_NAME, MIGRATIONS

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


async def test_a_v1_store_is_migrated_and_its_old_steps_have_no_effect(tmp_path: Path) -> None:
    with SqliteRunRepository.open(tmp_path, migrations=MIGRATIONS[:1]) as old:
        assert old.schema_version_sync() == 1
        await old.create_run(TaskSpec("before the upgrade"), run_id="r1")
    # a step row as a v1 build wrote it
    with sqlite3.connect(tmp_path / DB_NAME) as con:
        con.execute(
            "INSERT INTO steps (run_id, seq, turn, kind, status, tool, started_at) "
            "VALUES ('r1', 1, 1, 'action', 'ok', 'click', ?)",
            (T0.isoformat(),),
        )
    con.close()

    with SqliteRunRepository.open(tmp_path) as new:
        assert new.schema_version_sync() == len(MIGRATIONS) == 2
        step = StepView("r1", 2, 2, StepKind.ACTION, StepStatus.OK, T0, tool="click")
        await new.save_step(step.with_(effect=Effect.NO_CHANGE))
        stored = await new.list_steps("r1")
    assert [(s.seq, s.tool, s.effect) for s in stored] == [
        (1, "click", None),
        (2, "click", Effect.NO_CHANGE),
    ]
