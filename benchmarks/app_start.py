"""App start: process start → first window painted; also → local API up, and a second launch.

    python benchmarks/app_start.py [--repeat 5] [--platform xvfb|offscreen|both]
                                   [--compile-each-launch]
    python benchmarks/app_start.py --bundle dist/desktop-agent   # the frozen app instead
    python benchmarks/app_start.py --python /path/to/venv/bin/python  # an installed package
    python benchmarks/app_start.py --desktop gnome   # as on a GNOME session (or ubuntu, plain)

Each launch is `python -m desktop_agent --data-dir <fresh dir>` (the README's app
command without the wrapper script), with DESKTOP_AGENT_HOME pointing at the same
fresh dir so no user settings are read. The app logs "first window painted at
<epoch>" from the main window's first paintEvent; the figure is that time minus the
time just before the process was spawned (interpreter start, imports, QApplication,
window construction, first paint); it logs the process's CPU time by then too, printed
beside (on a machine other jobs share it moves far less than the wall time). "Ready to
start a run" is when the app logs "ready to start a run at <epoch>": the window is bound to its
engine (settings, store and adapters open, the Start button on), with the CPU by then (an
older commit says nothing: not printed). "API up" is when the app registered its local API
(instances/<pid>.json appears), with the process's CPU (/proc) read then. A second launch on
the same data dir must hand over to the first and exit 0; its wall time is printed too. Each
app is ended with SIGTERM and must exit 0.

Bytecode: an installed app starts from compiled bytecode (pip writes the .pyc files when it
installs the wheel; a PyInstaller bundle carries them), so each launch of the source gets a
bytecode cache (PYTHONPYCACHEPREFIX, a temporary dir the warm-up launch fills), also where
the environment says PYTHONDONTWRITEBYTECODE (this machine's does: every launch then compiles
the package's ~100 modules again, 60-90 ms here). `--compile-each-launch` keeps the
environment as it is, to measure that case.

Installed or not: this checkout's dev venv has the package installed editable, and setuptools'
import hook for it runs at every interpreter start (`site`: pathlib, re, urllib.parse, ~10 ms),
which a user's install does not. `--python` launches `-m desktop_agent` with another
interpreter, e.g. of a venv where the package is installed from its wheel (`pip install .`),
from the data dir (so the checkout is not on its path). The .deb and the Windows installer
install the PyInstaller bundle: `--bundle`.

The desktop: Qt picks its platform theme by the desktop the environment names (qtbase
qdesktopunixservices.cpp detectDesktopEnvironment: XDG_CURRENT_DESKTOP, else KDE_FULL_SESSION,
GNOME_DESKTOP_SESSION_ID, DESKTOP_SESSION; qgenericunixtheme.cpp themeNames: on GNOME and the
other GTK-based desktops GTK 3's theme plugin, which loads GTK 3). `--desktop` sets those
variables as that desktop's session does (`gnome`: GNOME's own session; `ubuntu`: Ubuntu's,
"ubuntu:GNOME"; `plain`: none of them, as Xvfb without a desktop); without it the environment
is kept as it is. Offscreen Qt takes its own theme whatever the desktop.

Target (DESIGN §7): first window <= 0.3 s. `xvfb` runs a private Xvfb + openbox
(tests/support/xdisplay.py); `offscreen` needs no display.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAINTED = re.compile(r"first window painted at (\d+\.\d+)(?:, (\d+) ms of CPU)?")
READY = re.compile(r"ready to start a run at (\d+\.\d+), (\d+) ms of CPU")

#: what Qt reads to tell the desktop (see the docstring), set as each desktop's session sets it
DESKTOP_VARIABLES = (
    "XDG_CURRENT_DESKTOP",
    "XDG_SESSION_DESKTOP",
    "DESKTOP_SESSION",
    "GNOME_DESKTOP_SESSION_ID",
    "KDE_FULL_SESSION",
)
DESKTOPS: dict[str, dict[str, str]] = {
    "plain": {},
    "gnome": {
        "XDG_CURRENT_DESKTOP": "GNOME",
        "XDG_SESSION_DESKTOP": "gnome",
        "DESKTOP_SESSION": "gnome",
        "GNOME_DESKTOP_SESSION_ID": "this-is-deprecated",  # gnome-session still sets it
    },
    "ubuntu": {
        "XDG_CURRENT_DESKTOP": "ubuntu:GNOME",
        "XDG_SESSION_DESKTOP": "ubuntu",
        "DESKTOP_SESSION": "ubuntu",
        "GNOME_DESKTOP_SESSION_ID": "this-is-deprecated",
    },
}


def desktop_env(env: dict[str, str], desktop: str | None) -> dict[str, str]:
    """`env` as on `desktop`'s session (None: as it is)."""
    if desktop is None:
        return env
    kept = {key: value for key, value in env.items() if key not in DESKTOP_VARIABLES}
    return {**kept, **DESKTOPS[desktop]}


