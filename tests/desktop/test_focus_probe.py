"""The focus probe on a real desktop: AT-SPI tells a password field from a text area."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from desktop_agent.core.ports import Focus
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


@pytest.fixture
def two_shells(xsession: XSession, windows: Any) -> Iterator[tuple[int, int]]:
    """Two windows of one kind, a focused line edit each (two shells' terminals, as far as
    their roles go): their X11 ids."""
    processes = []
    try:
        for title in ("alice@box: ~/one", "alice@box: ~/two"):
            processes.append(
                xsession.spawn(
                    [sys.executable, "-m", "tests.support.password_window", "user", title],
                    extra_env={"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_QPA_PLATFORM": "xcb"},
                )
            )
            wait_active(windows, title=title)
        one, two = windows.find("~/one"), windows.find("~/two")
        assert one is not None and two is not None
        yield one.id, two.id
    finally:
        for process in processes:
            xsession.stop(process)


async def settled_focus(executor: DesktopExecutor) -> Focus:
    """The probe's answer once two reads in a row agree on a text field's place (AT-SPI tells
    a new active window a moment after the window manager does), or the last after 10 s."""
    last = Focus()
    for _ in range(200):
        now = await executor.focused()
        if now == last and now.role == "text" and "atspi:" in (now.place or ""):
            break
        last = now
        await asyncio.sleep(0.05)  # nothing to wait on: AT-SPI sends this process no event
    return last


async def test_two_windows_of_one_role_are_two_places_and_one_stays_one(
    two_shells: tuple[int, int], windows: Any, executor: DesktopExecutor
) -> None:
    # the gate sends keys approved for one place only there (core/gate.py _focus_elsewhere):
    # the probe's place must tell the two apart, and stay the same for the same focus
    one, two = two_shells
    assert windows.activate(one, timeout=5)
    here = await settled_focus(executor)
    assert windows.activate(two, timeout=5)
    there = await settled_focus(executor)
    assert windows.activate(one, timeout=5)
    back = await settled_focus(executor)

    assert here.role == there.role == "text"
    assert here.place is not None and here.place.startswith(f"x11:{one} atspi:")
    assert there.place is not None and there.place.startswith(f"x11:{two} atspi:")
    assert back == here
