"""The approval dialog in a process of its own: `desktop-agent mcp`'s or `serve`'s question
to the person here.

`desktop-agent mcp` and `serve` (host/person.py) start this process for a question when no
app runs on its data dir: it reads one JSON line on stdin (the request, its secret, the data
dir), shows the app's own ApprovalDialog and writes the answer (`once`, `run` or `deny`) as
one line on stdout; the end of its stdin (the server gone) closes it unanswered. Its own
process, not a Qt thread of the server's: Qt's GUI wants the main thread (on macOS it must be), the
server's main thread runs its event loop, and Python's collector would free Qt objects on
whichever thread allocates (tests/conftest.py, ui/collector.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QApplication

from desktop_agent.core.models import ApprovalDecision
from desktop_agent.core.text import one_line
from desktop_agent.core.tools import describe_validation_error
from desktop_agent.host.display import windows_on_the_accessibility_bus
from desktop_agent.instances.ask_approval import AskApproval
from desktop_agent.ui.approval import ApprovalDialog, Clock

#: the app's X11 WM_CLASS and name: the gate knows its windows as the app's own (never a
#: target of input, never listed to the model: core/own_windows.py)
APP_NAME = "desktop-agent"


def build_dialog(message: dict[str, Any], *, clock: Clock = time.monotonic) -> ApprovalDialog:
    """The dialog for one question as sent by host/person.py; a bad message is a ValueError."""
    request = AskApproval.model_validate(message.get("request")).request()
    secret = message.get("secret", "")
    if not isinstance(secret, str):
        raise TypeError("secret: a string is needed")
    request = dataclasses.replace(request, secret=secret)
    dialog = ApprovalDialog(None, request, Path(str(message["data_dir"])), clock=clock)
    dialog.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint)
    return dialog


class ServerWatch(QObject):
    """The server keeps this process's stdin open while it waits for the answer: its end is
    the server's (it ended, or was killed), and the question goes with it.

    Signals:
        gone: stdin reached its end.
    """

    gone = Signal()

    def read_to_the_end(self, stdin: IO[str]) -> None:
        """On a thread of its own (a blocking read, on every platform's pipes)."""
        with contextlib.suppress(OSError, ValueError):
            while stdin.readline():
                pass
        self.gone.emit()


def main(stdin: IO[str] = sys.stdin, stdout: IO[str] = sys.stdout) -> int:
    """Ask once; the answer on stdout (a bad message: an error on stderr, exit code 3)."""
    try:
        dialog_message = json.loads(stdin.readline())
        windows_on_the_accessibility_bus()  # the focus probe sees this window on Wayland
        app = QApplication.instance() or QApplication([APP_NAME])
        assert isinstance(app, QApplication)
        app.setApplicationName(APP_NAME)
        app.setDesktopFileName(APP_NAME)
        dialog = build_dialog(dialog_message)
    except ValidationError as error:
        return _refused(describe_validation_error(error))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        return _refused(one_line(error))

    def on_decided(decision: object) -> None:
        if isinstance(decision, ApprovalDecision):
            stdout.write(f"{decision.value}\n")
            stdout.flush()
        app.quit()

    dialog.decided.connect(on_decided)

    def on_server_gone() -> None:
        dialog.dismiss()  # closed without an answer: nobody awaits one
        app.quit()

    watch = ServerWatch()
    watch.gone.connect(on_server_gone)  # queued to this thread: it comes from the reader's
    threading.Thread(target=watch.read_to_the_end, args=(stdin,), daemon=True).start()
    dialog.open()
    dialog.raise_()
    dialog.activateWindow()
    app.exec()
    return 0


def _refused(why: str) -> int:
    print(f"desktop-agent: not an approval question: {one_line(why)}", file=sys.stderr)
    return 3
