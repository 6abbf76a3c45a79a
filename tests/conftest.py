"""Session-wide guards: a leaked non-daemon thread fails the run; a hung exit is ended; Python's
cycle collection runs on the main thread only once Qt is loaded."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator

import pytest

from desktop_agent.ui.collector import collect_if_due
from tests.support.threads import pytest_sessionfinish, pytest_unconfigure

__all__ = [
    "collect_garbage_on_the_main_thread",
    "pytest_sessionfinish",
    "pytest_sessionstart",
    "pytest_unconfigure",
]

#: a full collection after this many tests, whatever the counts say
FULL_COLLECT_EVERY = 50

_THRESHOLD = gc.get_threshold()
_tests_since_full = 0


def pytest_sessionstart(session: pytest.Session) -> None:
    """The automatic collector off from the session's start when Qt is loaded already
    (pytest-qt imports it at configure): session- and module-scoped fixtures set up before the
    first test's autouse fixture may start threads too."""
    if "PySide6.QtCore" in sys.modules:
        gc.disable()


@pytest.fixture(autouse=True)
def umask_as_it_was() -> Iterator[None]:
    """The process umask back after each test: `desktop_agent.__main__.main` sets the app's
    private 077 at entry, and a test that calls it in-process would hand that on to every
    later test's files and subprocesses (packaging/build's DEBIAN folder, for one)."""
    previous = os.umask(0o022)
    os.umask(previous)
    yield
    os.umask(previous)


@pytest.fixture(autouse=True)
def collect_garbage_on_the_main_thread() -> Iterator[None]:
    """Once Qt is loaded the automatic collector is off and the collection due runs here, on
    the main (GUI) thread, after each test: started by whichever thread allocates (the engine
    thread, the model server's, a capture thread) it would free Qt objects caught in cycles
    off the GUI thread, and Qt segfaults. As the app does (desktop_agent/ui/collector.py)."""
    global _tests_since_full
    if "PySide6.QtCore" in sys.modules:
        gc.disable()
    yield
    if "PySide6.QtCore" not in sys.modules:
        return
    gc.disable()
    _tests_since_full += 1
    if _tests_since_full >= FULL_COLLECT_EVERY:
        _tests_since_full = 0
        gc.collect()
    else:
        collect_if_due(_THRESHOLD)
