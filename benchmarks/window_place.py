"""The window search of the Wayland element list (desktop/window_place.py): the time to find a
window from its parts' boxes on a 1280x720 screenshot (issue 34 item 2).

A drawn desk (the headless GNOME desk's blue backdrop) with a drawn GTK-like window (the
shapes of tests/unit/desktop/test_window_place.py), found at --runs places; the median and
the worst time, and how many were found within a pixel. It runs on the observer's capture
thread once per observation whose elements are relative to their window.

    .venv/bin/python benchmarks/window_place.py [--runs 30]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_agent.desktop.window_place import find_window  # noqa: E402
from tests.unit.desktop.test_window_place import desk, draw_window, outlines  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    chance = random.Random(34)
    times: list[float] = []
    found = 0
    for _ in range(runs):
        origin = (chance.randrange(-60, 700), chance.randrange(-20, 300))
        image = desk()
        draw_window(image, origin)
        started = time.perf_counter()
        place = find_window(image, outlines())
        times.append((time.perf_counter() - started) * 1000)
        if place is not None and max(abs(place[0] - origin[0]), abs(place[1] - origin[1])) <= 1:
            found += 1
    print(
        f"window search at 1280x720: median {statistics.median(times):.1f} ms, "
        f"worst {max(times):.1f} ms; found within 1 px: {found}/{runs}"
    )


if __name__ == "__main__":
    main()
