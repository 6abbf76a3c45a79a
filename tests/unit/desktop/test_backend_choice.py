"""The session kind picks the desktop backend when the agent is built: a Wayland session sees
and acts through the portal, an X11 session keeps mss and pyautogui."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_agent.agent import Agent
from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.wayland import PortalDriver, PortalScreen
from desktop_agent.settings import Settings


async def built(tmp_path: Path) -> tuple[object, object, bool]:
    """(the executor's driver, what the observer's capture opens, whether it sees the app's
    own windows) of a freshly built agent;
    nothing of the desktop is touched (the portal session starts at the first grab)."""
    agent = await Agent.open(tmp_path, Settings())
    try:
        executor = agent.runner.services.executor
        assert isinstance(executor, DesktopExecutor)
        observer = agent.runner.services.observer
        capture = observer._capture  # type: ignore[attr-defined]
        return executor.driver, capture._open_screen, observer.sees_own_windows  # type: ignore[attr-defined]
    finally:
        await agent.close()


async def test_a_wayland_session_builds_the_portal_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("DESKTOP_AGENT_DESKTOP", raising=False)
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    driver, open_screen, sees_own = await built(tmp_path)
    assert isinstance(driver, PortalDriver)
    assert sees_own is False  # so the gate asks before input (tests/unit/core/test_own_windows)
    # the capture and the input share one portal session (one consent dialog)
    screen = open_screen()  # type: ignore[operator]
    assert isinstance(screen, PortalScreen) and screen.desk is driver.desk


async def test_an_x11_session_keeps_the_x11_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop_agent.desktop.capture import open_mss
    from desktop_agent.desktop.input import PyAutoGuiDriver

    monkeypatch.delenv("DESKTOP_AGENT_DESKTOP", raising=False)
    monkeypatch.setenv("XDG_SESSION_TYPE", "x11")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")  # XWayland's sessions may have both
    driver, open_screen, sees_own = await built(tmp_path)
    assert isinstance(driver, PyAutoGuiDriver) and open_screen is open_mss and sees_own
