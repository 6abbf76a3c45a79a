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
from typing import Any, Protocol

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


class _ClipboardOwner:
    """Who owns the CLIPBOARD selection (python-xlib). xclip prints that it waits for requests
    before its XSetSelectionOwner leaves its output buffer, so ownership is checked here."""

    def __init__(self) -> None:
        from Xlib import display

        self._display = display.Display()
        self._atom = self._display.intern_atom("CLIPBOARD")

    def current(self) -> int:
        owner = self._display.get_selection_owner(self._atom)
        return int(getattr(owner, "id", owner) or 0)

    def wait_change(self, before: int, timeout: float = 2.0) -> bool:
        deadline = time.monotonic() + timeout
        while self.current() == before:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)
        return True

    def close(self) -> None:
        self._display.close()


def _xclip_in(data: bytes, watch: _ClipboardOwner) -> tuple[subprocess.Popen[bytes], _StderrLines]:
    """A foreground xclip owning the clipboard with `data`, once it really owns it."""
    before = watch.current()
    process = subprocess.Popen(
        ["xclip", "-selection", "clipboard", "-i", "-quiet", "-verbose"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdin is not None
    process.stdin.write(data)
    process.stdin.close()
    lines = _StderrLines(process)
    if not (
        lines.read_until(lambda seen: any("number 1" in s for s in seen), 2.0)
        and watch.wait_change(before)
    ):
        _end(process)
        raise ToolError("xclip could not take the clipboard")
    return process, lines


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
        watch = _ClipboardOwner()
        try:
            owner, lines = _xclip_in(text.encode("utf-8"), watch)
            try:
                press_paste()
                if not lines.read_until(lambda _: lines.served() >= 1, self.request_timeout_s):
                    raise ToolError(
                        "the focused window did not take the paste (no clipboard request)"
                    )
                # some programs ask twice (TARGETS, then the text): wait until requests stop
                while lines.read_until(_more_than(lines, lines.served()), self.settle_s):
                    pass
            finally:
                self._restore(previous, watch)
                _end(owner)
        finally:
            watch.close()

    def _restore(self, previous: str | None, watch: _ClipboardOwner) -> None:
        """Put the previous text back. Some programs (l3afpad) take the clipboard over with
        the pasted text, so this does not depend on our xclip still owning it."""
        if previous is None:
            # nobody owned text before: own the clipboard and let go, leaving no owner
            with contextlib.suppress(ToolError):
                _end(_xclip_in(b" ", watch)[0])
            return
        before = watch.current()
        # a background xclip serves it from now on; no pipes, which it would hold open
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(
                ["xclip", "-selection", "clipboard", "-i"],
                input=previous.encode("utf-8"),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=2,
                check=False,
            )
        watch.wait_change(before)


def _end(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stderr is not None:
        process.stderr.close()


class WindowsPaster:
    """Clipboard paste on Windows; Windows does not say when the paste was read, so wait.

    The text is read back before ctrl+v: a clipboard that did not take it fails the step,
    rather than pasting what was there before and calling that a success.
    """

    def __init__(self, *, settle_s: float = 0.3) -> None:
        self.settle_s = settle_s

    def paste(self, text: str, press_paste: Callable[[], None]) -> None:
        from desktop_agent.desktop.win32 import Win32Clipboard

        try:
            with Win32Clipboard() as clipboard:
                self._paste(clipboard, text, press_paste)
        except OSError as error:
            raise ToolError(f"cannot use the clipboard: {error}") from None

    def _paste(self, clipboard: Any, text: str, press_paste: Callable[[], None]) -> None:
        previous = clipboard.get_text()
        try:
            clipboard.set_text(text)
            if clipboard.get_text() != text:
                raise ToolError("the text did not reach the clipboard; nothing was pasted")
            press_paste()
            time.sleep(self.settle_s)
        finally:
            with contextlib.suppress(OSError):
                clipboard.set_text(previous)
