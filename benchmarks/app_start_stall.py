"""App start: how long the GUI thread stalls from the first paint until the app is up.

    python benchmarks/app_start_stall.py [--repeat 5] [--platform offscreen|xvfb]
                                         [--history N] [--python PATH] [--tail 1.0]

Each launch is the app as `desktop-agent` starts it (`python -c` calling the entry point, from
a bytecode cache as app_start.py does), on a fresh data dir (with N stored runs for
`--history N`: the window's history loads them once it is bound). At the window's first
paint (the app's `_log_first_paint`, wrapped) a heartbeat starts on the GUI thread: a precise
4 ms QTimer whose every beat notes the time; the moment the window is bound to its engine
(`MainWindow.bind`, wrapped: Start on) is noted too, so commits that do not log it compare.
The launch ends (SIGTERM) `--tail` seconds after
the app registered its local API (instances/<pid>.json: the store, the adapters, the API up),
so the window also covers what comes once it is up (the history, the model line's check,
the first start's server finder). A gap between two beats longer than the beat is the GUI
thread busy (or waiting for the GIL): the figures are the longest gap, the 99th percentile,
the time in gaps over 16 ms (one frame), from the paint to API up + tail. `--python` launches
with another interpreter (another checkout's venv: its own code).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.app_start import wait_for  # noqa: E402

BEAT_MS = 4
FRAME_MS = 16.0

#: the launched app: the entry point, with a heartbeat from the first paint written at exit
LAUNCHER = """
import atexit, json, sys, time
import desktop_agent.app as app
from desktop_agent.__main__ import main
from desktop_agent.ui.main_window import MainWindow

beats = []
bound = []
bind = MainWindow.bind

def bound_now(window, client, runs):
    bind(window, client, runs)
    bound.append(time.time())

MainWindow.bind = bound_now
painted = app._log_first_paint
keep = []

def first_paint():
    from PySide6.QtCore import QTimer, Qt
    painted()
    beats.append(time.time())
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.timeout.connect(lambda: beats.append(time.time()))
    timer.start(%(beat)d)
    keep.append(timer)

def dump():
    with open(%(out)r, "w") as out:
        json.dump({"beats": beats, "bound": bound}, out)

app._log_first_paint = first_paint
atexit.register(dump)
sys.exit(main(["--data-dir", %(data_dir)r]))
"""


def store_runs(data_dir: Path, count: int, python: str) -> None:
    """`count` finished runs in the data dir's history (through the store, as a run saves)."""
    script = f"""
import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from desktop_agent.core.models import RunStatus, RunView, StopReason
from desktop_agent.store import SqliteRunRepository

async def fill():
    repo = SqliteRunRepository.open(Path({str(data_dir)!r}))
    now = datetime.now(UTC)
    for n in range({count}):
        at = now - timedelta(minutes=n)
        await repo.save_run(RunView(
            id=f"run-{{n:05d}}", goal=f"open the editor and type hello, number {{n}}",
            status=RunStatus.COMPLETED, stop_reason=StopReason.DONE, step_count=5,
            max_steps=20, max_failures=3, allowed_tools=(), model="qwen2.5vl",
            base_url="http://localhost:11434/v1", created_at=at, started_at=at,
            finished_at=at + timedelta(seconds=30), message="Done."))
    repo.close()

asyncio.run(fill())
"""
    subprocess.run([python, "-c", script], cwd=data_dir, check=True, timeout=120)


def launch_once(env: dict[str, str], python: str, history: int, tail: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="app-stall-") as tmp:
        data_dir = Path(tmp)
        if history:
            store_runs(data_dir, history, python)
        out = data_dir / "beats.json"
        script = LAUNCHER % {"beat": BEAT_MS, "out": str(out), "data_dir": str(data_dir)}
        child_env = {**env, "DESKTOP_AGENT_HOME": str(data_dir)}
        spawned = time.time()
        process = subprocess.Popen(
            [python, "-c", script],
            cwd=data_dir,
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            instance = data_dir / "instances" / f"{process.pid}.json"
            wait_for(instance.exists, 30, "API registration")
            api_up = time.time()
            time.sleep(tail)
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=20)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
        if code != 0:
            raise RuntimeError(f"app exit {code}\n{stderr[-2000:]}")
        noted = json.loads(out.read_text())
        beats = [t for t in noted["beats"] if t <= api_up + tail]
        bound = noted["bound"][0] if noted["bound"] else float("nan")
    gaps = [(later - earlier) * 1000 for earlier, later in zip(beats, beats[1:], strict=False)]
    gaps.sort()
    return {
        "paint": (beats[0] - spawned) * 1000,
        "ready": (bound - spawned) * 1000,
        "api": (api_up - spawned) * 1000,
        "longest": gaps[-1],
        "p99": gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))],
        "over_frame": sum(gap for gap in gaps if gap > FRAME_MS),
        "beats": len(beats),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--platform", choices=("xvfb", "offscreen"), default="offscreen")
    parser.add_argument("--history", type=int, default=0, help="stored runs in the data dir")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--tail", type=float, default=1.0, help="seconds after API up")
    args = parser.parse_args()
    env = dict(os.environ)
    session = None
    if args.platform == "offscreen":
        env["QT_QPA_PLATFORM"] = "offscreen"
        env.pop("DISPLAY", None)
    else:
        from tests.support.xdisplay import start_xsession

        session = start_xsession(1920, 1080, atspi=False)
        env = session.child_env({"QT_QPA_PLATFORM": "xcb"})
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        with tempfile.TemporaryDirectory(prefix="app-stall-pyc-") as pyc:
            env["PYTHONPYCACHEPREFIX"] = pyc
            launch_once(env, args.python, args.history, args.tail)  # warm-up, not counted
            runs = [
                launch_once(env, args.python, args.history, args.tail) for _ in range(args.repeat)
            ]
    finally:
        if session is not None:
            session.close()
    print(
        f"app_start_stall ({args.platform}, {args.history} stored runs, {args.repeat} launches "
        f"after one warm-up; GUI thread from the first paint to API up + {args.tail:.1f} s, "
        f"heartbeat {BEAT_MS} ms):"
    )
    for n, run in enumerate(runs, 1):
        print(
            f"  launch {n}: paint {run['paint']:.0f} ms, bound {run['ready']:.0f} ms, API up "
            f"{run['api']:.0f} ms; gaps: "
            f"longest {run['longest']:.1f} ms, p99 {run['p99']:.1f} ms, "
            f"{run['over_frame']:.0f} ms in gaps over {FRAME_MS:.0f} ms ({run['beats']} beats)"
        )
    print(
        f"  median: paint {statistics.median(r['paint'] for r in runs):.0f} ms, window bound "
        f"(Start on) {statistics.median(r['ready'] for r in runs):.0f} ms, API up "
        f"{statistics.median(r['api'] for r in runs):.0f} ms"
    )
    print(
        f"  median gaps: longest {statistics.median(r['longest'] for r in runs):.1f} ms, p99 "
        f"{statistics.median(r['p99'] for r in runs):.1f} ms, over a frame "
        f"{statistics.median(r['over_frame'] for r in runs):.0f} ms; worst longest "
        f"{max(r['longest'] for r in runs):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
