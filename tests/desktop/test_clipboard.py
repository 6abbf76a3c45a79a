"""The clipboard paste on the test desktop (desktop/clipboard.py): the pasted text is what the
pasting program reads, however it asks, and the user's text is back afterwards."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

from desktop_agent.desktop.clipboard import XclipPaster
from tests.support.xdisplay import XSession

#: a loaded machine between a program's two requests of one paste
SLOW_S = 0.5


def read_clipboard(target: str) -> str | None:
    done = subprocess.run(
        ["xclip", "-selection", "clipboard", "-o", "-t", target],
        capture_output=True,
        timeout=10,
        check=False,
    )
    if done.returncode != 0:
        return None
    return done.stdout.decode("latin-1" if target == "STRING" else "utf-8")


def set_clipboard(text: str) -> None:
    subprocess.run(["xclip", "-selection", "clipboard", "-i"], input=text.encode(), check=True)


def test_a_program_that_asks_for_its_own_format_first_then_slowly_for_text_gets_the_paste(
    xsession_env: XSession,
) -> None:
    # a GTK text view's ctrl+v asks for GTK_TEXT_BUFFER_CONTENTS, then (a main loop turn later:
    # late on a loaded machine) for the text; the paste must still be there when it does
    set_clipboard("what the user had copied")
    asked: list[str | None] = []

    def gtk_text_view_pastes() -> None:
        asked.append(read_clipboard("GTK_TEXT_BUFFER_CONTENTS"))
        time.sleep(SLOW_S)
        asked.append(read_clipboard("UTF8_STRING"))

    app = threading.Thread(target=gtk_text_view_pastes)
    XclipPaster().paste("héllo wörld €", app.start)
    app.join(30)

    assert asked[1] == "héllo wörld €"
    assert read_clipboard("UTF8_STRING") == "what the user had copied"


@pytest.mark.parametrize(
    ("target", "served"),
    [
        ("UTF8_STRING", "Grüße €"),
        ("text/plain;charset=utf-8", "Grüße €"),
        ("STRING", "Grüße ?"),  # ICCCM: Latin-1
    ],
)
def test_the_paste_is_listed_in_targets_and_served_as_the_text_target_asks(
    xsession_env: XSession, target: str, served: str
) -> None:
    set_clipboard("before")
    got: dict[str, str | None] = {}

    def pastes() -> None:
        got["TARGETS"] = read_clipboard("TARGETS")
        got[target] = read_clipboard(target)

    app = threading.Thread(target=pastes)
    XclipPaster().paste("Grüße €", app.start)
    app.join(30)

    assert target in (got["TARGETS"] or "").split()
    assert got[target] == served
    assert read_clipboard("UTF8_STRING") == "before"
