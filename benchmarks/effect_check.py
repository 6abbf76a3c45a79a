"""Effect check: cost per turn of the screen signature + comparison, and what l3afpad scores.

Starts its own Xvfb (tests/support/xdisplay.py) at 1920x1080 and
  * on the busy synthetic desktop of benchmarks/observe.py, grabbed and scaled to 1280x720 as
    the observer does, measures capture.signature() and core.effect.screen_change() (medians
    and p95 over --runs; target: signature + compare <= 5 ms per turn);
  * observe() with and without the signature, interleaved (what it adds to a turn);
  * with l3afpad, prints the changed cells and the score of a caret blink and scroll-bar fade
    (the worst pair over 3 s of idle frames), a clock-like tick, typed characters and words,
    and an opened menu, against CHANGE_THRESHOLD.

    .venv/bin/python benchmarks/effect_check.py [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from observe import busy_desktop, paint  # noqa: E402 - benchmarks/observe.py

from desktop_agent.core.effect import CHANGE_THRESHOLD, screen_change  # noqa: E402
from desktop_agent.desktop.capture import ScreenCapture, signature  # noqa: E402
from tests.support.xdisplay import (  # noqa: E402
    XSession,
    release_pyautogui,
    start_xsession,
    use_xsession,
    wait_until,
)

WIDTH, HEIGHT = 1920, 1080


def timings_ms(work: Callable[[], Any], runs: int) -> tuple[float, float]:
    """(median, p95) in ms."""
    work()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def cost(capture: ScreenCapture, runs: int) -> None:
    from PIL import ImageDraw

    shot = capture.grab().image
    print(f"screenshot {shot.width}x{shot.height} (scaler {capture.scaler}), {runs} runs\n")
    changed = shot.copy()
    ImageDraw.Draw(changed).text((400, 300), "a typed word", fill=(0, 0, 0))
    before, after = signature(shot), signature(changed)
    cells = len(before)

    sig = timings_ms(lambda: signature(shot), runs)
    same = timings_ms(lambda: screen_change(before, before), runs)
    differ = timings_ms(lambda: screen_change(before, after), runs)
    turn = timings_ms(lambda: screen_change(before, signature(changed)), runs)
    print(f"signature ({cells} cells)                median {sig[0]:6.3f} ms   p95 {sig[1]:6.3f}")
    print(f"screen_change, identical          median {same[0]:6.3f} ms   p95 {same[1]:6.3f}")
    print(f"screen_change, changed            median {differ[0]:6.3f} ms   p95 {differ[1]:6.3f}")
    print(
        f"per turn (signature + compare)    median {turn[0]:6.3f} ms   p95 {turn[1]:6.3f}"
        "   target <= 5"
    )


async def observe_with_and_without(runs: int) -> None:
    """observe() (no inventory, JPEG) with the signature and with it stubbed out, interleaved
    so that the load of the moment weighs on both alike."""
    from desktop_agent.desktop import DesktopObserver
    from desktop_agent.desktop import observer as observer_module

    real = observer_module.signature
    observer = DesktopObserver(inventory=False)
    times: dict[bool, list[float]] = {True: [], False: []}
    try:
        await observer.observe()
        for index in range(2 * runs):
            with_signature = index % 2 == 0
            observer_module.signature = real if with_signature else (lambda image: b"")
            started = time.perf_counter()
            await observer.observe()
            times[with_signature].append((time.perf_counter() - started) * 1000)
    finally:
        observer_module.signature = real
        observer.close()
    on, off = statistics.median(times[True]), statistics.median(times[False])
    print(f"\nobserve() JPEG, no inventory, {runs} interleaved runs each:")
    print(f"  with the signature      median {on:6.2f} ms")
    print(f"  without (stubbed)       median {off:6.2f} ms   difference {on - off:+.2f} ms")


class Scene:
    """l3afpad driven by pyautogui; each state's signature as the observer makes it."""

    def __init__(self, capture: ScreenCapture) -> None:
        import pyautogui

        self.capture = capture
        self.gui = pyautogui

    def signature(self) -> bytes:
        return signature(self.capture.grab().image)

    def after(self, action: Callable[[], None], settle_s: float = 0.4) -> tuple[bytes, bytes]:
        before = self.signature()
        action()
        time.sleep(settle_s)  # a benchmark, not a test: the editor draws within this
        return before, self.signature()


def report(name: str, before: bytes, after: bytes) -> None:
    score = screen_change(before, after)
    verdict = "changed" if score >= CHANGE_THRESHOLD else "no visible change"
    print(f"  {name:<42} {round(score * len(before)):4d} cells  {score:.5f}  {verdict}")


def scenes(session: XSession, capture: ScreenCapture) -> None:
    from desktop_agent.desktop.inventory.x11 import X11Windows

    windows = X11Windows(session.display)
    editor = session.spawn(["l3afpad"])
    try:
        wait_until(
            lambda: any(w.active and w.wm_class.lower() == "l3afpad" for w in windows.windows()),
            timeout=10,
            what="l3afpad",
        )
        scene = Scene(capture)
        gui = scene.gui
        cells = math.ceil(CHANGE_THRESHOLD * 9216)
        print(f"\nl3afpad on Xvfb, threshold {CHANGE_THRESHOLD} (from {cells} of 9216 cells):")
        report("typed line", *scene.after(lambda: gui.write("The quick brown fox at 12:59")))
        gui.moveTo(20, 20)  # GTK's caret does not blink under a resting pointer
        frames = []
        for _ in range(30):
            frames.append(scene.signature())
            time.sleep(0.1)
        worst = max(zip(frames, frames[1:], strict=False), key=lambda pair: screen_change(*pair))
        report("idle 3 s: caret blink, scroll bar (worst)", *worst)
        report(
            "clock tick 12:59 -> 12:58",
            *scene.after(lambda: gui.press(["backspace"]) or gui.write("8")),
        )
        report(
            "clock tick 12:58 -> 13:00",
            *scene.after(lambda: gui.press(["backspace"] * 4) or gui.write("3:00")),
        )
        report("one character", *scene.after(lambda: gui.write(" x")))
        for word in ("word", "hello", "typed"):
            report(f"a word ({word!r})", *scene.after(lambda w=word: gui.write(" " + w)))
        report("menu opened (F10)", *scene.after(lambda: gui.press("f10"), 0.6))
        gui.press("esc")
    finally:
        session.stop(editor)
        windows.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    session = start_xsession(WIDTH, HEIGHT, atspi=False)
    saved = use_xsession(session)
    capture = ScreenCapture(width=1280)
    capture.choose_scaler()  # on the main thread, as the observer does
    connection = None
    try:
        connection = paint(session.display, busy_desktop())
        cost(capture, args.runs)
        asyncio.run(observe_with_and_without(args.runs // 2))
        connection.close()
        connection = None
        scenes(session, capture)
    finally:
        if connection is not None:
            connection.close()
        capture.close()
        release_pyautogui()
        saved.restore()
        session.close()


if __name__ == "__main__":
    main()
