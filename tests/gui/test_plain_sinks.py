"""Every label and tooltip that shows text from outside (a goal, a routine's goal, a model or
server name, an error, the hotkey's problem) shows it as text: `<img src>`, `<a href>` and
`<b>` come out as typed, and no image is loaded (ui/text.py plain_label, plain_tooltip)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import Qt as QtGui
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel, QLineEdit, QToolTip

from desktop_agent.core.events import RunStarted, StartRefused
from desktop_agent.core.model_servers import Discovery, FoundModel, FoundServer
from desktop_agent.core.models import RunStatus
from desktop_agent.core.routine import Routine
from desktop_agent.ui.model_servers import ModelServersDialog
from desktop_agent.ui.routines import RoutinesPanel
from desktop_agent.ui.task_panel import TaskPanel
from tests.gui.test_history_and_keys import run_view
from tests.gui.test_screen_text_labels import action

pytestmark = [pytest.mark.gui]


#: opens the FIFO for writing without blocking, which succeeds only while a reader has it
#: open (fifo(7)), and closes it at once: a reader blocked in open(2) gets EOF; one line per
#: open seen
_WATCHER = """
import errno, os, sys, time
while True:
    try:
        os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK))
    except OSError as error:
        if error.errno != errno.ENXIO:
            raise
    else:
        print("opened", flush=True)
    time.sleep(0.001)
"""


class FifoWatch:
    """A FIFO whose opening by a reader is seen. The watcher is a process of its own: the
    GUI thread blocked in Qt's open(2) holds the GIL (PySide does not let it go there), so
    a thread of this process could not free it."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self._process = subprocess.Popen(
            [sys.executable, "-c", _WATCHER, str(path)], stdout=subprocess.PIPE, text=True
        )
        self._opened: int | None = None

    def close(self) -> int:
        """Stop watching; how many times a reader opened the FIFO."""
        if self._opened is None:
            # gone first: a widget laid out again later (a tooltip hiding) finds no FIFO to
            # block on; a reader in open(2) now is still let go by the watcher
            self.path.unlink()
            self._process.terminate()
            out, _ = self._process.communicate()
            self._opened = out.count("opened")
        return self._opened


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[FifoWatch]:
    watch = FifoWatch(tmp_path / "fifo")
    yield watch
    watch.close()  # (again, after a failure: the process is ended either way)


def hostile(fifo: FifoWatch) -> list[str]:
    return [
        f'<img src="{fifo.path}">a',
        '<a href="https://evil.example">Allow</a>',
        "<b>Safe</b> model",
    ]


def shown_label(label: QLabel) -> str:
    """What a QLabel shows: its text, or the text of the document Qt makes of it."""
    label.grab()  # laid out and painted, as on screen: rich text loads its images here
    text = label.text()
    rich = label.textFormat() == Qt.TextFormat.RichText or (
        label.textFormat() == Qt.TextFormat.AutoText and QtGui.mightBeRichText(text)
    )
    return _document_text(text) if rich else text


def shown_tooltip(tip: str) -> str:
    """What QToolTip shows of a tooltip string (it takes it for rich text as Qt.mightBeRichText
    does), shown for real so an `<img>` in it would be loaded."""
    QToolTip.showText(QPoint(0, 0), tip)
    QToolTip.hideText()
    return _document_text(tip).replace("\u2028", "\n") if QtGui.mightBeRichText(tip) else tip


def _document_text(html: str) -> str:
    document = QTextDocument()
    document.setHtml(html)
    return document.toPlainText()


def routine_tooltip(qtbot: Any, raw: str) -> list[tuple[str, str]]:
    panel = RoutinesPanel()
    qtbot.addWidget(panel)
    panel.set_routines([Routine(name=raw, goal=raw, steps=())])
    item = panel.list.item(0)
    return [(shown_tooltip(item.toolTip()), raw), (item.text(), f"{raw} — 0 steps")]


def start_refused_error(qtbot: Any, raw: str) -> list[tuple[str, str]]:
    panel = TaskPanel()
    qtbot.addWidget(panel)
    panel.show_error(raw)
    return [(shown_label(panel.error_label), raw)]


def model_and_vision_tooltips(qtbot: Any, raw: str) -> list[tuple[str, str]]:
    panel = TaskPanel()
    qtbot.addWidget(panel)
    panel.set_model(raw, "http://127.0.0.1:1/v1")
    shown = [(shown_tooltip(panel.model_label.toolTip()), f"{raw} at http://127.0.0.1:1/v1")]
    shown.append((shown_label(panel.model_label), f"Model: {raw} at http://127.0.0.1:1/v1"))
    panel.set_vision("no", raw)
    shown.append((shown_tooltip(panel.vision_label.toolTip()), raw))
    panel.set_server_absent("127.0.0.1:1", raw)
    shown.append((shown_tooltip(panel.vision_label.toolTip()), raw))
    return shown


