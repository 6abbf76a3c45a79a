"""Qt tests run offscreen unless QT_QPA_PLATFORM says otherwise; shared fixtures: qloop, agent,
harness, window, detail, held_loading. (Python's cycle collection: tests/conftest.py.)"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import threading  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

from tests.fakes import make_agent  # noqa: E402


@pytest.fixture(scope="session")
def qapp_args() -> list[str]:
    """The tests' QApplication's argv: one QApplication for the session, made by whichever test
    asks first. Its platform is QT_QPA_PLATFORM's (offscreen, set above, unless the environment
    says otherwise); a `-platform` here would override the environment."""
    return ["desktop-agent-tests"]


@pytest.fixture
def qloop(qapp: Any) -> Iterator[Any]:
    """A qasync loop on the test's QApplication; drive coroutines with run_until_complete.

    Closing the last visible window would quit the app, and with it the loop: not while
    a test drives it.
    """
    from tests.gui.fake_agent import close_loop, open_loop

    quit_on_close = qapp.quitOnLastWindowClosed()
    qapp.setQuitOnLastWindowClosed(False)
    loop = open_loop(qapp)
    try:
        yield loop
    finally:
        close_loop(loop)
        qapp.setQuitOnLastWindowClosed(quit_on_close)


@pytest.fixture
def agent(tmp_path: Path) -> Any:
    """An Agent over the fakes of tests/fakes.py (no model checks; every tool allowed).

    Set `agent.planner_factory` to script the model; screenshots are real JPEG files
    in the data dir (tmp_path).
    """
    return make_agent(tmp_path)


@pytest.fixture
def harness(qtbot: Any, qloop: Any, agent: Any) -> Iterator[Any]:
    """A main window and a DesktopApp (no tray, no API, no hotkey) over `agent`, the Agent
    on an engine thread as in the app (tests/gui/test_app_wiring.py: Harness)."""
    from tests.gui.fake_agent import drive
    from tests.gui.test_app_wiring import build

    made = build(qtbot, qloop, agent)
    yield made
    drive(qloop, made.close())


@pytest.fixture
def window(qtbot: Any, qloop: Any, agent: Any) -> Iterator[Any]:
    """A shown MainWindow bound to `agent` on an engine thread, as in the app; shut down and
    deleted at the end (not given to qtbot, which deletes its widgets before teardown)."""
    from desktop_agent.ui.main_window import MainWindow
    from tests.gui.fake_agent import bind_window, drive, until

    made = MainWindow()
    made.show()
    made.activateWindow()

    async def bind() -> Any:
        client = bind_window(made, agent)
        await until(lambda: not made.tasks, what="the history and the vision check")
        return client

    client = drive(qloop, bind())
    yield made
    drive(qloop, made.shutdown())
    drive(qloop, client.close())
    made.deleteLater()


@pytest.fixture
def detail(qtbot: Any, tmp_path: Path) -> Iterator[Any]:
    """A step's detail view (ui/step_detail.py) whose images load from tmp_path."""
    from desktop_agent.ui.step_detail import StepDetail
    from desktop_agent.ui.timeline import ImageLoader

    loader = ImageLoader(tmp_path)
    made = StepDetail(loader)
    qtbot.addWidget(made)
    yield made
    loader.shutdown()


@pytest.fixture
def held_loading(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[threading.Event, threading.Event]]:
    """(loading, go): the app's import of its heavy parts, before its engine is made (app.py
    `_serve`), is held from `loading` until `go`."""
    from desktop_agent import app as app_module

    loading, go = threading.Event(), threading.Event()
    preload = app_module._preload

    def held(modules: tuple[str, ...]) -> None:
        if modules == app_module.HEAVY_MODULES:
            loading.set()
            go.wait(10)
        preload(modules)

    monkeypatch.setattr(app_module, "_preload", held)
    yield loading, go
    go.set()
