"""The eval's progress: a bar redrawn in place on a terminal, a plain line per task elsewhere."""

from __future__ import annotations

import shutil
import threading
import unicodedata
from typing import TextIO

from desktop_agent.core.text import one_line
from desktop_agent.eval.runner import TaskResult

BAR_WIDTH = 20
#: carriage return and erase to the end of the line: the status line drawn again in place
REDRAW = "\r\x1b[K"


def _cells(char: str) -> int:
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def fit(text: str, width: int) -> str:
    """`text` cut to `width` terminal cells (wide characters take two), ending in '…' if cut:
    a status line that wrapped could not be drawn again in place."""
    if sum(map(_cells, text)) <= width:
        return text
    out, used = [], 0
    for char in text:
        if used + _cells(char) > width - 1:
            break
        out.append(char)
        used += _cells(char)
    return "".join(out) + "…"


def _bar(done: int, total: int) -> str:
    filled = round(BAR_WIDTH * done / total) if total else BAR_WIDTH
    return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}"


def task_line(result: TaskResult, done: int, total: int) -> str:
    """One finished task: the bar, done/total, its id, status and why (task and app text are
    data: shown escaped, on one line)."""
    tail = f" — {result.reason}" if result.status != "passed" and result.reason else ""
    return one_line(f"{_bar(done, total)} {result.task}: {result.status}{tail}")


class Progress:
    """Told as each task starts and ends (from the suite's pool threads), it shows the eval's
    progress on `stream`.

    On a terminal (`terminal`): each finished task's line, and under them one status line
    drawn again in place — the bar, tasks done of all, passed and failed so far, the tasks
    under way — cut to the terminal's width (a wrapped line could not be drawn again).
    Elsewhere (a pipe, a file, a CI log): the finished tasks' lines only, with no control
    sequence.
    """

    def __init__(self, stream: TextIO, total: int, *, terminal: bool) -> None:
        self._stream = stream
        self._total = total
        self._terminal = terminal
        self._lock = threading.Lock()
        self._running: list[str] = []
        self._done = 0
        self._counts: dict[str, int] = {}
        self._drawn = False

    def started(self, task: str) -> None:
        with self._lock:
            self._running.append(task)
            self._draw_status()

    def finished(self, result: TaskResult) -> None:
        with self._lock:
            if result.task in self._running:
                self._running.remove(result.task)
            self._done += 1
            self._counts[result.status] = self._counts.get(result.status, 0) + 1
            line = task_line(result, self._done, self._total)
            if self._terminal:
                # whole: only the status line is drawn again, and must not wrap
                self._stream.write(REDRAW + line + "\n")
                self._drawn = False
                self._draw_status()
            else:
                self._stream.write(line + "\n")
            self._stream.flush()

    def close(self) -> None:
        """End the status line, so what follows starts on a line of its own."""
        with self._lock:
            if self._drawn:
                self._stream.write(REDRAW)
                self._stream.flush()
                self._drawn = False

    def status(self) -> str:
        """The status line: bar, done/total, passed and failed so far, the tasks under way."""
        filled = round(BAR_WIDTH * self._done / self._total) if self._total else BAR_WIDTH
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        counts = [
            f"{self._counts.get('passed', 0)} passed",
            f"{self._counts.get('failed', 0)} failed",
        ]
        counts += [
            f"{self._counts[other]} {other.replace('_', ' ')}"
            for other in ("setup_failed", "stopped")
            if self._counts.get(other)
        ]
        now = f" — now {', '.join(self._running)}" if self._running else ""
        return one_line(f"[{bar}] {self._done}/{self._total} ({', '.join(counts)}){now}")

    def _draw_status(self) -> None:
        if not self._terminal:
            return
        self._stream.write(REDRAW + fit(self.status(), self._width()))
        self._stream.flush()
        self._drawn = True

    @staticmethod
    def _width() -> int:
        # one cell short of the edge: some terminals wrap a line that fills the last cell
        return max(20, shutil.get_terminal_size().columns - 1)
