"""Qt tests run offscreen unless QT_QPA_PLATFORM says otherwise; shared fixtures: qloop, agent."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

from tests.gui.fake_agent import make_agent  # noqa: E402


@pytest.fixture
def qloop(qapp: Any) -> Iterator[Any]:
    """A qasync loop on the test's QApplication; drive coroutines with run_until_complete."""
    from tests.gui.fake_agent import close_loop, open_loop

    loop = open_loop(qapp)
    try:
        yield loop
    finally:
        close_loop(loop)


@pytest.fixture
def agent(tmp_path: Path) -> Any:
    """An Agent over the fakes of tests/fakes.py (no model checks; every tool allowed).

    Set `agent.planner_factory` to script the model; screenshots are real JPEG files
    in the data dir (tmp_path).
    """
    return make_agent(tmp_path)
