"""The gap between the clicks of the executor's double click, as the X server stamps them, with
and without the check of the window under the point between them (executor `_click`,
`X11WindowAtPoint`: one XTranslateCoordinates round trip before the first click and one
before each next).

Starts its own Xvfb + openbox (tests/support/xdisplay.py) at 1920x1080, covers the screen with
tests/support's InputRecorder, and double-clicks its middle --runs times each way,
interleaved. Prints the median and worst gap between the two ButtonPress events (server ms;
the clicks must stay within the desktop's double-click interval: GTK and Qt default to
400 ms) and the read's own cost (µs, median and p99 of --runs * 20 reads).

    .venv/bin/python benchmarks/double_click_gap.py [--runs 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_agent.core.builtin_tools import builtin_registry  # noqa: E402
from desktop_agent.core.models import Observation  # noqa: E402
from desktop_agent.core.ports import ToolContext  # noqa: E402
from tests.support.input_recorder import InputRecorder  # noqa: E402
from tests.support.xdisplay import (  # noqa: E402
    release_pyautogui,
    start_xsession,
    use_xsession,
)

SCREEN = Observation(b"", "image/png", 1920, 1080)


async def gaps(checked: bool, runs: int, recorder: InputRecorder) -> list[int]:
    from desktop_agent.desktop.executor import DesktopExecutor

    spec, args = builtin_registry().validate("click", {"x": 960, "y": 540, "clicks": 2})
    executor = DesktopExecutor(settle_s=0)
    if not checked:
        executor.window_at = None
    found = []
    try:
        for _ in range(runs):
            recorder.sync()
            recorder.events.clear()
            await executor.execute(spec, args, ToolContext("run", SCREEN, threading.Event()))
            recorder.wait_for("button_press", 2)
            first, second = [e.time for e in recorder.events if e.kind == "button_press"][:2]
            found.append(second - first)
            await asyncio.sleep(0.6)  # past any double-click interval: the next pair is apart
    finally:
        executor.close()
    return found


def read_cost_us(reads: int) -> tuple[float, float]:
    from desktop_agent.desktop.inventory.x11 import X11WindowAtPoint

    read = X11WindowAtPoint()
    read(960, 540)  # the connection opened
    times = []
    for _ in range(reads):
        started = time.perf_counter()
        read(960, 540)
        times.append((time.perf_counter() - started) * 1e6)
    read.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


async def measure(runs: int) -> None:
    recorder = InputRecorder(_display())
    try:
        unchecked: list[int] = []
        checked: list[int] = []
        for _ in range(2):  # interleaved halves
            unchecked += await gaps(False, runs // 2, recorder)
            checked += await gaps(True, runs // 2, recorder)
    finally:
        recorder.close()
    for name, found in (("without the check", unchecked), ("with the check", checked)):
        print(
            f"  {name:18s} gap median {statistics.median(found):5.1f} ms, worst {max(found)} ms"
            f" ({len(found)} double clicks)"
        )
    median, p99 = read_cost_us(runs * 20)
    print(f"  the read (XTranslateCoordinates): median {median:.0f} µs, p99 {p99:.0f} µs")


def _display() -> str:
    import os

    return os.environ["DISPLAY"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    options = parser.parse_args()
    session = start_xsession(1920, 1080, atspi=False)
    saved = use_xsession(session)
    try:
        print("double click: the gap between its ButtonPress events (X server time)")
        asyncio.run(measure(max(2, options.runs)))
    finally:
        release_pyautogui()
        saved.restore()
        session.close()


if __name__ == "__main__":
    main()
