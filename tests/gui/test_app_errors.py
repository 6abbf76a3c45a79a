"""What nothing else caught — a slot's exception, an unretrieved task's — is logged and shown."""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

import pytest
from PySide6.QtCore import QObject, Signal

from desktop_agent.app import ErrorReporter
from desktop_agent.ui.main_window import MainWindow
from tests.gui.fake_agent import drive

pytestmark = [pytest.mark.gui]


class Emitter(QObject):
    fired = Signal()


@pytest.fixture
def window(qtbot: Any) -> MainWindow:
    made = MainWindow()
    qtbot.addWidget(made)
    return made


def test_an_exception_in_a_slot_is_logged_and_shown_in_one_line(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reporter = ErrorReporter(window)
    monkeypatch.setattr(sys, "excepthook", reporter.on_uncaught)
    emitter = Emitter()

    def broken_slot() -> None:
        raise ValueError("the slot broke\nbadly")

    emitter.fired.connect(broken_slot)
    emitter.fired.emit()
    assert window.bar.status_label.text() == "Error: the slot broke badly"
    assert "uncaught exception in a slot" in caplog.text
    assert "Traceback" in caplog.text and "broken_slot" in caplog.text


def test_a_task_whose_exception_nobody_retrieved_is_logged_and_shown(
    window: MainWindow, qloop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    reporter = ErrorReporter(window)
    qloop.set_exception_handler(reporter.on_loop_error)

    async def fails() -> None:
        raise RuntimeError("lost in a task")

    async def scenario() -> None:
        task = asyncio.get_running_loop().create_task(fails())
        await asyncio.wait([task])
        del task  # dropped unretrieved: asyncio reports it when the task is freed
        gc.collect()

    drive(qloop, scenario())
    assert window.bar.status_label.text() == "Error: lost in a task"
    assert "Task exception was never retrieved" in caplog.text
    assert "RuntimeError: lost in a task" in caplog.text
