"""The real `desktop-agent` app process: it serves the API, keeps one instance, quits on SIGTERM."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.app import (
    GNOME_DESKTOP,
    ROOT,
    app_env,
    libraries_loaded_by_the_first_paint,
    offscreen_env,
    run_python,
    spawn_app,
)
from tests.support.xdisplay import XSession, start_xsession, wait_until

#: SIGTERM's clean quit and Linux's DISPLAY rule: on Windows send_signal ends the process at once
pytestmark = [pytest.mark.gui, pytest.mark.posix]


def test_the_app_serves_the_api_hands_a_second_launch_over_and_quits_on_sigterm(
    tmp_path: Path,
) -> None:
    with spawn_app(tmp_path) as app:
        app.wait_serving()
        assert app.api("/api/tasks") == []

        second = subprocess.run(
            app.process.args, cwd=ROOT, env=offscreen_env(tmp_path), capture_output=True,
            timeout=20,
        )  # fmt: skip
        assert second.returncode == 0, second.stderr
        wait_until(
            lambda: "another launch on this data dir asked for the window" in app.log(),
            timeout=5,
            what="the first instance to hear the second",
        )
        assert app.process.poll() is None

        app.quit_with_sigterm()
    stderr = app.stderr()
    assert not app.instance.exists(), "the app left its instance file behind"
    assert "Traceback" not in stderr, stderr
    assert "QThread: Destroyed while thread" not in stderr, stderr  # every thread ended first
    assert "first window painted at" in app.log()


def test_a_bad_settings_file_is_reported_and_the_app_opens_with_the_defaults(
    tmp_path: Path,
) -> None:
    (tmp_path / "settings.toml").write_text("max_steps = 0\n", encoding="utf-8")
    with spawn_app(tmp_path) as app:
        app.wait_serving()
        assert "Settings not loaded, using the defaults: max_steps:" in app.log()
        app.quit_with_sigterm()


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
    env = offscreen_env(tmp_path)
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


@pytest.mark.posix
def test_a_display_that_takes_the_connection_is_one_to_open_and_its_probe_needs_no_socket_py(
    tmp_path: Path,
) -> None:
    # the app probes an X display's socket before Qt opens it, on the way to the first paint:
    # an X server listening on the abstract socket (as Xvfb does, beside its file) is
    # reachable, and the probe leaves socket.py (selectors, select, array) unimported
    import socket

    display = unused_display()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(f"\0/tmp/.X11-unix/X{display[1:]}")
        server.listen(2)
        script = (
            "import sys\n"
            "from desktop_agent.host.display import display_problem\n"
            f"problem = display_problem({{'DISPLAY': {display!r}}})\n"
            "print(problem, 'socket' in sys.modules)\n"
        )
        done = run_python(script, tmp_path, timeout=20)
    assert done.stdout.split() == ["None", "False"], done.stderr


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


#: what else the first paint does without (benchmarks/README.md, "Issue 22, app start, third
#: session"): the core's events (their dataclasses), the command line's package and grammar, the
#: log's rotation from logging.handlers (socket, pickle), QtNetwork and OpenSSL's hashlib for
#: the one-instance socket, html's entity table; the core's views (frozen dataclasses: the panels
#: import only core/statuses.py to paint) and the dataclasses module. (argparse itself PySide6
#: imports.)
NOT_BEFORE_THE_FIRST_PAINT_EITHER = (
    "desktop_agent.core.events",
    "desktop_agent.core.models",
    "dataclasses",
    "desktop_agent.cli",
    "desktop_agent.cli.parser",
    "logging.handlers",
    "socket",
    "PySide6.QtNetwork",
    "hashlib",
    "html",
)


#: what the first frame does without, fourth session (benchmarks/README.md, "Issue 22, app start,
#: fourth session"): json (the step detail's arguments) and datetime (the history's times, the
#: elapsed field), and the Save as routine dialog's module
NOT_BEFORE_THE_FIRST_PAINT_NOR = ("json", "datetime", "desktop_agent.ui.save_routine")

#: Qt classes the first frame does not show: PySide6 makes a class (and its Python enums,
#: ~0.2 ms each) when it is first imported, here the dialogs' (Save as routine, the message
#: boxes) and the tray's icon drawing
QT_CLASSES_NOT_BEFORE_THE_FIRST_PAINT = (
    ("PySide6.QtWidgets", "QDialog"),
    ("PySide6.QtWidgets", "QDialogButtonBox"),
    ("PySide6.QtWidgets", "QCheckBox"),
    ("PySide6.QtWidgets", "QMessageBox"),
    ("PySide6.QtGui", "QPolygonF"),
)


def run_to_the_first_paint(
    tmp_path: Path, report: str, *, before: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The app as `desktop-agent` starts it (the command line first), its module imported to
    hook the paint: `before` runs first, and at the window's first paint `report` (lines of
    Python, indented as a function's body) prints what it saw and the process ends. Offscreen
    unless `env` (its whole environment) says otherwise."""
    script = (
        "import gc, os, sys\n"
        "import desktop_agent.app as app\n"
        "from desktop_agent.__main__ import main\n"
        f"{before}"
        "def painted():\n"
        f"{report}"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "app._log_first_paint = painted\n"
        f"main(['--data-dir', {str(tmp_path)!r}])\n"
    )
    return run_python(script, tmp_path, env=env)


