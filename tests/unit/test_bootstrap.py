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
    "xmessage": "x11-utils",  # tests/desktop/test_screen_texts: a window not on the AT-SPI bus
    "trayer": "trayer",
    "Xorg": "xserver-xorg-core",  # tests/monitors: several RandR monitors (the dummy driver)
    "xrandr": "x11-xserver-utils",
    "l3afpad": "l3afpad",
    "desktop-file-validate": "desktop-file-utils",
    "systemd-analyze": "systemd",
    "systemctl": "systemd",
    "git": "git",  # tests/packaging/test_wheel.py: the checkout's files
    "ssconvert": "gnumeric",  # eval's sheet_cell checker
    "gnumeric": "gnumeric",  # tests/desktop/test_sheet_texts: a grid AT-SPI does not tell
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

_STARTS = {"run", "Popen", "spawn", "check_output", "check_call", "call", "start_x_server"}


def _program_of(argv: ast.expr, lists: dict[str, str]) -> str | None:
    """The program an argv names: a list literal's first string, a name bound to such a list
    in the module, or a list that begins by unpacking one (`[*argv, "-logfile", log]`)."""
    if isinstance(argv, ast.Name):
        return lists.get(argv.id)
    if not (isinstance(argv, ast.List) and argv.elts):
        return None
    first = argv.elts[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    if isinstance(first, ast.Starred):
        return _program_of(first.value, lists)
    return None


def started_programs() -> dict[str, set[str]]:
    """Program → the files that start it: each `subprocess.run/Popen/...`, `XSession.spawn`
    and the desks' `start_x_server` whose argv is a list literal naming the program (or a name
    the module binds to one)."""
    found: dict[str, set[str]] = {}
    for folder in ("desktop_agent", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            lists: dict[str, str] = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                    program = _program_of(node.value, {})
                    if isinstance(target, ast.Name) and program is not None:
                        lists[target.id] = program
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and node.args):
                    continue
                name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                if name not in _STARTS:
                    continue
                argv = (
                    node.args[1]
                    if name == "start_x_server" and len(node.args) > 1
                    else node.args[0]
                )
                program = _program_of(argv, lists)
                if program is not None:
                    found.setdefault(program, set()).add(str(path.relative_to(ROOT)))
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
