"""Several RandR monitors on a real X server (Xorg + dummy driver): one desk per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from desktop_agent.eval.desk import XSessionError
from desktop_agent.eval.monitors_desk import MonitorsSession, start_monitors_session
from tests.e2e.conftest import model

__all__ = ["model"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/monitors/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.desktop)


@pytest.fixture
def monitors_desk() -> Iterator[MonitorsSession]:
    """A fresh three-monitor desk for one test (a test unplugs monitors, moves windows):
    1280x1024 left of the 1920x1080 primary, 1024x768 right of it and lower. Skipped, with
    Xorg's words, only when Xorg cannot start at all on this machine."""
    try:
        session = start_monitors_session()
    except (XSessionError, TimeoutError) as error:
        pytest.skip(f"no multi-monitor X server here: {error}")
    try:
        yield session
    finally:
        session.close()
