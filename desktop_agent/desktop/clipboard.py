"""Pasting text through the clipboard and putting the previous clipboard text back.

X11: the paste's text is served by a CLIPBOARD owner of our own (python-xlib, on a thread),
which sees the target each request asks for: the paste is done once a *text* target was
served, not guessed (QClipboard belongs to the GUI thread and its owner must keep running its
event loop until the paste is served). Any other target is refused, so a program that asks for
its own format first (a GTK text view: GTK_TEXT_BUFFER_CONTENTS) asks for text next and gets
it, however late. xclip reads the previous text and serves it again afterwards. Windows:
user32's clipboard, with a short settle time. Only text is restored; an image on the clipboard
is lost.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from desktop_agent.core.errors import ToolError
from desktop_agent.desktop.launch import program_env


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
        env=program_env(),
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


#: the targets a text paste asks for (ICCCM 2.6.2, freedesktop's text/plain), as served: the
#: encoding of each; TARGETS lists them
TEXT_TARGETS = {
    "UTF8_STRING": "utf-8",
    "text/plain;charset=utf-8": "utf-8",
    "TEXT": "utf-8",  # the owner picks the type: UTF8_STRING
    "STRING": "latin-1",
    "text/plain": "latin-1",
}


class _TextOwner:
    """The CLIPBOARD owned with one text on an X connection of its own, served on a thread
    until `close()`: TARGETS lists the text targets, a text target gets the text (its type
    UTF8_STRING or STRING), any other is refused. `taken` is set once a text target was served.
    """

    def __init__(self, text: str) -> None:
        from Xlib import X, display

        self.text = text
        self.taken = threading.Event()
        self._display = display.Display()
        self._display.set_error_handler(lambda *_: None)  # a requestor gone meanwhile
        atom = self._display.intern_atom
        self._clipboard = atom("CLIPBOARD")
        self._targets = atom("TARGETS")
        self._utf8 = atom("UTF8_STRING")
        self._encodings = {atom(name): encoding for name, encoding in TEXT_TARGETS.items()}
        root = self._display.screen().root
        self._window = root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)
        self.window_id: int = self._window.id
        self._window.set_selection_owner(self._clipboard, X.CurrentTime)
        owner = self._display.get_selection_owner(self._clipboard)
        if int(getattr(owner, "id", owner) or 0) != self._window.id:
            self._display.close()
            raise ToolError("could not take the clipboard")
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._serve, name="clipboard owner", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        from Xlib import X

        display = self._display
        try:
            while True:
                while display.pending_events():
                    event = display.next_event()
                    if event.type == X.SelectionRequest:
                        self._answer(event)
                ready, _, _ = select.select([display.fileno(), self._wake_r], [], [])
                if self._wake_r in ready:
                    return
        except Exception:  # noqa: BLE001 - the X server went away: nothing more to serve
            return

    def _answer(self, request: Any) -> None:
        from Xlib import X, Xatom
        from Xlib.protocol import event

        # an obsolete requestor names no property: the target is the property (ICCCM 2.2)
        prop = request.property or request.target
        encoding = self._encodings.get(request.target)
        if request.target == self._targets:
            listed = [self._targets, *self._encodings]
            request.requestor.change_property(prop, Xatom.ATOM, 32, listed)
        elif encoding is not None:
            kind = self._utf8 if encoding == "utf-8" else Xatom.STRING
            data = self.text.encode(encoding, "replace")
            request.requestor.change_property(prop, kind, 8, data)
        else:
            prop = X.NONE  # refused: the requestor asks for another target
        request.requestor.send_event(
            event.SelectionNotify(
                time=request.time,
                requestor=request.requestor,
                selection=request.selection,
                target=request.target,
                property=prop,
            )
        )
        self._display.flush()
        if encoding is not None:
            self.taken.set()

    def close(self) -> None:
        """Stop serving and close the connection (the clipboard has no owner then, unless
        another program took it)."""
        os.write(self._wake_w, b"x")
        self._thread.join(5)
        os.close(self._wake_r)
        os.close(self._wake_w)
        with contextlib.suppress(Exception):
            self._display.close()


class XclipPaster:
    """Clipboard paste on X11: our own owner serves the paste (`_TextOwner`), xclip (Debian
    package `xclip`) reads the previous text and serves it again."""

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
                env=program_env(),
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
            owner = _TextOwner(text)
            try:
                press_paste()
                if not owner.taken.wait(self.request_timeout_s):
                    raise ToolError(
                        "the focused window did not take the paste (no clipboard request)"
                    )
                # some programs (l3afpad) take the clipboard over with the pasted text just
                # after the paste: the restore comes after that, or after settle_s
                watch.wait_change(owner.window_id, timeout=self.settle_s)
            finally:
                self._restore(previous, watch)
                owner.close()
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
                env=program_env(),
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
        # CF_UNICODETEXT's lines end in CRLF: a lone LF is no line break to many programs
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        try:
            clipboard.set_text(text)
            if clipboard.get_text() != text:
                raise ToolError("the text did not reach the clipboard; nothing was pasted")
            press_paste()
            time.sleep(self.settle_s)
        finally:
            with contextlib.suppress(OSError):
                clipboard.set_text(previous)
