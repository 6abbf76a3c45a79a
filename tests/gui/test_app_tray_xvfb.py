"""The real app on an X desktop with a system tray (trayer): closing the window hides it to
the tray, a second launch brings it back, SIGTERM still quits."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.xdisplay import close_window, start_xsession, wait_until

pytestmark = [pytest.mark.gui, pytest.mark.desktop]

ROOT = Path(__file__).resolve().parents[2]


def _tray_owned(display_name: str) -> bool:
    from Xlib import X, display

    connection = display.Display(display_name)
    try:
        atom = connection.intern_atom("_NET_SYSTEM_TRAY_S0")
        return connection.get_selection_owner(atom) != X.NONE
    finally:
        connection.close()


def test_with_a_tray_closing_hides_the_window_and_a_second_launch_brings_it_back(
    tmp_path: Path,
) -> None:
    session = start_xsession(1024, 700, atspi=False)
    try:
        session.spawn(["trayer", "--edge", "top", "--align", "right", "--height", "24"])
        wait_until(lambda: _tray_owned(session.display), timeout=10, what="the tray host")
        extra = {"QT_QPA_PLATFORM": "xcb", "DESKTOP_AGENT_HOME": str(tmp_path)}
        env = session.child_env(extra)
        argv = [sys.executable, "-m", "desktop_agent", "--data-dir", str(tmp_path)]
        app = session.spawn(argv, extra_env=extra, cwd=ROOT)
        log = tmp_path / "desktop-agent.log"

        def visible_windows() -> list[str]:
            found = subprocess.run(
                ["xdotool", "search", "--onlyvisible", "--name", "^Desktop Agent$"],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            return found.stdout.split()

        wait_until(lambda: (tmp_path / "instances" / f"{app.pid}.json").exists(), timeout=20)
        (window,) = wait_until(visible_windows, timeout=10, what="the window")
        close_window(session.display, window)
        wait_until(lambda: "window closed: hidden to the tray" in log.read_text(), timeout=10)
        wait_until(lambda: not visible_windows(), timeout=10, what="the window hidden")
        assert app.poll() is None, "the app quit though a tray is there"

        second = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, timeout=20)
        assert second.returncode == 0, second.stderr
        wait_until(visible_windows, timeout=10, what="the window back")

        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=15) == 0
        assert "No system tray" not in log.read_text()
    finally:
        session.close()
