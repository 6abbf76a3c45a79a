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

    A folder that exists already is left as it is: the user may have chosen a shared
    place on purpose, and the files in it are private anyway.
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