def wait_for(condition, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout} s")
        time.sleep(0.002)


def painted_at(log: Path) -> tuple[float, float] | None:
    """When the first window was painted (epoch) and the process's CPU by then (ms; NaN when
    the app does not say)."""
    try:
        match = PAINTED.search(log.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    if not match:
        return None
    return float(match.group(1)), float(match.group(2) or "nan")


def ready_at(log: Path) -> tuple[float, float]:
    """When the window was bound to its engine (Start enabled; epoch) and the process's CPU
    by then (ms); NaN for both where the app does not say (a commit before it did)."""
    match = READY.search(log.read_text(encoding="utf-8"))
    if not match:
        return float("nan"), float("nan")
    return float(match.group(1)), float(match.group(2))


def process_cpu_s(pid: int) -> float:
    """The CPU time (user + system, all its threads) of process `pid` so far, in seconds; NaN
    where /proc does not tell (not Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def launch_once(
    env: dict[str, str], command: list[str], cwd: Path | None = ROOT
) -> dict[str, float]:
    """One launch (and a second one that hands over) from `cwd`; None: from the data dir."""
    with tempfile.TemporaryDirectory(prefix="app-start-") as tmp:
        data_dir = Path(tmp)
        child_env = {**env, "DESKTOP_AGENT_HOME": str(data_dir)}
        argv = [*command, "--data-dir", str(data_dir)]
        spawned = time.time()
        process = subprocess.Popen(
            argv,
            cwd=data_dir if cwd is None else cwd,
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            painted, paint_cpu_ms = wait_for(
                lambda: painted_at(data_dir / "desktop-agent.log"), 20, "paint"
            )
            instance = data_dir / "instances" / f"{process.pid}.json"
            wait_for(instance.exists, 20, "API registration")
            api_up = time.time()
            api_cpu = process_cpu_s(process.pid)
            ready, ready_cpu_ms = ready_at(data_dir / "desktop-agent.log")
            second_started = time.monotonic()
            second = subprocess.run(
                argv,
                cwd=data_dir if cwd is None else cwd,
                env=child_env,
                capture_output=True,
                timeout=20,
                check=False,
            )
            second_s = time.monotonic() - second_started
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=20)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
        if code != 0 or second.returncode != 0:
            raise RuntimeError(
                f"app exit {code}, second launch exit {second.returncode}\n{stderr[-2000:]}"
            )
        if instance.exists():
            raise RuntimeError("the app left its instance file behind")
        return {
            "paint": painted - spawned,
            "paint_cpu": paint_cpu_ms / 1000,
            "ready": ready - spawned,
            "ready_cpu": ready_cpu_ms / 1000,
            "api": api_up - spawned,
            "api_cpu": api_cpu,
            "second": second_s,
        }


def measure(
    platform: str,
    repeat: int,
    command: list[str],
    *,
    bytecode_dir: str | None,
    cwd: Path | None = ROOT,
    desktop: str | None = None,
) -> list[dict[str, float]]:
    env = desktop_env(dict(os.environ), desktop)
    session = None
    if platform == "offscreen":
        env["QT_QPA_PLATFORM"] = "offscreen"
        env.pop("DISPLAY", None)
    else:
        from tests.support.xdisplay import start_xsession

        session = start_xsession(1920, 1080, atspi=False)
        env = desktop_env(session.child_env({"QT_QPA_PLATFORM": "xcb"}), desktop)
    if bytecode_dir is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = bytecode_dir
    try:
        launch_once(env, command, cwd)  # warm the OS file cache; not counted
        return [launch_once(env, command, cwd) for _ in range(repeat)]
    finally:
        if session is not None:
            session.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--platform", choices=("xvfb", "offscreen", "both"), default="both")
    parser.add_argument(
        "--bundle",
        type=Path,
        help="launch the frozen app of this one-folder bundle (packaging/build's "
        "dist/desktop-agent) instead of the source",
    )
    parser.add_argument(
        "--python",
        help="launch `-m desktop_agent` with this interpreter (e.g. of a venv where the package "
        "is installed from its wheel), from the data dir; default: this one, from the checkout",
    )
    parser.add_argument(
        "--compile-each-launch",
        action="store_true",
        help="no bytecode cache of its own: the environment decides (PYTHONDONTWRITEBYTECODE "
        "makes every launch compile the package again)",
    )
    parser.add_argument(
        "--desktop",
        choices=sorted(DESKTOPS),
        help="start the app as on this desktop's session (the variables Qt reads to pick its "
        "platform theme); default: the environment as it is",
    )
    args = parser.parse_args()
    command = [args.python or sys.executable, "-m", "desktop_agent"]
    if args.bundle is not None:
        command = [str(args.bundle.resolve() / "desktop-agent")]
    platforms = ["offscreen", "xvfb"] if args.platform == "both" else [args.platform]
    if "xvfb" in platforms and shutil.which("Xvfb") is None:
        print("app_start: Xvfb not installed; measuring offscreen only")
        platforms = ["offscreen"]
    cached = args.bundle is None and not args.compile_each_launch
    with tempfile.TemporaryDirectory(prefix="app-start-pyc-") as pyc:
        for platform in platforms:
            report(platform, args, command, bytecode_dir=pyc if cached else None)
    return 0


def report(
    platform: str, args: argparse.Namespace, command: list[str], *, bytecode_dir: str | None
) -> None:
    cwd = None if args.python and args.bundle is None else ROOT
    runs = measure(
        platform, args.repeat, command, bytecode_dir=bytecode_dir, cwd=cwd, desktop=args.desktop
    )
    paint = [r["paint"] * 1000 for r in runs]
    paint_cpu = [r["paint_cpu"] * 1000 for r in runs]
    ready = [r["ready"] * 1000 for r in runs]
    ready_cpu = [r["ready_cpu"] * 1000 for r in runs]
    api = [r["api"] * 1000 for r in runs]
    api_cpu = [r["api_cpu"] * 1000 for r in runs]
    second = [r["second"] * 1000 for r in runs]
    what = f"bundle {args.bundle}" if args.bundle else "source"
    if args.bundle is None and args.python:
        what = f"installed in {args.python}"
    if args.bundle is None:
        what += ", bytecode cached" if bytecode_dir else ", compiled at each launch"
    if args.desktop is not None:
        what += f", desktop {args.desktop}"
    print(f"app_start ({what}, {platform}, {args.repeat} launches after one warm-up):")
    print(
        f"  process start → first window painted: median {statistics.median(paint):.0f} ms, "
        f"max {max(paint):.0f} ms (target <= 300)  [{', '.join(f'{t:.0f}' for t in paint)}]"
    )
    print(
        f"  CPU of the app's process by its first paint: median "
        f"{statistics.median(paint_cpu):.0f} ms (less moved by other load than the wall time)"
    )
    if not any(map(math.isnan, ready)):
        print(
            f"  process start → ready to start a run (the window bound to its engine, Start "
            f"enabled): median {statistics.median(ready):.0f} ms, max {max(ready):.0f} ms, "
            f"CPU median {statistics.median(ready_cpu):.0f} ms"
        )
    print(
        f"  process start → store, adapters and local API up: median "
        f"{statistics.median(api):.0f} ms, max {max(api):.0f} ms, CPU median "
        f"{statistics.median(api_cpu):.0f} ms"
    )
    print(
        f"  second launch on the same data dir (hands over, exits 0): median "
        f"{statistics.median(second):.0f} ms"
    )


if __name__ == "__main__":
    sys.exit(main())
