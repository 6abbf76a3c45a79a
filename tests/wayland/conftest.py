"""Real Wayland tests: one headless GNOME desk (mutter, PipeWire, the portals) per module."""

from __future__ import annotations

import pytest

from tests.support.wayland import atspi_rig, wayland_env, wayland_session

__all__ = ["atspi_rig", "wayland_env", "wayland_session"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/wayland/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.desktop)
