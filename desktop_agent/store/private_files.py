"""Files and folders only their owner may read: the data dir 0700, the files in it 0600.

The process umask (077, set by `desktop-agent` at entry) covers everything the process
makes; these helpers set the modes explicitly as well, for a library user who never
went through the entry point. On Windows the modes are left to the folder's ACL.
"""

from __future__ import annotations

import logging
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
#: what the entry point sets: nothing it makes is readable by group or others
PRIVATE_UMASK = 0o077
#: Windows errors of a file another process has open without FILE_SHARE_DELETE
#: (ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION): Python's own open() asks for no such
#: sharing, so a reader of the file holds off a rename onto it or its removal
_SHARING_ERRORS = (5, 32)
#: how long a replace or a removal waits for such readers (they read a few bytes)
SHARING_WAIT_S = 2.0
_SHARING_RETRY_S = 0.01


def make_private_dir(path: Path) -> Path:
    """Create `path` 0700 (its missing parents with the usual modes); `path`.

    A folder that exists already is left as it is here (the data dir is tightened at start
    by `tighten_data_dir`, with the care a folder the user chose needs).
    """
    path = Path(path)
    if path.is_dir():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=PRIVATE_DIR_MODE)
    except FileExistsError:
        if path.is_dir():
            return path  # made by another process in the meantime
        raise
    _chmod(path, PRIVATE_DIR_MODE)  # mkdir's mode passes through the umask
    return path


#: what the app keeps at the top of a data dir (the rest of a shared folder is not ours)
_OWN_FILES = ("history.db", "history.db-wal", "history.db-shm", "api-token", "api-token.lock",
              "settings.toml", "desktop-agent.log")  # fmt: skip
_OWN_FOLDERS = ("runs", "instances")
#: written once the folders above were walked: files made since are private when made
TIGHTENED_MARK = ".private"


def tighten_data_dir(path: Path) -> None:
    """Make an existing data dir private, as a new one is: an install from before the files
    were made private left the history, the token, the log and the screenshots readable by
    others on a shared machine.

    The folder itself becomes 0700 when it is the user's own and plainly a folder of its own
    (not a sticky shared one like /tmp, not the home folder, not a file system's root); the
    app's files in it become 0600 and `runs/` and `instances/` (walked once, then marked)
    0700/0600. Symbolic links are never followed, and nothing else in the folder is touched.
    """
    if sys.platform == "win32":
        return
    path = Path(path)
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if _own_folder(path, info) and stat.S_IMODE(info.st_mode) & ~PRIVATE_DIR_MODE:
        log.info("made the data dir %s private (was %o)", path, stat.S_IMODE(info.st_mode))
        _chmod(path, PRIVATE_DIR_MODE)
    for name in _OWN_FILES:
        _restrict_entry(path / name, PRIVATE_FILE_MODE)
    for rotated in path.glob("desktop-agent.log.*"):
        _restrict_entry(rotated, PRIVATE_FILE_MODE)
    mark = path / TIGHTENED_MARK
    if mark.exists():
        return
    for name in _OWN_FOLDERS:
        _restrict_tree(path / name)
    try:
        write_private(mark, b"the files below were made private\n")
    except OSError as error:
        log.info("cannot mark %s as made private: %s", path, error.strerror or error)


def _own_folder(path: Path, info: os.stat_result) -> bool:
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & stat.S_ISVTX:
        return False
    if info.st_uid != os.geteuid():
        return False
    resolved = path.resolve()
    try:
        home = Path.home().resolve()
    except RuntimeError:  # no home folder can be determined: nothing to mistake it for
        home = None
    return resolved != home and resolved != Path(resolved.anchor)


def _restrict_entry(path: Path, mode: int) -> None:
    """`path` to `mode` when it grants more, unless it is a link (or missing)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        return
    if stat.S_IMODE(info.st_mode) & ~mode:
        _chmod(path, mode)


def _restrict_tree(folder: Path) -> None:
    """`folder` 0700 and everything below it 0700 (folders) / 0600 (files), links skipped."""
    try:
        info = folder.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        return
    _restrict_entry(folder, PRIVATE_DIR_MODE)
    try:
        entries = list(os.scandir(folder))
    except OSError as error:
        log.warning("cannot list %s to make it private: %s", folder, error.strerror or error)
        return
    for entry in entries:
        if entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            _restrict_tree(Path(entry.path))
        else:
            _restrict_entry(Path(entry.path), PRIVATE_FILE_MODE)


def restrict(path: Path) -> None:
    """Make an existing file 0600 when group or others may read it; a missing file is fine."""
    if sys.platform == "win32":
        return
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    if mode & ~PRIVATE_FILE_MODE:
        _chmod(Path(path), PRIVATE_FILE_MODE)


def private_opener(path: str, flags: int) -> int:
    """An `opener` for open(): a file it creates is 0600 whatever the umask."""
    return os.open(path, flags, PRIVATE_FILE_MODE)


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` (created 0600, or truncated); FileNotFoundError without its folder."""
    with open(path, "wb", opener=private_opener) as file:
        file.write(data)


@contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created 0600, kept) across processes.

    The OS drops the lock when its holder dies, so a crash leaves nothing to clean up.
    """
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        if sys.platform == "win32":
            import msvcrt

            # the first byte, from the file's position 0; retries for 10 s, then raises
            msvcrt.locking(descriptor, msvcrt.LK_LOCK, 1)
            try:
                yield
            finally:
                os.lseek(descriptor, 0, os.SEEK_SET)
                msvcrt.locking(descriptor, msvcrt.LK_UNLCK, 1)  # Windows may not at close
        else:
            import fcntl

            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield  # close releases it
    finally:
        os.close(descriptor)


def replace_file(source: Path, target: Path) -> None:
    """os.replace(source, target), waiting out a reader that has `target` open on Windows."""
    _while_shared(lambda: os.replace(source, target))


def remove_file(path: Path) -> None:
    """Remove `path` (a missing one is fine), waiting out a reader that has it open on
    Windows."""
    _while_shared(lambda: Path(path).unlink(missing_ok=True))


def _while_shared(action: Callable[[], None]) -> None:
    deadline = time.monotonic() + SHARING_WAIT_S
    while True:
        try:
            action()
            return
        except PermissionError as error:
            if getattr(error, "winerror", None) not in _SHARING_ERRORS:
                raise
            if time.monotonic() >= deadline:
                raise
        time.sleep(_SHARING_RETRY_S)


def _chmod(path: Path, mode: int) -> None:
    """Set the mode; a file system that cannot (FAT, some network shares) or a file of
    another user is a warning, not a reason to refuse the history or the log."""
    if sys.platform == "win32":
        return
    try:
        path.chmod(mode)
    except OSError as error:
        log.warning("cannot make %s private (%o): %s", path, mode, error.strerror or error)
