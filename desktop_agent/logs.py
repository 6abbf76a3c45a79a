"""The log file in the data dir: desktop-agent.log, 0600, rotated at 2 MB keeping 5 old files."""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path

from desktop_agent.store.private_files import private_opener, restrict

LOG_NAME = "desktop-agent.log"
MAX_BYTES = 2 * 1024 * 1024
BACKUP_COUNT = 5
FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


class PrivateRotatingFileHandler(logging.FileHandler):
    """A log file that rotates by size as the standard library's RotatingFileHandler does
    (Lib/logging/handlers.py, `RotatingFileHandler.shouldRollover` / `doRollover`: before a
    record that would take the file to `max_bytes`, file.N becomes file.N+1 for N from
    `backup_count` - 1 down, the file becomes file.1 and a new one is opened), whose files
    are 0600 whatever the umask (the log may quote goals and errors), the new one after a
    rollover too.

    Not that class itself: logging.handlers imports socket and pickle, some 9 ms of the app's
    way to its first paint, where the log is opened."""

    def __init__(self, path: Path, *, max_bytes: int, backup_count: int) -> None:
        super().__init__(path, "a", encoding="utf-8")
        self.max_bytes = max_bytes
        self.backup_count = backup_count

    def _open(self) -> io.TextIOWrapper:
        # FileHandler opens (and reopens after a rollover) through this one method; a
        # rotating handler always appends.
        return open(  # noqa: SIM115 - the handler owns and closes the stream
            self.baseFilename,
            "a",
            encoding=self.encoding,
            errors=self.errors,
            opener=private_opener,
        )

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self._should_roll_over(record):
                self._roll_over()
            super().emit(record)
        except Exception:  # noqa: BLE001 - logging's own rule: a record never raises
            self.handleError(record)

    def _should_roll_over(self, record: logging.LogRecord) -> bool:
        if self.max_bytes <= 0:
            return False
        if os.path.exists(self.baseFilename) and not os.path.isfile(self.baseFilename):
            return False  # never a device or a pipe (bpo-45401)
        if self.stream is None:
            self.stream = self._open()
        line = f"{self.format(record)}\n"
        self.stream.seek(0, 2)  # the end, also where appends do not move the position
        return self.stream.tell() + len(line) >= self.max_bytes

    def _roll_over(self) -> None:
        if self.stream:
            self.stream.close()
            self.stream = None
        if self.backup_count > 0:
            for number in range(self.backup_count - 1, 0, -1):
                older, newer = f"{self.baseFilename}.{number}", f"{self.baseFilename}.{number + 1}"
                if os.path.exists(older):
                    if os.path.exists(newer):
                        os.remove(newer)
                    os.rename(older, newer)
            first = f"{self.baseFilename}.1"
            if os.path.exists(first):
                os.remove(first)
            if os.path.exists(self.baseFilename):
                os.rename(self.baseFilename, first)
        self.stream = self._open()


def log_to_file(
    data_dir: Path,
    *,
    logger: logging.Logger | None = None,
    max_bytes: int = MAX_BYTES,
    backup_count: int = BACKUP_COUNT,
) -> Path | None:
    """Send `logger`'s records (default: the root logger's) at INFO and up to the data
    dir's log; the log's path, or None when it cannot be opened (logging is not worth
    failing for). A logger has one such log: a second call for the same file does
    nothing, one for another data dir moves the log there."""
    target = logging.getLogger() if logger is None else logger
    path = Path(data_dir) / LOG_NAME
    for handler in list(target.handlers):
        if isinstance(handler, PrivateRotatingFileHandler):
            if handler.baseFilename == os.path.abspath(path):
                return path
            target.removeHandler(handler)
            handler.close()
    try:
        # a log (or old log) an earlier version left readable by others
        for suffix in ("", *(f".{number}" for number in range(1, backup_count + 1))):
            restrict(Path(f"{path}{suffix}"))
        handler = PrivateRotatingFileHandler(path, max_bytes=max_bytes, backup_count=backup_count)
    except OSError:
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    target.addHandler(handler)
    target.setLevel(logging.INFO)
    return path
