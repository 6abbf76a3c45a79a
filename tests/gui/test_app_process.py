"""The real `desktop-agent` app process: it serves the API, keeps one instance, quits on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.support.xdisplay import wait_until

#: SIGTERM's clean quit and Linux's DISPLAY rule: on Windows send_signal ends the process at once
pytestmark = [pytest.mark.gui, pytest.mark.posix]

ROOT = Path(__file__).resolve().parents[2]


def app_env(data_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    env.update(QT_QPA_PLATFORM="offscreen", DESKTOP_AGENT_HOME=str(data_dir))
    return env


def test_the_app_serves_the_api_hands_a_second_launch_over_and_quits_on_sigterm(
    tmp_path: Path,
) -> None:
    argv = [sys.executable, "-m", "desktop_agent", "--data-dir", str(tmp_path)]
    env = app_env(tmp_path)
    app = subprocess.Popen(
        argv,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    instance = tmp_path / "instances" / f"{app.pid}.json"
    log = tmp_path / "desktop-agent.log"
    try:
        wait_until(instance.exists, timeout=20, what="the app's API registration")
        port = json.loads(instance.read_text())["port"]
        token = (tmp_path / "api-token").read_text().strip()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/tasks", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status == 200
            assert json.loads(response.read()) == []

        second = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, timeout=20)
        assert second.returncode == 0, second.stderr
        wait_until(
            lambda: "another launch on this data dir asked for the window" in log.read_text(),
            timeout=5,
            what="the first instance to hear the second",
        )
        assert app.poll() is None

        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=15) == 0
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        stderr = app.stderr.read().decode(errors="replace") if app.stderr else ""
        if app.stderr:
            app.stderr.close()
    assert not instance.exists(), "the app left its instance file behind"
    assert "Traceback" not in stderr, stderr
    assert "QThread: Destroyed while thread" not in stderr, stderr  # every thread ended first
    assert "first window painted at" in log.read_text()


def test_a_bad_settings_file_is_reported_and_the_app_opens_with_the_defaults(
    tmp_path: Path,
) -> None:
    (tmp_path / "settings.toml").write_text("max_steps = 0\n", encoding="utf-8")
    argv = [sys.executable, "-m", "desktop_agent", "--data-dir", str(tmp_path)]
    app = subprocess.Popen(
        argv,
        cwd=ROOT,
        env=app_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        instance = tmp_path / "instances" / f"{app.pid}.json"
        wait_until(instance.exists, timeout=20, what="the app's API registration")
        log = (tmp_path / "desktop-agent.log").read_text()
        assert "Settings not loaded, using the defaults: max_steps:" in log
        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=15) == 0
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()


def unused_display() -> str:
    for number in range(190, 290):
        if not any(
            Path(path).exists() for path in (f"/tmp/.X11-unix/X{number}", f"/tmp/.X{number}-lock")
        ):
            return f":{number}"
    raise AssertionError("no unused X display number")


@pytest.mark.parametrize(
    ("display", "expected"),
    [
        (None, "desktop-agent: no display to open the window on (DISPLAY is not set); "),
        ("unused", "desktop-agent: cannot open the display ':"),
    ],
)
def test_without_a_display_the_app_says_so_in_one_line_and_exits_3(
    tmp_path: Path, display: str | None, expected: str
) -> None:
    env = app_env(tmp_path)
    env.pop("QT_QPA_PLATFORM")
    env.pop("WAYLAND_DISPLAY", None)
    if display:
        env["DISPLAY"] = unused_display()
    done = subprocess.run(
        [sys.executable, "-m", "desktop_agent", "--data-dir", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert done.returncode == 3
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), done.stderr
    assert lines[0].endswith("use `desktop-agent run` for a run without a window")


#: what the window's first paint must not wait for (asyncio and its loop on Qt, the engine, the
#: store, the model client): Qt's own loop paints the window, then the rest is loaded
NOT_BEFORE_THE_FIRST_PAINT = (
    "asyncio",
    "qasync",
    "desktop_agent.host.engine",
    "pydantic",
    "openai",
    "aiohttp",
    "peewee",
    "desktop_agent.settings",
    "desktop_agent.core.call_risk",
    "desktop_agent.core.routine",
)


def test_the_first_paint_comes_before_asyncio_pydantic_the_store_and_the_model_client(
    tmp_path: Path,
) -> None:
    # the app as `desktop-agent` starts it (the command line first), stopped at its window's
    # first paint: what was imported by then
    script = (
        "import os, sys\n"
        "import desktop_agent.app as app\n"
        "from desktop_agent.__main__ import main\n"
        "def painted():\n"
        f"    print(sorted(m for m in {NOT_BEFORE_THE_FIRST_PAINT!r} if m in sys.modules))\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "app._log_first_paint = painted\n"
        f"main(['--data-dir', {str(tmp_path)!r}])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=app_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.splitlines() == ["[]"], done.stderr
