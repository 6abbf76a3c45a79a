"""The CLI's output where the process has no console: each line goes to the log instead.

The windowed Windows programs (`desktop-agent-app.exe`, a gui-script; the frozen
`desktop-agent.exe`, built with console=False) start a sub-command with `sys.stdout`,
`sys.stderr` (and `sys.stdin`) None: a `write` would raise AttributeError and the run would
end with a traceback nobody sees and exit 1. For the length of a sub-command the missing
streams are stand-ins that log each line (stdout at INFO, stderr at WARNING) to the data
dir's log, so what the command says is kept and its exit code is the documented one.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
from collections.abc import Iterator

#: the loggers the stand-ins write to, named for the stream they stand in for
STDOUT_LOGGER = "desktop_agent.stdout"
STDERR_LOGGER = "desktop_agent.stderr"


class LogStream(io.TextIOBase):
    """A text stream that logs each line written to it; a partial line waits for its end
    (or for `close`). Not a terminal, and no file descriptor."""

    def __init__(self, logger: logging.Logger, level: int) -> None:
        super().__init__()
        self._logger = logger
        self._level = level
        self._partial = ""
        # a record that cannot be handled goes to logging's last resort, which writes to
        # sys.stderr: this stream, when it stands in for it; that line is dropped
        self._emitting = False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            self._emit(line)
        return len(text)

    def close(self) -> None:
        if not self.closed and self._partial:
            self._emit(self._partial)
            self._partial = ""
        super().close()

    def _emit(self, line: str) -> None:
        if self._emitting or not line.strip():
            return
        self._emitting = True
        try:
            self._logger.log(self._level, "%s", line)
        finally:
            self._emitting = False


def has_no_console() -> bool:
    """Whether this process was started without a console (the output is the log's)."""
    return any(
        isinstance(stream, LogStream) or stream is None for stream in (sys.stdout, sys.stderr)
    )


@contextlib.contextmanager
def output_to_log() -> Iterator[None]:
    """Within the block, `sys.stdout` and `sys.stderr` are never None: a missing one is a
    LogStream (the log file is opened by the command: `setup.log_to_file`)."""
    stand_ins: dict[str, LogStream] = {}
    if sys.stdout is None:
        stand_ins["stdout"] = LogStream(logging.getLogger(STDOUT_LOGGER), logging.INFO)
    if sys.stderr is None:
        stand_ins["stderr"] = LogStream(logging.getLogger(STDERR_LOGGER), logging.WARNING)
    for name, stream in stand_ins.items():
        setattr(sys, name, stream)
    try:
        yield
    finally:
        for name, stream in stand_ins.items():
            stream.close()
            if getattr(sys, name) is stream:
                setattr(sys, name, None)
