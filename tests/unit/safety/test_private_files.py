"""Private files: a library user's store, token and log are the user's alone, whatever the
umask; the log rotates; a launched program does not get the API key."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_agent.core.models import TaskSpec
from desktop_agent.desktop.launch import Launcher
from desktop_agent.instances.registry import ensure_token
from desktop_agent.logs import LOG_NAME, PrivateRotatingFileHandler, log_to_file
from desktop_agent.settings import make_data_dir
from desktop_agent.store import SqliteRunRepository

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    """A umask that lets group and others read: what a library user may well have."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


async def test_a_new_store_and_its_screenshots_are_private(tmp_path: Path) -> None:
    data_dir = tmp_path / "fresh" / "data"
    repo = SqliteRunRepository.open(data_dir)
    try:
        run = await repo.create_run(TaskSpec("look at the screen"))
        shot = await repo.save_artifact(run.id, "0001.jpg", b"\xff\xd8 screen")
        thumb = await repo.save_artifact(run.id, "0001.thumb.jpg", b"\xff\xd8 small")
        assert_private_store(data_dir, data_dir / shot, data_dir / thumb)
    finally:
        repo.close()


def assert_private_store(data_dir: Path, *artifacts: Path) -> None:
    db = data_dir / "history.db"
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    assert wal.exists() and shm.exists()  # WAL: a write made them
    assert mode(data_dir) == 0o700
    assert {mode(p) for p in (db, wal, shm, *artifacts)} == {0o600}
    assert {mode(p.parent) for p in artifacts} == {mode(data_dir / "runs")} == {0o700}
    assert mode(data_dir.parent) == 0o755  # parents are not ours to lock


def test_an_older_store_readable_by_others_is_narrowed(tmp_path: Path) -> None:
    db = tmp_path / "history.db"
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA journal_mode=wal")
    db.chmod(0o644)

    SqliteRunRepository.open(tmp_path).close()

    assert mode(db) == 0o600


def old_install(data_dir: Path) -> dict[str, Path]:
    """A data dir as a version before private files left it: everything readable by all."""
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)
    files = {
        name: data_dir / name
        for name in ("history.db", "api-token", "desktop-agent.log", "desktop-agent.log.1")
    }
    files["screenshot"] = data_dir / "runs" / "r1" / "0001.jpg"
    files["thumbnail"] = data_dir / "runs" / "r1" / "0001.thumb.jpg"
    files["instance"] = data_dir / "instances" / "4242.json"
    for path in files.values():
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        path.parent.chmod(0o755)
        if path.name == "history.db":
            sqlite3.connect(path).close()
        else:
            path.write_bytes(b"private")
        path.chmod(0o644)
    return files


def test_an_existing_data_dir_and_its_files_are_made_private_at_start(tmp_path: Path) -> None:
    from desktop_agent.launch import main

    data_dir = tmp_path / "data"
    files = old_install(data_dir)
    elsewhere = tmp_path / "not-ours.txt"
    elsewhere.write_bytes(b"")
    elsewhere.chmod(0o644)
    (data_dir / "runs" / "r1" / "link.jpg").symlink_to(elsewhere)
    notes = data_dir / "notes.txt"  # the user's own file beside ours
    notes.write_bytes(b"")
    notes.chmod(0o644)

    assert main(["runs", "--data-dir", str(data_dir)]) == 0

    assert mode(data_dir) == 0o700
    for folder in (data_dir / "runs", data_dir / "runs" / "r1", data_dir / "instances"):
        assert mode(folder) == 0o700, folder
    for name, path in files.items():
        assert mode(path) == 0o600, name
    assert mode(elsewhere) == 0o644, "a link was followed out of the data dir"
    assert mode(notes) == 0o644, "a file that is not the app's was changed"


