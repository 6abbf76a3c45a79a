"""The real app on an X desktop with a system tray (trayer): closing the window hides it to
the tray, a second launch brings it back, SIGTERM still quits."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.app import ROOT, app_env, spawn_app
from tests.support.xdisplay import close_window, start_tray, start_xsession, wait_until

pytestmark = [pytest.mark.gui, pytest.mark.desktop]


def test_with_a_tray_closing_hides_the_window_and_a_second_launch_brings_it_back(
    tmp_path: Path,
) -> None:
    session = start_xsession(1024, 700, atspi=False)
    try:
        start_tray(session, "--height", "24")
        with spawn_app(tmp_path, session=session) as app:

            def visible_windows() -> list[str]:
                return session.xdotool(
                    "search", "--onlyvisible", "--name", "^Desktop Agent$", check=False
                ).split()

            app.wait_serving()
            (window,) = wait_until(visible_windows, timeout=10, what="the window")
            close_window(session.display, window)
            wait_until(lambda: "window closed: hidden to the tray" in app.log(), timeout=10)
            wait_until(lambda: not visible_windows(), timeout=10, what="the window hidden")
            assert app.process.poll() is None, "the app quit though a tray is there"

            second = subprocess.run(
                app.process.args, env=session.child_env(app_env(tmp_path)), cwd=ROOT,
                capture_output=True, timeout=20,
            )  # fmt: skip
            assert second.returncode == 0, second.stderr
            wait_until(visible_windows, timeout=10, what="the window back")

            app.quit_with_sigterm()
            assert "No system tray" not in app.log()
    finally:
        session.close()
