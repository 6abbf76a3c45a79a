"""The tray icon on a real X desktop: Xvfb + openbox + trayer (a system tray host)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.xdisplay import XSession, start_tray, start_xsession, tray_owned

pytestmark = [pytest.mark.desktop, pytest.mark.gui]

ROOT = Path(__file__).resolve().parents[2]

#: runs in a child process: this test process already has an offscreen QApplication
CHILD = textwrap.dedent(
    """
    import json, sys, time
    from PySide6.QtWidgets import QApplication
    app = QApplication(["desktop-agent"])
    from desktop_agent.ui.tray import TrayController
    tray = TrayController()
    tray.show()
    tray.set_state("running")
    deadline = time.monotonic() + 10
    icon = tray._tray
    while icon is not None and icon.geometry().isEmpty() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    geometry = icon.geometry() if icon is not None else None
    print(json.dumps({
        "available": tray.available,
        "visible": tray.visible,
        "docked": geometry is not None and not geometry.isEmpty(),
        "icon_is_state_icon": icon is not None
            and icon.icon().cacheKey() == tray.icon().cacheKey(),
        "pause_text": tray.pause_action.text(),
    }))
    tray.dispose()
    """
)


@pytest.fixture(scope="module")
def desktop() -> Iterator[XSession]:
    session = start_xsession(800, 600, atspi=False)
    try:
        yield session
    finally:
        session.close()


def _run_child(session: XSession) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        env=session.child_env({"QT_QPA_PLATFORM": "xcb"}),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def test_without_a_tray_host_the_tray_is_unavailable(desktop: XSession) -> None:
    assert not tray_owned(desktop.display)
    report = _run_child(desktop)
    assert report["available"] is False
    assert report["visible"] is False


def test_with_trayer_running_the_icon_docks_and_shows_the_state(desktop: XSession) -> None:
    trayer = start_tray(desktop, "--widthtype", "pixel", "--width", "120", "--height", "24")
    try:
        report = _run_child(desktop)
    finally:
        desktop.stop(trayer)
    assert report == {
        "available": True,
        "visible": True,
        "docked": True,
        "icon_is_state_icon": True,
        "pause_text": "&Pause",
    }
