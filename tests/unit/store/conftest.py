"""Fixtures of the store tests: a real history store in tmp_path, a stepping clock, processes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from desktop_agent.store import SqliteRunRepository


class SteppingClock:
    """A UTC clock that moves one second each time it is read."""

    def __init__(self, start: datetime = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def clock() -> SteppingClock:
    return SteppingClock()


@pytest.fixture
def repo(tmp_path: Path, clock: SteppingClock) -> Iterator[SqliteRunRepository]:
    store = SqliteRunRepository.open(tmp_path, now=clock)
    yield store
    store.close()


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def live_process() -> Iterator[subprocess.Popen[bytes]]:
    """A process that lives until its stdin is closed (no sleeping involved)."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    yield child
    if child.stdin:
        child.stdin.close()
    child.wait(timeout=10)
