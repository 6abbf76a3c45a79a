"""The database under the store: pragmas in effect, schema migrations, and unusable data dirs."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.errors import StoreError
from desktop_agent.core.models import TaskSpec
from desktop_agent.store import SqliteRunRepository
from desktop_agent.store.db import MIGRATIONS, execute


def sqlite_tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as con:
        rows = con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name for (name,) in rows}


def user_version(path: Path) -> int:
    with sqlite3.connect(path) as con:
        return int(con.execute("PRAGMA user_version").fetchone()[0])


def test_history_db_sits_at_the_top_of_the_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "fresh" / "nested"
    SqliteRunRepository.open(data_dir).close()
    assert (data_dir / "history.db").is_file()


def test_the_connection_runs_with_wal_normal_sync_foreign_keys_and_a_busy_timeout(
    repo: SqliteRunRepository, tmp_path: Path
) -> None:
    assert repo.pragmas_sync() == {
        "journal_mode": "wal",
        "synchronous": 1,  # NORMAL
        "foreign_keys": 1,
        "busy_timeout": 5000,
    }
    # WAL is a property of the file: every other connection sees it too.
    with sqlite3.connect(tmp_path / "history.db") as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_fresh_store_is_at_the_latest_schema_version(repo: SqliteRunRepository) -> None:
    assert repo.schema_version_sync() == len(MIGRATIONS) >= 1
    assert {"runs", "steps", "grants"} <= sqlite_tables(repo.data_dir / "history.db")


async def test_a_later_migration_runs_once_and_keeps_the_data(tmp_path: Path) -> None:
    with SqliteRunRepository.open(tmp_path) as store:
        run = await store.create_run(TaskSpec("kept"))
    calls: list[int] = []

    def add_notes(db: Any) -> None:
        calls.append(1)
        execute(db, "ALTER TABLE runs ADD COLUMN notes TEXT")

    for _ in range(2):
        with SqliteRunRepository.open(tmp_path, migrations=(*MIGRATIONS, add_notes)) as store:
            assert store.schema_version_sync() == len(MIGRATIONS) + 1
            assert await store.get_run(run.id) == run
    assert calls == [1]


def test_a_failing_migration_leaves_version_and_schema_unchanged(tmp_path: Path) -> None:
    SqliteRunRepository.open(tmp_path).close()
    db_path = tmp_path / "history.db"
    before = sqlite_tables(db_path)

    def half_done(db: Any) -> None:
        execute(db, "CREATE TABLE half_done (x INTEGER)")
        execute(db, "ALTER TABLE runs ADD COLUMN half INTEGER")
        raise RuntimeError("disk on fire")

    with pytest.raises(StoreError) as caught:
        SqliteRunRepository.open(tmp_path, migrations=(*MIGRATIONS, half_done))

    message = str(caught.value)
    assert str(db_path) in message and "disk on fire" in message and "\n" not in message
    assert user_version(db_path) == len(MIGRATIONS)
    assert sqlite_tables(db_path) == before
    with sqlite3.connect(db_path) as con:
        columns = {row[1] for row in con.execute("PRAGMA table_info(runs)")}
    assert "half" not in columns


def test_migrations_before_the_failing_one_stay_applied(tmp_path: Path) -> None:
    def good(db: Any) -> None:
        execute(db, "CREATE TABLE good (x INTEGER)")

    def bad(db: Any) -> None:
        execute(db, "CREATE TABLE bad (x INTEGER)")
        raise ValueError("no")

    with pytest.raises(StoreError, match=f"schema version {len(MIGRATIONS) + 2}"):
        SqliteRunRepository.open(tmp_path, migrations=(*MIGRATIONS, good, bad))

    db_path = tmp_path / "history.db"
    assert user_version(db_path) == len(MIGRATIONS) + 1
    assert "good" in sqlite_tables(db_path) and "bad" not in sqlite_tables(db_path)


def test_a_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    SqliteRunRepository.open(tmp_path).close()
    with sqlite3.connect(tmp_path / "history.db") as con:
        con.execute("PRAGMA user_version = 99")

    with pytest.raises(StoreError, match="schema version 99.*update desktop-agent"):
        SqliteRunRepository.open(tmp_path)


def test_a_data_dir_that_cannot_be_created_raises_a_one_line_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")

    with pytest.raises(StoreError) as caught:
        SqliteRunRepository.open(blocker / "data")

    assert str(blocker / "data") in str(caught.value) and "\n" not in str(caught.value)


def test_a_data_dir_where_the_database_cannot_be_made_raises_a_store_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "history.db").mkdir()  # a directory where the file should be

    with pytest.raises(StoreError, match="cannot open the history store") as caught:
        SqliteRunRepository.open(tmp_path)
    assert str(tmp_path / "history.db") in str(caught.value)


def test_a_corrupt_database_raises_a_store_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "history.db").write_bytes(b"this is not a database\n" * 200)

    with pytest.raises(StoreError) as caught:
        SqliteRunRepository.open(tmp_path)

    message = str(caught.value)
    assert str(tmp_path / "history.db") in message and "\n" not in message


async def test_an_artifact_that_cannot_be_written_raises_a_store_error(
    repo: SqliteRunRepository, tmp_path: Path
) -> None:
    (tmp_path / "runs").write_text("a file where the runs folder should be")

    with pytest.raises(StoreError, match="cannot write"):
        await repo.save_artifact("r1", "0001.jpg", b"x")