def test_screenshots_are_walked_once_then_only_the_top_is_checked(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    files = old_install(data_dir)
    make_data_dir(data_dir)
    assert mode(files["screenshot"]) == 0o600
    files["screenshot"].chmod(0o644)  # after the pass: not the app's doing, not walked again
    files["api-token"].chmod(0o644)

    make_data_dir(data_dir)

    assert mode(files["screenshot"]) == 0o644
    assert mode(files["api-token"]) == 0o600


def test_a_shared_sticky_folder_as_data_dir_keeps_its_mode_and_is_refused(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp: others' files live there too
    (shared / "api-token").write_bytes(b"token")
    (shared / "api-token").chmod(0o644)

    # anyone may plant a settings file there (tests/unit/store/test_data_dir_owner.py)
    with pytest.raises(PermissionError, match="can be written by others"):
        make_data_dir(shared)

    assert mode(shared) == 0o1777
    assert mode(shared / "api-token") == 0o600  # our own file, narrowed all the same


def test_the_token_and_its_data_dir_are_private(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    ensure_token(data_dir)
    assert mode(data_dir) == 0o700
    assert mode(data_dir / "api-token") == 0o600


@pytest.fixture
def logger() -> Iterator[logging.Logger]:
    log = logging.getLogger("tests.safety.rotation")
    log.propagate = False
    yield log
    for handler in list(log.handlers):
        log.removeHandler(handler)
        handler.close()


def logs_of(logger: logging.Logger) -> list[PrivateRotatingFileHandler]:
    return [h for h in logger.handlers if isinstance(h, PrivateRotatingFileHandler)]


def test_the_log_rotates_past_its_limit_and_every_file_is_private(
    tmp_path: Path, logger: logging.Logger
) -> None:
    path = log_to_file(tmp_path, logger=logger, max_bytes=2000, backup_count=3)
    assert path == tmp_path / LOG_NAME
    for number in range(200):  # about 20 KB: ten times the limit
        logger.info("line %03d %s", number, "x" * 60)

    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [LOG_NAME, f"{LOG_NAME}.1", f"{LOG_NAME}.2", f"{LOG_NAME}.3"]
    assert all(mode(tmp_path / name) == 0o600 for name in names)
    assert all((tmp_path / name).stat().st_size <= 2000 for name in names)
    assert "line 199" in (tmp_path / LOG_NAME).read_text()
    assert "line 000" not in "".join((tmp_path / name).read_text() for name in names)


def test_a_log_is_opened_once_and_moves_with_the_data_dir(
    tmp_path: Path, logger: logging.Logger
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    (first / LOG_NAME).write_text("from an older version\n")
    (first / LOG_NAME).chmod(0o644)

    log_to_file(first, logger=logger)
    log_to_file(first, logger=logger)
    assert len(logs_of(logger)) == 1
    assert mode(first / LOG_NAME) == 0o600
    log_to_file(second, logger=logger)
    logger.info("where am I")

    assert [handler.baseFilename for handler in logs_of(logger)] == [str(second / LOG_NAME)]
    assert "where am I" in (second / LOG_NAME).read_text()
    assert "where am I" not in (first / LOG_NAME).read_text()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/environ")
def test_a_launched_program_does_not_get_the_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("MY_MODEL_KEY", "sk-configured-secret")
    monkeypatch.setenv("HARMLESS_SETTING", "kept")
    sleep = shutil.which("sleep")
    assert sleep is not None

    summary = Launcher(hidden_env=("MY_MODEL_KEY",)).launch(f"{sleep} 60")
    pid = int(summary.rsplit("pid ", 1)[1].rstrip(")"))
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)

    assert b"HARMLESS_SETTING=kept" in environ
    assert not [entry for entry in environ if b"secret" in entry]
    assert not [entry for entry in environ if entry.startswith((b"OPENAI_API_KEY=", b"MY_MODEL"))]


def test_the_entry_point_sets_a_private_umask(tmp_path: Path) -> None:
    script = (
        "import os, sys\n"
        "from desktop_agent.__main__ import main\n"
        "code = main(['runs', '--data-dir', sys.argv[1]])\n"
        "print(oct(os.umask(0o022)), code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.splitlines()[-1] == "0o77 0"
    assert mode(tmp_path / "data") == 0o700


def test_a_file_system_that_refuses_modes_still_opens_the_store_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "history.db"
    sqlite3.connect(db).close()
    db.chmod(0o644)

    def refuse(self: Path, mode: int) -> None:  # what a FAT mount or a share answers
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(Path, "chmod", refuse)
    SqliteRunRepository.open(tmp_path).close()

    assert f"cannot make {db} private (600): Operation not permitted" in caplog.text


def test_the_home_folder_as_data_dir_keeps_its_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    files = old_install(home)
    monkeypatch.setenv("HOME", str(home))

    make_data_dir(home)

    assert mode(home) == 0o755  # other programs may rely on it; only our files are ours
    assert mode(files["api-token"]) == 0o600
    assert mode(files["screenshot"]) == 0o600
