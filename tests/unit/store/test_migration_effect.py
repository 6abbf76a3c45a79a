"""Schema v2: steps get `effect`, runs their token totals and cost; a v1 store is migrated
and keeps its rows."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from desktop_agent.core.models import Effect, MonitorArea, StepKind, StepStatus, StepView
from desktop_agent.store import SqliteRunRepository
from desktop_agent.store.db import DB_NAME, MIGRATIONS

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def old_store(path: Path, version: int, *steps: str) -> None:
    """A store at schema `version` holding the run r1 and `steps` (each an INSERT whose one
    parameter is the time), as a build of that version wrote them."""
    with SqliteRunRepository.open(path, migrations=MIGRATIONS[:version]) as old:
        assert old.schema_version_sync() == version
    con = sqlite3.connect(path / DB_NAME)
    with con:
        con.execute(
            "INSERT INTO runs (id, goal, status, stop_reason, step_count, max_steps, "
            "max_failures, allowed_tools, model, base_url, created_at, message) VALUES "
            "('r1', 'before', 'completed', 'done', 1, 20, 3, '[]', 'm', '', ?, '')",
            (T0.isoformat(),),
        )
        for step in steps:
            con.execute(step, (T0.isoformat(),))
    con.close()


async def test_a_v1_store_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    # a run and a step as a v1 build wrote them
    old_store(
        tmp_path,
        1,
        "INSERT INTO steps (run_id, seq, turn, kind, status, tool, started_at) "
        "VALUES ('r1', 1, 1, 'action', 'ok', 'click', ?)",
    )
    with SqliteRunRepository.open(tmp_path) as new:
        assert new.schema_version_sync() == len(MIGRATIONS) >= 2
        run = await new.get_run("r1")
        assert run is not None
        assert (run.prompt_tokens, run.completion_tokens, run.tokens_estimated, run.cost) == (
            0,
            0,
            False,
            None,
        )
        await new.save_run(run.with_(prompt_tokens=10, completion_tokens=2, cost=0.25))
        step = StepView("r1", 2, 2, StepKind.ACTION, StepStatus.OK, T0, tool="click")
        await new.save_step(step.with_(effect=Effect.NO_CHANGE))
        stored = await new.list_steps("r1")
        again = await new.get_run("r1")
    assert [(s.seq, s.tool, s.effect) for s in stored] == [
        (1, "click", None),
        (2, "click", Effect.NO_CHANGE),
    ]
    assert again is not None and (again.prompt_tokens, again.cost) == (10, 0.25)


async def test_a_v4_store_gains_the_runs_model_profile_and_its_old_runs_had_none(
    tmp_path: Path,
) -> None:
    old_store(tmp_path, 4)
    with SqliteRunRepository.open(tmp_path) as new:
        assert new.schema_version_sync() == len(MIGRATIONS) >= 5
        run = await new.get_run("r1")
        assert run is not None and run.model_profile == ""
        await new.save_run(run.with_(model_profile="qwen3-vl"))
        again = await new.get_run("r1")
    assert again is not None and again.model_profile == "qwen3-vl"
    assert again.to_json()["model_profile"] == "qwen3-vl"


async def test_a_v5_store_gains_the_runs_monitor_and_its_old_runs_had_none(tmp_path: Path) -> None:
    old_store(tmp_path, 5)
    with SqliteRunRepository.open(tmp_path) as new:
        assert new.schema_version_sync() == len(MIGRATIONS) >= 6
        run = await new.get_run("r1")
        assert run is not None and run.monitor == ""
        await new.save_run(run.with_(monitor="2"))
        again = await new.get_run("r1")
    assert again is not None and again.monitor == "2"
    assert again.to_json()["monitor"] == "2"


async def test_a_v6_store_gains_the_steps_monitor_and_its_old_rows_had_none(
    tmp_path: Path,
) -> None:
    old_store(
        tmp_path,
        6,
        "INSERT INTO steps (run_id, seq, turn, kind, status, tool, args, summary, "
        "started_at) VALUES ('r1', 1, 1, 'action', 'ok', 'click', '{}', '', ?)",
    )
    where = MonitorArea(3, 3200, 300, 1024, 768)
    with SqliteRunRepository.open(tmp_path) as new:
        assert new.schema_version_sync() == len(MIGRATIONS) >= 7
        (before,) = await new.list_steps("r1")
        assert before.monitor is None
        step = StepView("r1", 2, 2, StepKind.ACTION, StepStatus.OK, T0, tool="click")
        await new.save_step(step.with_(monitor=where))
        stored = await new.list_steps("r1")
    assert [s.monitor for s in stored] == [None, where]
    assert stored[1].to_json()["monitor"] == {
        "number": 3, "left": 3200, "top": 300, "width": 1024, "height": 768, "primary": False,
    }  # fmt: skip
