"""scripts/bootstrap installs every program the tests, the benchmarks and the app start on Linux:
CI (.ci/run) runs it on a fresh machine, where nothing else put them there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.xdisplay import ATSPI_LAUNCHER

ROOT = Path(__file__).resolve().parents[2]
#: started from an argv built in a variable (tests/support/xdisplay.py), which the scan misses
ALSO_STARTED = ("dbus-send", ATSPI_LAUNCHER)

#: program → the Debian package scripts/bootstrap must list for it (None: on every Debian
#: system, or not a Linux program)
PACKAGE_OF = {
    "Xvfb": "xvfb",
    "openbox": "openbox",
    "dbus-daemon": "dbus",
    "dbus-send": "dbus",
    ATSPI_LAUNCHER: "at-spi2-core",
    "xdotool": "xdotool",
    "xclip": "xclip",
    "xprop": "x11-utils",
    "trayer": "trayer",
    "Xorg": "xserver-xorg-core",  # tests/monitors: several RandR monitors (the dummy driver)
    "xrandr": "x11-xserver-utils",
    "l3afpad": "l3afpad",
    "desktop-file-validate": "desktop-file-utils",
    "systemd-analyze": "systemd",
    "systemctl": "systemd",
    "git": "git",  # tests/packaging/test_wheel.py: the checkout's files
    "ssconvert": "gnumeric",  # eval's sheet_cell checker
    "tesseract": "tesseract-ocr",  # eval's gullible planner reads the screen
    "dunst": "dunst",  # the injection cases' notifications (and the guard's OCR of them)
    "notify-send": "libnotify-bin",
    "mutter": "mutter",  # the headless GNOME Wayland desk (eval/wayland_desk.py)
    "pipewire": "pipewire-bin",
    "wireplumber": "wireplumber",
    "gsettings": "libglib2.0-bin",  # the stop shortcut on GNOME (desktop/stop_shortcut.py)
    "dpkg-deb": None,
    "bash": None,
    "sh": None,  # essential on every Debian system (dash); the Wayland frame reader's watchdog
    "zenity": "zenity",  # tests/desktop/test_windows_now: a dialog window coming up
    "true": None,
    "schtasks": None,
}

_STARTS = {"run", "Popen", "spawn", "check_output", "check_call", "call"}


def started_programs() -> dict[str, set[str]]:
    """Program → the files that start it: each `subprocess.run/Popen/...` and `XSession.spawn`
    whose argv is a list literal naming the program."""
    found: dict[str, set[str]] = {}
    for folder in ("desktop_agent", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.Call) and node.args):
                    continue
                name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                argv = node.args[0]
                if (
                    name in _STARTS
                    and isinstance(argv, ast.List)
                    and argv.elts
                    and isinstance(argv.elts[0], ast.Constant)
                    and isinstance(argv.elts[0].value, str)
                ):
                    found.setdefault(argv.elts[0].value, set()).add(str(path.relative_to(ROOT)))
    return found


def bootstrap_packages() -> set[str]:
    text = (ROOT / "scripts" / "bootstrap").read_text(encoding="utf-8")
    block = re.search(r"^APT_PACKAGES=\((.*?)^\)", text, re.S | re.M)
    assert block is not None, "scripts/bootstrap has no APT_PACKAGES=( ... )"
    lines = [line.split("#", 1)[0] for line in block.group(1).splitlines()]
    return {word for line in lines for word in line.split()}


def test_every_program_the_code_starts_is_installed_by_scripts_bootstrap() -> None:
    started = started_programs()
    unknown = {program: files for program, files in started.items() if program not in PACKAGE_OF}
    assert not unknown, (
        f"add these programs to PACKAGE_OF and their package to bootstrap: {unknown}"
    )
    wanted = {PACKAGE_OF[program] for program in [*started, *ALSO_STARTED]}
    assert sorted(p for p in wanted - bootstrap_packages() if p is not None) == []


def test_bootstrap_installs_what_its_own_venv_needs() -> None:
    # Debian's python3 makes no venv without python3-venv (no ensurepip)
    assert {"python3", "python3-venv"} <= bootstrap_packages()


def test_the_scan_finds_the_test_desktops_programs() -> None:
    started = started_programs()
    assert {"Xvfb", "openbox", "dbus-daemon", "xdotool", "l3afpad"} <= set(started)
    assert "desktop_agent/eval/desk.py" in started["Xvfb"]


def test_every_program_the_built_in_eval_suite_starts_is_installed_by_scripts_bootstrap() -> None:
    from desktop_agent.eval.runner import APT_PACKAGES
    from desktop_agent.eval.tasks import load_suite

    programs = set()
    for task in load_suite():
        programs |= set(task.apps) | {run.command[0] for run in task.runs}
    programs -= {"sh"}  # on every Debian system
    assert sorted(programs - set(APT_PACKAGES)) == []
    packages = {APT_PACKAGES[program] for program in programs}
    assert sorted(packages - bootstrap_packages()) == []
