"""The log file in the data dir: desktop-agent.log, 0600, rotated at 2 MB keeping 5 old files."""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
from pathlib import Path

from desktop_agent.store.private_files import private_opener, restrict

LOG_NAME = "desktop-agent.log"
MAX_BYTES = 2 * 1024 * 1024
BACKUP_COUNT = 5
FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A RotatingFileHandler whose files are 0600 whatever the umask (the log may quote
    goals and errors), the new one after a rollover too."""

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
        handler = PrivateRotatingFileHandler(
            path, maxBytes=max_bytes, backupCount=backup_count, encoding="utf-8"
        )
    except OSError:
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    target.addHandler(handler)
    target.setLevel(logging.INFO)
    return path
