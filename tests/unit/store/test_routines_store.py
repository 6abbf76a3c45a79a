"""Routines in the history store: rows of their own (schema v3), runs that say their kind."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from desktop_agent.core.models import (
    Effect,
    ElementRef,
    RunKind,
    StepKind,
    StepStatus,
    StepView,
    TaskSpec,
    utcnow,
)
from desktop_agent.core.routine import (
    Routine,
    RoutineError,
    RoutineParam,
    RoutineStep,
    Schedule,
)
from desktop_agent.store import SqliteRunRepository
from desktop_agent.store.db import MIGRATIONS

REF = ElementRef("element", "push button", "Save", "a - Ed", (10, 20, 80, 24), (0, 0, 640, 480))


def routine(name: str = "save-note") -> Routine:
    return Routine(
        name=name,
        goal="write and save",
        steps=(
            RoutineStep("click", {"element": 3}, REF, Effect.CHANGED, "clicked", 1, "runs/r/1.jpg"),
            RoutineStep("type_text", {"text": "hi"}, None, None, "typed", 2),
        ),
        params=(RoutineParam("text", (2,), "hi"),),
        grants=("click",),
        source_run="r",
    )


async def test_a_routine_round_trips_with_its_grants_and_schedule(
    repo: SqliteRunRepository,
) -> None:
    saved = routine()
    await repo.save_routine(saved)

    assert await repo.get_routine("save-note") == saved
    assert [r.name for r in await repo.list_routines()] == ["save-note"]
    with pytest.raises(RoutineError, match="exists already"):
        await repo.save_routine(saved)

    changed = await repo.update_routine(
        "save-note", grants=(), schedule=Schedule("09:00", weekdays=True)
    )
    assert await repo.get_routine("save-note") == changed
    assert changed.schedule == Schedule("09:00", True) and changed.grants == ()
    assert await repo.delete_routine("save-note") is True
    assert await repo.get_routine("save-note") is None
    with pytest.raises(RoutineError, match="no routine named 'save-note'"):
        await repo.update_routine("save-note", grants=())


async def test_a_routine_run_and_an_action_target_are_stored(repo: SqliteRunRepository) -> None:
    run = await repo.create_run(
        TaskSpec(goal="g", kind=RunKind.ROUTINE, routine="save-note", allowed_tools=("click",))
    )
    step = StepView(run.id, 1, 1, StepKind.ACTION, StepStatus.OK, utcnow(), tool="click",
                    element=REF)  # fmt: skip
    await repo.save_step(step)

    stored = await repo.get_run(run.id)
    assert stored is not None and (stored.kind, stored.routine) == (RunKind.ROUTINE, "save-note")
    assert stored.to_json()["kind"] == "routine"
    assert (await repo.list_steps(run.id))[0].element == REF


def test_a_v2_store_gains_the_routines_and_its_runs_are_agent_runs(tmp_path: Path) -> None:
    with SqliteRunRepository.open(tmp_path, migrations=MIGRATIONS[:2]):
        pass
    con = sqlite3.connect(tmp_path / "history.db")
    with con:
        con.execute(
            "INSERT INTO runs (id, goal, status, max_steps, max_failures, created_at) "
            "VALUES ('old', 'g', 'completed', 5, 3, '2024-01-01T00:00:00+00:00')"
        )
    con.close()

    with SqliteRunRepository.open(tmp_path) as repo:
        assert repo.schema_version_sync() == len(MIGRATIONS)
        old = repo.get_run_sync("old")
        assert old is not None and (old.kind, old.routine) == (RunKind.AGENT, None)
