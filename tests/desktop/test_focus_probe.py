"""The focus probe on a real desktop: AT-SPI tells a password field from a text area."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.observer import DesktopObserver
from tests.desktop.conftest import INVENTORY_BUDGET_S, Editor, wait_active
from tests.support.xdisplay import XSession


@pytest.fixture
async def executor() -> AsyncIterator[DesktopExecutor]:
    observer = DesktopObserver(fmt="png", inventory_budget_s=INVENTORY_BUDGET_S)
    executor = DesktopExecutor(observer=observer)
    yield executor
    executor.close()
    observer.close()


@pytest.fixture
def login_window(xsession: XSession, windows: Any) -> Iterator[None]:
    process = xsession.spawn(
        [sys.executable, "-m", "tests.support.password_window", "password"],
        extra_env={"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_QPA_PLATFORM": "xcb"},
    )
    try:
        wait_active(windows, title="Log in")
        yield
    finally:
        xsession.stop(process)


async def role_when(executor: DesktopExecutor, wanted: str) -> str | None:
    """The probe's answer once it is `wanted` (an app registers with AT-SPI a moment after
    its window shows), or its last answer after 10 s."""
    role: str | None = None
    for _ in range(200):
        role = (await executor.focused()).role
        if role == wanted:
            break
        await asyncio.sleep(0.05)  # nothing to wait on: AT-SPI sends this process no event
    return role


async def test_the_probe_finds_the_focused_password_field_of_a_qt_window(
    login_window: None, executor: DesktopExecutor
) -> None:
    assert await role_when(executor, "password text") == "password text"


async def test_the_probe_finds_the_text_area_of_l3afpad(
    l3afpad: Editor, executor: DesktopExecutor
) -> None:
    assert await role_when(executor, "text") == "text"
