"""Pasting text through the clipboard and putting the previous clipboard text back.

X11: `xclip` owns the CLIPBOARD selection in the foreground with -verbose, so its stderr says
when the target application fetched the text: the paste is known to be done, not guessed
(QClipboard belongs to the GUI thread and its owner must keep running its event loop until the
paste is served; xclip needs neither). Windows: user32's clipboard, with a short settle time.
Only text is restored; an image on the clipboard is lost.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Protocol

from desktop_agent.core.errors import ToolError


class Paster(Protocol):
    def paste(self, text: str, press_paste: Callable[[], None]) -> None:
        """Put `text` on the clipboard, call press_paste (ctrl+v), restore the clipboard."""
        ...


def default_paster() -> Paster:
    if sys.platform == "win32":
        return WindowsPaster()
    return XclipPaster()


class _StderrLines:
    """Lines of a child's stderr, read without blocking past a deadline."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stderr is not None
        self._fd = process.stderr.fileno()
        self._buffer = b""
        self.lines: list[str] = []

    def read_until(self, wanted: Callable[[list[str]], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not wanted(self.lines):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if not ready:
                return False
            chunk = os.read(self._fd, 4096)
            if not chunk:
                return wanted(self.lines)
            self._buffer += chunk
            *done, self._buffer = self._buffer.split(b"\n")
            self.lines.extend(line.decode("utf-8", "replace") for line in done)
        return True

    def served(self) -> int:
        """How many selection requests xclip has answered."""
        waiting = [line for line in self.lines if "Waiting for selection request number" in line]
        return max(0, len(waiting) - 1)


def _more_than(lines: _StderrLines, count: int) -> Callable[[list[str]], bool]:
    return lambda _: lines.served() > count


class XclipPaster:
    """Clipboard paste on X11 through xclip (Debian package `xclip`)."""

    def __init__(self, *, request_timeout_s: float = 2.0, settle_s: float = 0.15) -> None:
        self.request_timeout_s = request_timeout_s
        self.settle_s = settle_s

    def read(self) -> str | None:
        """The clipboard's text now, or None when it holds no text (or nobody owns it)."""
        try:
            result = subprocess.run(
                ["xclip", "-selection", "clipboard", "-o", "-t", "UTF8_STRING"],
                capture_output=True,
                timeout=2,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None
        return result.stdout.decode("utf-8", "replace") if result.returncode == 0 else None

    def paste(self, text: str, press_paste: Callable[[], None]) -> None:
        if shutil.which("xclip") is None:
            raise ToolError("typing non-ASCII text needs xclip on X11 (apt install xclip)")
        previous = self.read()
        owner = subprocess.Popen(
            ["xclip", "-selection", "clipboard", "-i", "-quiet", "-verbose"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            assert owner.stdin is not None
            owner.stdin.write(text.encode("utf-8"))
            owner.stdin.close()
            lines = _StderrLines(owner)
            if not lines.read_until(lambda seen: any("number 1" in s for s in seen), 2.0):
                raise ToolError("xclip could not take the clipboard")
            press_paste()
            if not lines.read_until(lambda _: lines.served() >= 1, self.request_timeout_s):
                raise ToolError("the focused window did not take the paste (no clipboard request)")
            # some programs ask twice (TARGETS, then the text): wait until the requests stop
            while lines.read_until(_more_than(lines, lines.served()), self.settle_s):
                pass
        finally:
            self._restore(previous, owner)

    def _restore(self, previous: str | None, owner: subprocess.Popen[bytes]) -> None:
        if previous is not None and owner.poll() is None:
            # a new background xclip takes the selection over; ours sees SelectionClear and exits
            # no pipes: the forked background xclip would hold them open
            with contextlib.suppress(subprocess.TimeoutExpired):
                subprocess.run(
                    ["xclip", "-selection", "clipboard", "-i"],
                    input=previous.encode("utf-8"),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=2,
                    check=False,
                )
        else:
            owner.terminate()  # nobody owned text before: leave the clipboard empty again
        try:
            owner.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            owner.kill()
            owner.wait()
        if owner.stderr is not None:
            owner.stderr.close()


class WindowsPaster:
    """Clipboard paste on Windows; Windows does not say when the paste was read, so wait."""

    def __init__(self, *, settle_s: float = 0.3) -> None:
        self.settle_s = settle_s

    def paste(self, text: str, press_paste: Callable[[], None]) -> None:
        from desktop_agent.desktop.win32 import Win32Clipboard

        clipboard = Win32Clipboard()
        try:
            previous = clipboard.get_text()
            clipboard.set_text(text)
        except OSError as error:
            raise ToolError(f"cannot use the clipboard: {error}") from None
        try:
            press_paste()
            time.sleep(self.settle_s)
        finally:
            with contextlib.suppress(OSError):
                clipboard.set_text(previous)