def imported_at_the_first_paint(tmp_path: Path, modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` the app has imported when its window first paints."""
    done = run_to_the_first_paint(
        tmp_path, f"    print(sorted(m for m in {modules!r} if m in sys.modules))\n"
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stderr
    imported: list[str] = json.loads(lines[0].replace("'", '"'))
    return imported


def test_the_first_paint_comes_before_asyncio_pydantic_the_store_and_the_model_client(
    tmp_path: Path,
) -> None:
    assert imported_at_the_first_paint(tmp_path, NOT_BEFORE_THE_FIRST_PAINT) == []


def test_the_first_paint_comes_before_the_events_the_grammar_the_log_rotation_and_qtnetwork(
    tmp_path: Path,
) -> None:
    assert imported_at_the_first_paint(tmp_path, NOT_BEFORE_THE_FIRST_PAINT_EITHER) == []


def test_no_garbage_collection_runs_on_the_way_to_the_first_paint(tmp_path: Path) -> None:
    # the app as `desktop-agent` starts it, its module already imported (to hook the paint):
    # the collections from the entry point to the window's first paint, automatic or the
    # app's own collector's
    done = run_to_the_first_paint(
        tmp_path,
        "    print(len(collections), gc.isenabled())\n",
        before=(
            "collections = []\n"
            "gc.callbacks.append(\n"
            "    lambda phase, info: phase == 'start' and collections.append(info)\n"
            ")\n"
        ),
    )
    assert done.stdout.split() == ["0", "False"], done.stderr


def test_the_first_paint_comes_before_json_datetime_and_the_dialogs_qt_classes(
    tmp_path: Path,
) -> None:
    assert imported_at_the_first_paint(tmp_path, NOT_BEFORE_THE_FIRST_PAINT_NOR) == []
    # a PySide6 module holds a class in its namespace once the class is made (lazily, at its
    # first import by name or as an argument's type)
    done = run_to_the_first_paint(
        tmp_path,
        f"    made = [c for m, c in {QT_CLASSES_NOT_BEFORE_THE_FIRST_PAINT!r}\n"
        "            if c in vars(sys.modules[m])]\n"
        "    print(' '.join(made) or '-')\n",
    )
    assert done.stdout.split() == ["-"], done.stdout + done.stderr


@pytest.fixture(scope="module")
def x_desktop() -> Iterator[XSession]:
    """A private X desktop (Xvfb + openbox) without a desktop's variables of its own."""
    session = start_xsession(1280, 800, atspi=False)
    try:
        yield session
    finally:
        session.close()


#: Ubuntu's GNOME session names its desktop so (Qt reads each name; GNOME is one of them)
UBUNTU_DESKTOP = {"XDG_CURRENT_DESKTOP": "ubuntu:GNOME", "DESKTOP_SESSION": "ubuntu"}


@pytest.mark.parametrize("desktop", [GNOME_DESKTOP, UBUNTU_DESKTOP], ids=["gnome", "ubuntu"])
def test_the_app_on_a_gnome_desktop_paints_without_loading_gtk(
    desktop: dict[str, str], x_desktop: XSession, tmp_path: Path
) -> None:
    """Qt would take GTK 3's platform theme there, and GTK 3 with it, before the first paint;
    the app takes Qt's own GNOME theme, as the bundle does (it has no GTK theme plugin)."""
    loaded = libraries_loaded_by_the_first_paint(
        tmp_path / "data", session=x_desktop, extra_env=desktop
    )
    assert "libqxcb.so" in loaded  # the list is the app's, on X
    assert "libqgtk3" not in loaded and "libgtk-3" not in loaded


def test_a_platform_theme_the_user_chose_is_kept_on_a_gnome_desktop(
    x_desktop: XSession, tmp_path: Path
) -> None:
    chosen = GNOME_DESKTOP | {"QT_QPA_PLATFORMTHEME": "gtk3"}
    loaded = libraries_loaded_by_the_first_paint(
        tmp_path / "data", session=x_desktop, extra_env=chosen
    )
    assert "libqgtk3" in loaded and "libgtk-3" in loaded


#: a Qt program on the display: which platform theme plugins it has mapped once its
#: QApplication is made (the libraries' paths in /proc/self/maps)
QT_PROGRAM = (
    "import pathlib\n"
    "from PySide6.QtWidgets import QApplication\n"
    "app = QApplication(['a-qt-program'])\n"
    "maps = pathlib.Path('/proc/self/maps').read_text()\n"
    "print('gtk3' if 'libqgtk3' in maps else 'no gtk3')\n"
)


def test_a_qt_program_the_app_launches_on_a_gnome_desktop_keeps_its_own_theme(
    x_desktop: XSession, tmp_path: Path
) -> None:
    """The app's theme is an argument of its own QApplication, not an environment variable
    that the programs it launches (launch.program_env: ours) would inherit."""
    done = run_to_the_first_paint(
        tmp_path,
        "    import pathlib, subprocess\n"
        "    from desktop_agent.desktop.launch import program_env\n"
        "    own = pathlib.Path('/proc/self/maps').read_text()\n"
        "    print('gtk3' if 'libqgtk3' in own else 'no gtk3')\n"
        "    program = subprocess.run(\n"
        f"        [sys.executable, '-c', {QT_PROGRAM!r}], env=program_env(),\n"
        "        capture_output=True, text=True, timeout=60,\n"
        "    )\n"
        "    print(program.stdout.strip() or program.stderr)\n",
        env=x_desktop.child_env(app_env(tmp_path) | GNOME_DESKTOP),
    )
    assert done.stdout.splitlines() == ["no gtk3", "gtk3"], done.stdout + done.stderr
