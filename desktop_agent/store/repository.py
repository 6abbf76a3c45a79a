"""SqliteRunRepository: the core's RunRepository on SQLite (peewee), one worker thread per store."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import peewee

from desktop_agent.core.errors import StoreError
from desktop_agent.core.models import (
    Artifact,
    RunStatus,
    RunView,
    StepView,
    StoreWrite,
    TaskSpec,
    utcnow,
)
from desktop_agent.core.routine import Routine
from desktop_agent.store import artifacts, routines
from desktop_agent.store.db import (
    DB_NAME,
    MIGRATIONS,
    Migration,
    connect,
    execute,
    migrate,
    schema_version,
)
from desktop_agent.store.private_files import make_private_dir
from desktop_agent.store.process import ProcessIdentity, current_process
from desktop_agent.store.recovery import recover_interrupted
from desktop_agent.store.tables import (
    RUN_COLUMNS,
    STEP_COLUMNS,
    UPSERT_RUN,
    UPSERT_STEP,
    Tables,
    columns_of,
    run_from_row,
    run_to_row,
    step_from_row,
    step_to_row,
    time_to_db,
)

log = logging.getLogger(__name__)

T = TypeVar("T")


def _open_on_worker(
    path: Path, owner: ProcessIdentity, migrations: Sequence[Migration], now: datetime
) -> tuple[peewee.SqliteDatabase, Tables, list[str]]:
    db = connect(path)
    try:
        migrate(db, path, migrations)
        tables = Tables.bound_to(db)
        recovered = recover_interrupted(db, tables, owner, now)
    except peewee.PeeweeException as error:
        db.close()
        raise StoreError(f"cannot open the history store {path}: {error}") from None
    except BaseException:
        db.close()
        raise
    return db, tables, recovered


class SqliteRunRepository:
    """Runs, steps, grants and artifact files of one data dir.

    peewee blocks, so every database call and every artifact write runs on one
    worker thread that this object owns: the event loop never waits on the disk,
    and SQLite sees one writer per process. The connection lives on that thread
    only (peewee keeps connections per thread and autoconnect is off, so a call
    from any other thread fails loudly instead of opening a second connection).
    Several processes may open the same data dir: WAL and the busy timeout let
    them take turns. Open with `SqliteRunRepository.open(data_dir)`.

    Attributes:
        data_dir: the data dir; history.db sits at its top, artifacts under runs/.
        owner: the process identity stored in the rows of runs this store drives.
        recovered: ids of the runs that opening marked interrupted / crash.
    """

    def __init__(
        self,
        data_dir: Path,
        db: peewee.SqliteDatabase,
        tables: Tables,
        executor: ThreadPoolExecutor,
        owner: ProcessIdentity,
        recovered: Sequence[str],
        now: Callable[[], datetime],
    ) -> None:
        self.data_dir = data_dir
        self.owner = owner
        self.recovered = tuple(recovered)
        self._path = data_dir / DB_NAME
        self._db = db
        self._tables = tables
        self._executor = executor
        self._now = now
        self._closed = False

    @classmethod
    def open(
        cls,
        data_dir: Path,
        *,
        owner: ProcessIdentity | None = None,
        migrations: Sequence[Migration] = MIGRATIONS,
        now: Callable[[], datetime] = utcnow,
    ) -> SqliteRunRepository:
        """Open (creating, migrating and recovering) the store of `data_dir`; StoreError if not.

        Blocks for a few milliseconds; call it before the event loop is busy.
        `owner` is the process identity written into active runs (default: this
        process); `migrations` and `now` are for tests.
        """
        data_dir = Path(data_dir).expanduser()
        try:
            make_private_dir(data_dir)
        except OSError as error:
            raise StoreError(
                f"cannot create the data dir {data_dir}: {error.strerror or error}"
            ) from None
        owner = owner or current_process()
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="history-store")
        try:
            db, tables, recovered = executor.submit(
                _open_on_worker, data_dir / DB_NAME, owner, migrations, now()
            ).result()
        except BaseException:
            executor.shutdown(wait=True)
            raise
        if recovered:
            log.warning(
                "history store %s: %d run(s) ended when their process ended: %s",
                data_dir,
                len(recovered),
                ", ".join(recovered),
            )
        return cls(data_dir, db, tables, executor, owner, recovered, now)

    def close(self) -> None:
        """Finish the writes already asked for, then close the database. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._executor.submit(self._db.close)
        self._executor.shutdown(wait=True)

    def __enter__(self) -> SqliteRunRepository:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ── the worker thread ────────────────────────────────────────────────────

    def _guarded(self, fn: Callable[..., T], *args: Any) -> T:
        """Run on the worker thread; database and file errors become one-line StoreErrors."""
        try:
            return fn(*args)
        except StoreError:
            raise
        except (peewee.PeeweeException, sqlite3.Error) as error:
            raise StoreError(f"history store {self._path}: {error}") from error
        except OSError as error:
            where = error.filename or self.data_dir
            raise StoreError(f"cannot write {where}: {error.strerror or error}") from error

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(self._executor, self._guarded, fn, *args)
        except RuntimeError:
            raise StoreError(f"the history store {self._path} is closed") from None
        return await future

    def _call_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """For callers without an event loop (the CLI); never from a coroutine."""
        try:
            future = self._executor.submit(self._guarded, fn, *args)
        except RuntimeError:
            raise StoreError(f"the history store {self._path} is closed") from None
        return future.result()

    def _create_run(self, spec: TaskSpec, run_id: str | None) -> RunView:
        run = RunView.queued(spec, run_id or uuid.uuid4().hex, self._now())
        try:
            runs = self._tables.runs
            runs.insert(columns_of(runs, run_to_row(run, None))).execute()
        except peewee.IntegrityError:
            raise StoreError(f"a run with id {run.id!r} exists already") from None
        return run

    def _get_run(self, run_id: str) -> RunView | None:
        runs = self._tables.runs
        rows = list(runs.select().where(runs.c.id == run_id))
        return run_from_row(rows[0]) if rows else None

    def _list_runs(self, limit: int, status: RunStatus | None) -> list[RunView]:
        runs = self._tables.runs
        query = runs.select()
        if status is not None:
            query = query.where(runs.c.status == status.value)
        # rowid breaks ties between runs created within one clock tick
        query = query.order_by(runs.c.created_at.desc(), peewee.SQL("rowid").desc())
        return [run_from_row(row) for row in query.limit(max(0, limit))]

    def _save_run(self, run: RunView) -> None:
        row = run_to_row(run, self.owner)
        execute(self._db, UPSERT_RUN, [row[name] for name in RUN_COLUMNS])

    def _save_step(self, step: StepView) -> None:
        row = step_to_row(step)
        try:
            execute(self._db, UPSERT_STEP, [row[name] for name in STEP_COLUMNS])
        except peewee.IntegrityError:
            raise StoreError(
                f"cannot save step {step.seq} of run {step.run_id!r}: no such run"
            ) from None

    def _list_steps(self, run_id: str) -> list[StepView]:
        steps = self._tables.steps
        query = steps.select().where(steps.c.run_id == run_id).order_by(steps.c.seq)
        return [step_from_row(row) for row in query]

    def _save_artifact(self, run_id: str, name: str, data: bytes) -> str:
        relative = artifacts.relative_path(run_id, name)
        artifacts.write_file(self.data_dir / relative, data)
        return relative

    def _write(self, writes: Sequence[StoreWrite]) -> None:
        # The files first: a row is never committed pointing at a file not yet written.
        for item in writes:
            if isinstance(item, Artifact):
                self._save_artifact(item.run_id, item.name, item.data)
        with self._db.atomic():
            for item in writes:
                if isinstance(item, StepView):
                    self._save_step(item)
                elif isinstance(item, RunView):
                    self._save_run(item)

    def _delete_run(self, run_id: str) -> bool:
        runs, steps = self._tables.runs, self._tables.steps
        with self._db.atomic():
            steps.delete().where(steps.c.run_id == run_id).execute()
            return bool(runs.delete().where(runs.c.id == run_id).execute())

    def _list_grants(self) -> set[str]:
        grants = self._tables.grants
        return {row["tool"] for row in grants.select(grants.c.tool)}

    def _add_grant(self, tool: str) -> None:
        grants = self._tables.grants
        row = {"tool": tool, "created_at": time_to_db(self._now())}
        grants.insert(columns_of(grants, row)).on_conflict_ignore().execute()

    def _remove_grant(self, tool: str) -> None:
        grants = self._tables.grants
        grants.delete().where(grants.c.tool == tool).execute()

    def _pragmas(self) -> dict[str, object]:
        return {
            name: execute(self._db, f"PRAGMA {name}")[0][0]
            for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
        }

    def _integrity_check(self) -> str:
        rows = execute(self._db, "PRAGMA integrity_check")
        return "\n".join(str(row[0]) for row in rows)

    # ── RunRepository ────────────────────────────────────────────────────────

    async def create_run(self, spec: TaskSpec, *, run_id: str | None = None) -> RunView:
        return await self._call(self._create_run, spec, run_id)

    async def get_run(self, run_id: str) -> RunView | None:
        return await self._call(self._get_run, run_id)

    async def list_runs(
        self, *, limit: int = 100, status: RunStatus | None = None
    ) -> list[RunView]:
        return await self._call(self._list_runs, limit, status)

    async def save_run(self, run: RunView) -> None:
        await self._call(self._save_run, run)

    async def save_step(self, step: StepView) -> None:
        await self._call(self._save_step, step)

    async def list_steps(self, run_id: str) -> list[StepView]:
        return await self._call(self._list_steps, run_id)

    async def save_artifact(self, run_id: str, name: str, data: bytes) -> str:
        """Write runs/<run id>/<name> off the event loop; the path relative to the data dir."""
        return await self._call(self._save_artifact, run_id, name, data)

    async def write(self, writes: Sequence[StoreWrite]) -> None:
        """Artifact files, then every row in one transaction: one hand-off to the store's
        thread for what the loop did between two waits on the outside world."""
        await self._call(self._write, tuple(writes))

    def artifact_path(self, run_id: str, name: str) -> str:
        return artifacts.relative_path(run_id, name)

    async def delete_run(self, run_id: str) -> bool:
        """Forget a run and its steps (a start that was refused); True when it existed."""
        return await self._call(self._delete_run, run_id)

    async def list_grants(self) -> set[str]:
        return await self._call(self._list_grants)

    async def add_grant(self, tool: str) -> None:
        await self._call(self._add_grant, tool)

    async def remove_grant(self, tool: str) -> None:
        await self._call(self._remove_grant, tool)

    # ── routines (store/routines.py) ─────────────────────────────────────────

    async def save_routine(self, routine: Routine, *, replace: bool = False) -> None:
        await self._call(self._routines_call, routines.save_routine, routine, replace)

    async def get_routine(self, name: str) -> Routine | None:
        return await self._call(routines.get_routine, self._tables, name)

    async def list_routines(self) -> list[Routine]:
        return await self._call(routines.list_routines, self._tables)

    async def delete_routine(self, name: str) -> bool:
        return await self._call(routines.delete_routine, self._tables, name)

    async def update_routine(self, name: str, **changes: Any) -> Routine:
        """Change a stored routine's `grants` or `schedule`."""
        return await self._call(
            lambda: routines.update_routine(self._tables, name, self._now(), **changes)
        )

    def _routines_call(self, fn: Callable[..., None], routine: Routine, replace: bool) -> None:
        fn(self._tables, routine, self._now(), replace=replace)

    # ── blocking helpers for callers without an event loop ───────────────────

    def get_run_sync(self, run_id: str) -> RunView | None:
        return self._call_sync(self._get_run, run_id)

    def list_runs_sync(self, *, limit: int = 100, status: RunStatus | None = None) -> list[RunView]:
        return self._call_sync(self._list_runs, limit, status)

    def list_steps_sync(self, run_id: str) -> list[StepView]:
        return self._call_sync(self._list_steps, run_id)

    def list_grants_sync(self) -> set[str]:
        return self._call_sync(self._list_grants)

    def pragmas_sync(self) -> dict[str, object]:
        """journal_mode, synchronous, foreign_keys and busy_timeout of the store's connection."""
        return self._call_sync(self._pragmas)

    def schema_version_sync(self) -> int:
        return self._call_sync(schema_version, self._db)

    def integrity_check_sync(self) -> str:
        """SQLite's PRAGMA integrity_check: "ok" when the file is sound."""
        return self._call_sync(self._integrity_check)
