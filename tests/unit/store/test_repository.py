"""SqliteRunRepository: runs, steps, grants and artifacts round-trip through a real SQLite file."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from desktop_agent.core.errors import StoreError
from desktop_agent.core.models import (
    Artifact,
    Effect,
    MonitorArea,
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
    TaskSpec,
)
from desktop_agent.core.ports import RunRepository
from desktop_agent.store import SqliteRunRepository, repository
from desktop_agent.store import artifacts as artifact_files
from desktop_agent.store.tables import step_to_row
from tests.unit.store.conftest import SteppingClock

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def full_step(run_id: str, seq: int = 1, **changes: object) -> StepView:
    step = StepView(
        run_id=run_id,
        seq=seq,
        index=3,
        kind=StepKind.DECIDE,
        status=StepStatus.OK,
        started_at=T0 + timedelta(microseconds=123456),
        tool="type_text",
        args={"text": "héllo ✓", "enter": True, "nested": {"n": [1, 2.5, None]}},
        summary="type_text",
        error="none really",
        screenshot=f"runs/{run_id}/0003.jpg",
        thumbnail=f"runs/{run_id}/0003.thumb.jpg",
        finished_at=T0 + timedelta(seconds=2, microseconds=7),
        duration_ms=2000.007,
        reason="the field is focused",
        raw_output='{"action":"tool","tool":"type_text"}',
        prompt_tokens=1234,
        completion_tokens=56,
        latency_ms=812.5,
        target=(640, 512),
        effect=Effect.NO_CHANGE,
        monitor=MonitorArea(2, -1280, -200, 1280, 1024),
    )
    return step.with_(**changes)


def test_repository_satisfies_the_core_port(repo: SqliteRunRepository) -> None:
    assert isinstance(repo, RunRepository)


async def test_create_run_returns_a_queued_run_with_a_new_id(repo: SqliteRunRepository) -> None:
    spec = TaskSpec("open the editor", 7, 2, ("click", "wait"), "qwen2.5vl", "http://m/v1")
    first = await repo.create_run(spec)
    second = await repo.create_run(spec)

    assert first.id != second.id
    assert first.status is RunStatus.QUEUED and first.stop_reason is None
    assert (first.goal, first.max_steps, first.max_failures) == ("open the editor", 7, 2)
    assert first.allowed_tools == ("click", "wait")
    assert (first.model, first.base_url) == ("qwen2.5vl", "http://m/v1")
    assert await repo.get_run(first.id) == first


async def test_create_run_with_an_id_in_use_is_refused(repo: SqliteRunRepository) -> None:
    await repo.create_run(TaskSpec("a"), run_id="r1")
    with pytest.raises(StoreError, match="'r1' exists already"):
        await repo.create_run(TaskSpec("b"), run_id="r1")


async def test_get_run_of_an_unknown_id_is_none(repo: SqliteRunRepository) -> None:
    assert await repo.get_run("nope") is None


async def test_save_run_stores_the_whole_view(repo: SqliteRunRepository) -> None:
    run = await repo.create_run(TaskSpec("goal", allowed_tools=("wait",)), run_id="r1")
    final = run.with_(
        status=RunStatus.STOPPED,
        stop_reason=StopReason.MAX_STEPS,
        step_count=20,
        started_at=T0 + timedelta(seconds=1),
        finished_at=T0 + timedelta(seconds=9, microseconds=5),
        message="reached the limit of 20 steps",
        allowed_tools=("wait", "click"),
        goal="goal, edited",
        prompt_tokens=12345,
        completion_tokens=678,
        tokens_estimated=True,
        cost=0.0375,
    )
    await repo.save_run(final)

    stored = await repo.get_run("r1")
    assert stored == final
    assert stored is not None and stored.finished_at is not None
    assert stored.finished_at.tzinfo == UTC and stored.created_at.tzinfo == UTC


async def test_save_run_inserts_a_run_it_has_not_seen(repo: SqliteRunRepository) -> None:
    run = RunView("x1", "g", RunStatus.QUEUED, None, 0, 5, 3, (), "", "", T0)
    await repo.save_run(run)
    assert await repo.get_run("x1") == run


async def test_runs_are_listed_newest_first(repo: SqliteRunRepository) -> None:
    ids = [(await repo.create_run(TaskSpec(f"goal {n}"))).id for n in range(4)]
    assert [run.id for run in await repo.list_runs()] == ids[::-1]
    assert [run.id for run in await repo.list_runs(limit=2)] == ids[:1:-1]


async def test_runs_created_in_one_clock_tick_keep_their_creation_order(tmp_path: Path) -> None:
    with SqliteRunRepository.open(tmp_path, now=lambda: T0) as store:
        ids = [(await store.create_run(TaskSpec(f"goal {n}"))).id for n in range(3)]
        assert [run.id for run in await store.list_runs()] == ids[::-1]


async def test_list_runs_filters_by_status(repo: SqliteRunRepository) -> None:
    a = await repo.create_run(TaskSpec("a"))
    b = await repo.create_run(TaskSpec("b"))
    c = await repo.create_run(TaskSpec("c"))
    await repo.save_run(a.with_(status=RunStatus.COMPLETED, stop_reason=StopReason.DONE))
    await repo.save_run(c.with_(status=RunStatus.COMPLETED, stop_reason=StopReason.DONE))

    completed = await repo.list_runs(status=RunStatus.COMPLETED)
    assert [run.id for run in completed] == [c.id, a.id]
    assert [run.id for run in await repo.list_runs(status=RunStatus.QUEUED)] == [b.id]
    assert await repo.list_runs(status=RunStatus.FAILED) == []


async def test_a_step_round_trips_every_field(repo: SqliteRunRepository) -> None:
    run = await repo.create_run(TaskSpec("g"), run_id="r1")
    step = full_step(run.id)
    await repo.save_step(step)

    [stored] = await repo.list_steps(run.id)
    assert stored == step
    assert stored.target == (640, 512)
    assert stored.started_at.tzinfo == UTC
    assert stored.finished_at is not None and stored.finished_at.tzinfo == UTC


async def test_a_step_with_empty_optional_fields_round_trips(repo: SqliteRunRepository) -> None:
    await repo.create_run(TaskSpec("g"), run_id="r1")
    step = StepView("r1", 1, 1, StepKind.OBSERVE, StepStatus.RUNNING, T0, "screen_snapshot")
    await repo.save_step(step)
    assert await repo.list_steps("r1") == [step]


async def test_times_in_other_zones_come_back_as_the_same_instant_in_utc(
    repo: SqliteRunRepository,
) -> None:
    await repo.create_run(TaskSpec("g"), run_id="r1")
    berlin = timezone(timedelta(hours=2))
    await repo.save_step(full_step("r1", started_at=datetime(2024, 5, 1, 14, 0, tzinfo=berlin)))

    [stored] = await repo.list_steps("r1")
    assert stored.started_at == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert stored.started_at.utcoffset() == timedelta(0)


async def test_save_step_again_replaces_the_row_of_that_seq(repo: SqliteRunRepository) -> None:
    await repo.create_run(TaskSpec("g"), run_id="r1")
    running = StepView("r1", 1, 1, StepKind.ACTION, StepStatus.RUNNING, T0, "click", {"x": 1})
    await repo.save_step(running)
    final = running.with_(status=StepStatus.FAILED, error="boom", finished_at=T0, target=(1, 2))
    await repo.save_step(final)

    assert await repo.list_steps("r1") == [final]


async def test_steps_are_listed_in_seq_order_per_run(repo: SqliteRunRepository) -> None:
    await repo.create_run(TaskSpec("a"), run_id="r1")
    await repo.create_run(TaskSpec("b"), run_id="r2")
    for seq in (3, 1, 10, 2):
        await repo.save_step(full_step("r1", seq))
    await repo.save_step(full_step("r2", 1))

    assert [step.seq for step in await repo.list_steps("r1")] == [1, 2, 3, 10]
    assert [step.seq for step in await repo.list_steps("r2")] == [1]
    assert await repo.list_steps("unknown") == []


async def test_a_step_of_an_unknown_run_is_refused(repo: SqliteRunRepository) -> None:
    with pytest.raises(StoreError, match="no such run"):
        await repo.save_step(full_step("ghost"))


async def test_grants_are_added_once_and_removed(repo: SqliteRunRepository) -> None:
    assert await repo.list_grants() == set()
    await repo.add_grant("click")
    await repo.add_grant("click")
    await repo.add_grant("type_text")
    assert await repo.list_grants() == {"click", "type_text"}

    await repo.remove_grant("click")
    await repo.remove_grant("never granted")
    assert await repo.list_grants() == {"type_text"}


async def test_grants_outlive_the_store(tmp_path: Path) -> None:
    with SqliteRunRepository.open(tmp_path) as store:
        await store.add_grant("scroll")
    with SqliteRunRepository.open(tmp_path) as store:
        assert await store.list_grants() == {"scroll"}
        assert store.list_grants_sync() == {"scroll"}


async def test_artifacts_are_written_under_runs_of_the_data_dir(
    repo: SqliteRunRepository, tmp_path: Path
) -> None:
    run = await repo.create_run(TaskSpec("g"))
    path = await repo.save_artifact(run.id, "0001.jpg", b"\xff\xd8jpeg")

    assert path == f"runs/{run.id}/0001.jpg"
    assert (tmp_path / path).read_bytes() == b"\xff\xd8jpeg"
    assert sorted(p.name for p in (tmp_path / "runs" / run.id).iterdir()) == ["0001.jpg"]


async def test_a_write_stores_its_files_and_all_its_rows_in_one_hand_off(
    repo: SqliteRunRepository, tmp_path: Path
) -> None:
    run = await repo.create_run(TaskSpec("g"))
    running = full_step(run.id, 1, status=StepStatus.RUNNING, finished_at=None)
    shot = repo.artifact_path(run.id, "0001.jpg")
    await repo.write(
        [
            running,
            Artifact(run.id, "0001.jpg", b"\xff\xd8jpeg"),
            running.with_(status=StepStatus.OK, screenshot=shot),
            full_step(run.id, 2),
            run.with_(status=RunStatus.RUNNING, step_count=1),
        ]
    )
    assert shot == f"runs/{run.id}/0001.jpg"
    assert (tmp_path / shot).read_bytes() == b"\xff\xd8jpeg"
    steps = await repo.list_steps(run.id)
    assert [(step.seq, step.status) for step in steps] == [(1, StepStatus.OK), (2, StepStatus.OK)]
    assert steps[0].screenshot == shot
    stored = await repo.get_run(run.id)
    assert stored is not None and (stored.status, stored.step_count) == (RunStatus.RUNNING, 1)


async def test_a_write_that_fails_stores_none_of_its_rows(repo: SqliteRunRepository) -> None:
    run = await repo.create_run(TaskSpec("g"))
    with pytest.raises(StoreError, match="no such run"):
        await repo.write(
            [
                full_step(run.id, 1),
                run.with_(status=RunStatus.RUNNING, step_count=1),
                full_step("no-such-run", 1),
            ]
        )
    assert await repo.list_steps(run.id) == []
    stored = await repo.get_run(run.id)
    assert stored is not None and stored.status is RunStatus.QUEUED


@pytest.mark.parametrize("name", ["", "..", "../escape.jpg", "a/b.jpg", "a\\b.jpg", " x.jpg"])
async def test_an_artifact_name_that_is_not_one_plain_part_is_refused(
    repo: SqliteRunRepository, tmp_path: Path, name: str
) -> None:
    with pytest.raises(StoreError, match="invalid artifact name"):
        await repo.save_artifact("r1", name, b"x")
    assert not (tmp_path / "escape.jpg").exists()


async def test_artifact_writes_and_database_work_run_on_one_thread_off_the_loop(
    repo: SqliteRunRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: dict[str, set[int]] = {"file": set(), "row": set()}
    write_file = artifact_files.write_file

    def recording_write(path: Path, data: bytes) -> None:
        threads["file"].add(threading.get_ident())
        write_file(path, data)

    def recording_row(step: StepView) -> dict[str, object]:
        threads["row"].add(threading.get_ident())
        return step_to_row(step)

    monkeypatch.setattr(artifact_files, "write_file", recording_write)
    monkeypatch.setattr(repository, "step_to_row", recording_row)
    run = await repo.create_run(TaskSpec("g"))
    await asyncio.gather(
        *(repo.save_artifact(run.id, f"{n}.jpg", b"x" * 1000) for n in range(5)),
        *(repo.save_step(full_step(run.id, seq)) for seq in range(1, 6)),
    )

    loop_thread = threading.get_ident()
    assert len(threads["file"]) == 1 and len(threads["row"]) == 1
    assert threads["file"] == threads["row"]
    assert loop_thread not in threads["file"]


async def test_sync_helpers_read_without_an_event_loop(tmp_path: Path) -> None:
    with SqliteRunRepository.open(tmp_path, now=SteppingClock()) as store:
        run = await store.create_run(TaskSpec("g"))
        await store.save_step(full_step(run.id))

    def read() -> tuple[list[RunView], RunView | None, list[StepView]]:
        with SqliteRunRepository.open(tmp_path) as store:
            return store.list_runs_sync(), store.get_run_sync(run.id), store.list_steps_sync(run.id)

    runs, got, steps = await asyncio.to_thread(read)
    assert runs == [run] and got == run and steps == [full_step(run.id)]


async def test_a_closed_store_refuses_work_with_a_store_error(tmp_path: Path) -> None:
    store = SqliteRunRepository.open(tmp_path)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        await store.list_runs()
    with pytest.raises(StoreError, match="is closed"):
        store.list_runs_sync()