def model_servers_list(qtbot: Any, raw: str) -> list[tuple[str, str]]:
    dialog = ModelServersDialog(None, platform="linux")
    qtbot.addWidget(dialog)
    model = FoundModel(raw, None, "unknown", raw, "default")
    server = FoundServer("openai", raw, "http://127.0.0.1:8000/v1", (model,))
    dialog.show_found(Discovery((server,), (8000,)))
    top = dialog.tree.topLevelItem(0)
    assert top is not None
    item = top.child(0)
    assert item is not None
    return [
        (item.text(0), raw),
        (shown_tooltip(item.toolTip(0)), f"{raw} at http://127.0.0.1:8000/v1"),
        (shown_tooltip(item.toolTip(1)), raw),
    ]


def run_title_and_hotkey(window: Any, raw: str) -> list[tuple[str, str]]:
    window.shown.show_live("r1", status="Starting…")
    window.shown.apply(RunStarted(run_view(1, raw, RunStatus.RUNNING, model=raw)))
    window.bar.set_hotkey_state(False, raw)
    window.shown.apply(StartRefused("r1", raw))
    return [
        (shown_label(window.run_title), raw),
        (shown_tooltip(window.run_title.toolTip()), f"{raw}\nrun r1 · {raw}"),
        (shown_label(window.bar.hotkey_label), f"Stop hotkey not armed: {raw}"),
        (shown_tooltip(window.bar.hotkey_label.toolTip()), f"Stop hotkey not armed: {raw}"),
        (shown_label(window.bar.status_label), f"Not started: {raw}"),
        (shown_label(window.panel.error_label), raw),
    ]


SINKS: dict[str, Callable[[Any, str], list[tuple[str, str]]]] = {
    "routine_tooltip": routine_tooltip,
    "start_refused_error": start_refused_error,
    "model_and_vision_tooltips": model_and_vision_tooltips,
    "model_servers_list": model_servers_list,
}


@pytest.mark.parametrize("sink", SINKS)
def test_each_sink_shows_markup_as_typed_and_loads_nothing(
    sink: str, qtbot: Any, fifo: FifoWatch
) -> None:
    pairs = [pair for raw in hostile(fifo) for pair in SINKS[sink](qtbot, raw)]
    assert fifo.close() == 0, "an <img src> was loaded"
    assert [shown for shown, _ in pairs] == [expected for _, expected in pairs]


def test_the_run_title_the_hotkey_and_a_refused_start_show_markup_as_typed(
    window: Any, fifo: FifoWatch
) -> None:
    pairs = [pair for raw in hostile(fifo) for pair in run_title_and_hotkey(window, raw)]
    assert fifo.close() == 0, "an <img src> was loaded"
    assert [shown for shown, _ in pairs] == [expected for _, expected in pairs]


def test_a_typed_text_offered_as_a_parameter_shows_its_ampersands(qtbot: Any) -> None:
    """A check box takes `&` for a shortcut key's mark: "&Allow" would show as "Allow"."""
    from desktop_agent.ui.save_routine import SaveRoutineDialog

    raw = "Tom && Jerry & <b>&Allow</b>"
    step = replace(action(args={"text": raw}), tool="type_text")
    dialog = SaveRoutineDialog(None, "r1", [step])
    qtbot.addWidget(dialog)
    box, _ = dialog.param_boxes[1]
    assert re.sub("&(.)", r"\1", box.text()) == f"turn 1: {raw}"  # Qt's mnemonic rule


def test_the_settings_dialog_shows_a_servers_answer_and_a_bad_value_as_typed(
    qtbot: Any, qloop: Any, fifo: FifoWatch
) -> None:
    """Test connection's line quotes what the server said; a field's error quotes its value."""
    from desktop_agent.settings import Settings
    from desktop_agent.ui.settings_dialog import SettingsDialog
    from tests.gui.fake_agent import until

    shown: list[tuple[str, str]] = []
    for raw in hostile(fifo):

        async def answer(settings: Settings, raw: str = raw) -> str:
            return raw

        dialog = SettingsDialog(None, Settings(), test_connection=answer)
        qtbot.addWidget(dialog)
        base_url = dialog.fields["base_url"]
        assert isinstance(base_url, QLineEdit)
        base_url.setText(raw)
        dialog.validate()  # its error quotes the value
        errors = [(shown_label(label), label.text()) for label in dialog.errors.values()]
        shown += [pair for pair in errors if raw in pair[1]]
        base_url.setText("http://127.0.0.1:1/v1")
        dialog.validate()

        async def tested(dialog: SettingsDialog = dialog) -> None:
            dialog.test_button.click()  # on the loop, as the app's click is
            await until(lambda: dialog.test_result.text() != "Testing…")

        qloop.run_until_complete(asyncio.wait_for(tested(), 10))
        quoting = [label for label in dialog.findChildren(QLabel) if raw in label.text()]
        assert dialog.test_result in quoting
        shown += [(shown_label(label), label.text()) for label in quoting]
    assert fifo.close() == 0, "an <img src> was loaded"
    assert [text for text, _ in shown] == [raw for _, raw in shown]
