"""The tests' private X desktop: the eval's desk (desktop_agent/eval/desk.py) as pytest fixtures.

The pytest fixture `xsession` shares one desktop per test session; `xsession_env` points one
test's DISPLAY and DBUS_SESSION_BUS_ADDRESS at it. When Xvfb is missing the tests fail with the
fix, never skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from desktop_agent.eval.desk import (
    ATSPI_LAUNCHER,
    READY_TIMEOUT_S,
    XSession,
    XSessionError,
    close_window,
    descendants,
    missing_programs,
    release_pyautogui,
    rerun_on_xvfb,
    start_tray,
    start_xsession,
    stop_process_group,
    tray_owned,
    use_xsession,
    wait_until,
)

__all__ = [
    "ATSPI_LAUNCHER",
    "READY_TIMEOUT_S",
    "XSessionError",
    "wait_until",
    "descendants",
    "stop_process_group",
    "XSession",
    "missing_programs",
    "start_xsession",
    "tray_owned",
    "start_tray",
    "close_window",
    "rerun_on_xvfb",
    "use_xsession",
    "release_pyautogui",
    "xsession",
    "xsession_env",
]


@dataclass
class _Shared:
    """The one desktop of this test process, shared by every conftest that imports the
    fixture (pytest makes a separate session fixture per conftest that imports it)."""

    session: XSession | None = None
    users: int = 0


_SHARED = _Shared()


@pytest.fixture(scope="session")
def xsession() -> Iterator[XSession]:
    """One private 1920x1080 desktop (Xvfb + openbox + AT-SPI) for the whole test session.

    It leaves this process's environment alone (tests outside the desktop suites must not
    find a DISPLAY or an accessibility bus); `xsession_env` points a test at it.
    """
    if _SHARED.session is None:
        try:
            _SHARED.session = start_xsession()
        except (XSessionError, TimeoutError) as error:
            pytest.fail(f"the real-desktop tests need a private X desktop: {error}", pytrace=False)
    _SHARED.users += 1
    try:
        yield _SHARED.session
    finally:
        _SHARED.users -= 1
        if _SHARED.users == 0:
            release_pyautogui()
            _SHARED.session.close()
            _SHARED.session = None


@pytest.fixture
def xsession_env(xsession: XSession) -> Iterator[XSession]:
    """DISPLAY, DBUS_SESSION_BUS_ADDRESS and XDG_SESSION_TYPE of the test desktop, for one
    test; restored after it."""
    saved = use_xsession(xsession)
    try:
        yield xsession
    finally:
        saved.restore()
