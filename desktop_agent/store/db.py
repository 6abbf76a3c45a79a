"""The SQLite database of the history store: connection pragmas and ordered schema migrations."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import peewee

from desktop_agent.core.errors import StoreError
from desktop_agent.store.private_files import private_opener, restrict

log = logging.getLogger(__name__)

DB_NAME = "history.db"
#: SQLite gives these the mode of the database file when it makes them
SIDE_FILES = ("-wal", "-shm", "-journal")
BUSY_TIMEOUT_MS = 5000

#: Set on every connection. WAL + synchronous=NORMAL survives kill -9 without losing a
#: committed transaction (only a power cut can lose the last few), at ~6x the commit rate
#: of FULL; the busy timeout lets the app and a CLI run share one data dir.
PRAGMAS: tuple[tuple[str, object], ...] = (
    ("journal_mode", "wal"),
    ("synchronous", "normal"),
    ("foreign_keys", 1),
    ("busy_timeout", BUSY_TIMEOUT_MS),
)

Migration = Callable[[peewee.SqliteDatabase], None]


def execute(
    db: peewee.SqliteDatabase, statement: str, params: Sequence[Any] = ()
) -> list[tuple[Any, ...]]:
    """Run one SQL statement; its rows."""
    cursor = db.execute_sql(statement, params)  # type: ignore[no-untyped-call]  # untyped stub
    return list(cursor.fetchall())


def _v1_initial(db: peewee.SqliteDatabase) -> None:
    execute(
        db,
        """
        CREATE TABLE runs (
            id            TEXT PRIMARY KEY,
            goal          TEXT NOT NULL,
            status        TEXT NOT NULL,
            stop_reason   TEXT,
            step_count    INTEGER NOT NULL DEFAULT 0,
            max_steps     INTEGER NOT NULL,
            max_failures  INTEGER NOT NULL,
            allowed_tools TEXT NOT NULL DEFAULT '[]',
            model         TEXT NOT NULL DEFAULT '',
            base_url      TEXT NOT NULL DEFAULT '',
            created_at    TEXT NOT NULL,
            started_at    TEXT,
            finished_at   TEXT,
            message       TEXT NOT NULL DEFAULT '',
            owner_pid     INTEGER,
            owner_started TEXT
        )
        """,
    )
    execute(db, "CREATE INDEX runs_created_at ON runs (created_at)")
    execute(db, "CREATE INDEX runs_status ON runs (status)")
    execute(
        db,
        """
        CREATE TABLE steps (
            run_id            TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            seq               INTEGER NOT NULL,
            turn              INTEGER NOT NULL,
            kind              TEXT NOT NULL,
            status            TEXT NOT NULL,
            tool              TEXT,
            args              TEXT NOT NULL DEFAULT '{}',
            summary           TEXT NOT NULL DEFAULT '',
            error             TEXT,
            screenshot        TEXT,
            thumbnail         TEXT,
            started_at        TEXT NOT NULL,
            finished_at       TEXT,
            duration_ms       REAL,
            reason            TEXT,
            raw_output        TEXT,
            prompt_tokens     INTEGER,
            completion_tokens INTEGER,
            latency_ms        REAL,
            target_x          INTEGER,
            target_y          INTEGER,
            PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID
        """,
    )
    execute(
        db,
        """
        CREATE TABLE grants (
            tool       TEXT PRIMARY KEY,
            created_at TEXT NOT NULL
        )
        """,
    )


def _v2_effect_and_usage(db: peewee.SqliteDatabase) -> None:
    """Action rows record what the action did to the screen (changed / no_change / unknown);
    runs keep their model tokens and cost so far."""
    execute(db, "ALTER TABLE steps ADD COLUMN effect TEXT")
    execute(db, "ALTER TABLE runs ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0")
    execute(db, "ALTER TABLE runs ADD COLUMN completion_tokens INTEGER NOT NULL DEFAULT 0")
    execute(db, "ALTER TABLE runs ADD COLUMN tokens_estimated INTEGER NOT NULL DEFAULT 0")
    execute(db, "ALTER TABLE runs ADD COLUMN cost REAL")


def _v3_routines(db: peewee.SqliteDatabase) -> None:
    """Routines (core/routine.py): a run says who decided it (agent | routine, and which
    routine); action rows keep what they acted on; saved routines with their grants and
    schedule."""
    execute(db, "ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'agent'")
    execute(db, "ALTER TABLE runs ADD COLUMN routine TEXT")
    execute(db, "ALTER TABLE steps ADD COLUMN element TEXT")
    execute(
        db,
        """
        CREATE TABLE routines (
            name       TEXT PRIMARY KEY,
            body       TEXT NOT NULL,
            grants     TEXT NOT NULL DEFAULT '[]',
            schedule   TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """,
    )


def _v4_suspicious_text(db: peewee.SqliteDatabase) -> None:
    """Observe rows keep the texts on the screen that looked like orders to an AI (the
    note `suspicious_text`, core/injection.py)."""
    execute(db, "ALTER TABLE steps ADD COLUMN suspicious_text TEXT")


def _v5_model_profile(db: peewee.SqliteDatabase) -> None:
    """A run keeps the model profile it asked for (API, MCP run_task, `run --model-profile`);
    "" for the runs before: they had the settings' choice."""
    execute(db, "ALTER TABLE runs ADD COLUMN model_profile TEXT NOT NULL DEFAULT ''")


def _v6_monitor(db: peewee.SqliteDatabase) -> None:
    """A run keeps the monitor it asked to be shown (API, MCP run_task, `run --monitor`);
    "" for the runs before: they had the settings' choice."""
    execute(db, "ALTER TABLE runs ADD COLUMN monitor TEXT NOT NULL DEFAULT ''")


def _v7_step_monitor(db: peewee.SqliteDatabase) -> None:
    """Action rows keep the monitor the action was on (JSON of core's MonitorArea), on a
    desktop of several; NULL for the rows before and on one monitor."""
    execute(db, "ALTER TABLE steps ADD COLUMN monitor TEXT")


#: Migration i (0-based) takes the schema from version i to i + 1. Append only; never edit.
MIGRATIONS: tuple[Migration, ...] = (
    _v1_initial,
    _v2_effect_and_usage,
    _v3_routines,
    _v4_suspicious_text,
    _v5_model_profile,
    _v6_monitor,
    _v7_step_monitor,
)


def connect(path: Path) -> peewee.SqliteDatabase:
    """A connected database with PRAGMAS set; StoreError naming the path if it cannot be.

    The history holds goals, typed text and the model's reasons: the file is made 0600
    before SQLite opens it (its -wal and -shm files inherit the mode), and an older,
    wider file is narrowed.
    """
    try:
        _make_private(path)
    except OSError as error:
        raise StoreError(
            f"cannot open the history store {path}: {error.strerror or error}"
        ) from None
    db = peewee.SqliteDatabase(
        str(path),
        pragmas=list(PRAGMAS),
        timeout=BUSY_TIMEOUT_MS / 1000,
        autoconnect=False,
    )
    try:
        db.connect()
        # A file that is not SQLite only fails when a page is read.
        execute(db, "SELECT count(*) FROM sqlite_master")
    except peewee.PeeweeException as error:
        db.close()
        raise StoreError(f"cannot open the history store {path}: {error}") from None
    return db


def _make_private(path: Path) -> None:
    with open(path, "ab", opener=private_opener):
        pass
    for suffix in ("", *SIDE_FILES):
        restrict(Path(f"{path}{suffix}"))


def schema_version(db: peewee.SqliteDatabase) -> int:
    return int(execute(db, "PRAGMA user_version")[0][0])


def migrate(
    db: peewee.SqliteDatabase, path: Path, migrations: Sequence[Migration] = MIGRATIONS
) -> int:
    """Bring the schema up to len(migrations); the version it ends at.

    Each migration runs in its own IMMEDIATE transaction together with the bump of
    PRAGMA user_version, so a migration that fails leaves schema and version as
    they were. The version is read again inside the transaction: when two
    processes open a fresh store at once, the second one finds the work done.
    """
    latest = len(migrations)
    if schema_version(db) > latest:
        raise StoreError(
            f"the history store {path} has schema version {schema_version(db)}; "
            f"this desktop-agent knows up to {latest}: update desktop-agent"
        )
    while (version := schema_version(db)) < latest:
        try:
            with db.atomic("IMMEDIATE"):
                version = schema_version(db)
                if version >= latest:
                    break
                migration = migrations[version]
                migration(db)
                execute(db, f"PRAGMA user_version = {version + 1:d}")
        except StoreError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure of a migration is reported
            raise StoreError(
                f"cannot update the history store {path} to schema version {version + 1}: "
                f"{type(error).__name__}: {error}"
            ) from error
        log.info("history store %s: schema version %d", path, version + 1)
    return schema_version(db)
