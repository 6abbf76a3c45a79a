"""Element inventory time for l3afpad (AT-SPI), within the observer's hard budget.

Starts its own Xvfb + openbox + AT-SPI bus (tests/support/xdisplay.py) and l3afpad, then
measures over --runs, for each AT-SPI transport (the app's jeepney client, the same walk over
dbus-fast, and the pyatspi walk the app used before; benchmarks/atspi_baselines.py):
  * the inventory as the observer runs it (InventoryRunner.snapshot with the 100 ms budget,
    on its own thread), with how many walks the deadline cut short;
  * the same walk without a deadline (what the whole tree costs), and the CPU time of the
    inventory thread for it (moves less than the wall time on a shared machine);
  * the X11 window list alone (the fallback backend);
  * a whole observation with the inventory (capture and walk run side by side).
Target (DESIGN §7): median <= 100 ms, never past the budget.

    .venv/bin/python benchmarks/inventory.py [--runs 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.xdisplay import (  # noqa: E402
    release_pyautogui,
    start_xsession,
    use_xsession,
    wait_until,
)

BUDGET_S = 0.1


def summary(name: str, times: list[float], extra: str = "") -> str:
    ordered = sorted(times)
    p90 = ordered[int(len(ordered) * 0.9) - 1]
    return (
        f"  {name:<40} median {statistics.median(times):6.1f} ms  p90 {p90:6.1f}  "
        f"max {ordered[-1]:6.1f}{extra}"
    )


async def measure_backends(backends: dict[str, object], runs: int) -> tuple[list[str], dict]:
    """The budgeted and unbounded walks of each AT-SPI backend, taken in turns (run i of
    every backend, then run i+1, ...) so that the machine's load falls on all alike; the
    summary lines, and the elements each listed (every backend must list the same)."""
    from desktop_agent.desktop.inventory import InventoryRunner, WalkLimits

    runners = {label: InventoryRunner(backend) for label, backend in backends.items()}  # type: ignore[arg-type]
    first: dict[str, float] = {}
    listed: dict[str, list] = {}
    budgeted: dict[str, list[float]] = {label: [] for label in runners}
    unbounded: dict[str, list[float]] = {label: [] for label in runners}
    cut = dict.fromkeys(runners, 0)
    cpu: dict[str, list[float]] = {label: [] for label in runners}

    def walk_cpu_ms(backend: object) -> float:
        """The unbounded walk, on the inventory's thread; that thread's CPU time for it."""
        started = time.thread_time()
        backend.snapshot(WalkLimits())  # type: ignore[attr-defined]
        return (time.thread_time() - started) * 1000

    try:
        for label, runner in runners.items():
            started = time.perf_counter()
            for _ in range(100):  # l3afpad registers on the bus a moment after its window maps
                raw, used = await runner.snapshot(1.0)
                if used == "atspi" and any(e.role == "edit" for e in raw):
                    break
                await asyncio.sleep(0.05)
            else:
                raise SystemExit(f"{label}: l3afpad never showed up on the AT-SPI bus")
            first[label] = (time.perf_counter() - started) * 1000
            listed[label] = [(e.role, e.name, e.rect, e.enabled, e.focused) for e in raw]
        for _ in range(runs):
            for label, runner in runners.items():
                started = time.perf_counter()
                raw, used = await runner.snapshot(BUDGET_S)
                budgeted[label].append((time.perf_counter() - started) * 1000)
                cut[label] += used != "atspi" or not any(e.role == "edit" for e in raw)
                started = time.perf_counter()
                cpu[label].append(await runner.run(walk_cpu_ms))
                unbounded[label].append((time.perf_counter() - started) * 1000)
    finally:
        for runner in runners.values():
            runner.close()
    lines = []
    for label in runners:
        lines += [
            summary(
                f"{label}: inventory (observer's path)",
                budgeted[label],
                f"  cut short {cut[label]}/{runs}",
            ),
            summary(
                f"{label}: walk without a deadline",
                unbounded[label],
                f"  (first {first[label]:.0f} ms; CPU of its thread: median "
                f"{statistics.median(cpu[label]):.1f} ms)",
            ),
        ]
    return lines, listed


async def measure(runs: int) -> None:
    from benchmarks.atspi_baselines import DbusFastInventory, PyatspiInventory
    from desktop_agent.desktop import DesktopObserver
    from desktop_agent.desktop.inventory import InventoryRunner
    from desktop_agent.desktop.inventory.atspi import AtspiInventory
    from desktop_agent.desktop.inventory.x11 import X11Inventory

    lines, listed = await measure_backends(
        {
            "jeepney (the app)": AtspiInventory(),
            "dbus-fast": DbusFastInventory(),
            "pyatspi (Debian)": PyatspiInventory(),
        },
        runs,
    )
    reference = listed["jeepney (the app)"]
    print(
        f"l3afpad: {len(reference)} elements through AT-SPI ({', '.join(e[0] for e in reference)})"
    )
    for label, elements in listed.items():
        if elements != reference:
            print(f"  !! {label} listed other elements: {elements}")
    print()

    x11 = InventoryRunner(X11Inventory())
    try:
        await x11.snapshot(1.0)
        windows = []
        for _ in range(runs):
            started = time.perf_counter()
            await x11.snapshot(BUDGET_S)
            windows.append((time.perf_counter() - started) * 1000)
    finally:
        x11.close()

    observer = DesktopObserver(backend=AtspiInventory(), inventory_budget_s=BUDGET_S)
    try:
        await observer.observe()
        observed = []
        for _ in range(runs):
            started = time.perf_counter()
            observation = await observer.observe()
            observed.append((time.perf_counter() - started) * 1000)
    finally:
        observer.close()

    print(f"{runs} runs, budget {BUDGET_S * 1000:.0f} ms:")
    for line in lines:
        print(line)
    print(summary("X11 window list alone", windows))
    print(
        summary(
            "observe() with AT-SPI inventory",
            observed,
            f"  ({len(observation.elements)} elements, {observation.inventory_backend})",
        )
    )
    print("target: median <= 100 ms")


def plain_background(display_name: str) -> None:
    """A flat desktop colour instead of Xvfb's stippled root, which is JPEG's worst case and
    would make the observe() line measure the encoder, not the inventory."""
    from Xlib import display

    connection = display.Display(display_name)
    try:
        root = connection.screen().root
        root.change_attributes(background_pixel=0x3C5A80)
        root.clear_area()
        connection.sync()
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    session = start_xsession(1920, 1080, atspi=True)
    saved = use_xsession(session)
    try:
        plain_background(session.display)
        editor = session.spawn(["l3afpad"])
        from desktop_agent.desktop.inventory.x11 import X11Windows

        windows = X11Windows(session.display)
        try:
            wait_until(
                lambda: any(
                    w.active and w.wm_class.lower() == "l3afpad" for w in windows.windows()
                ),
                timeout=10,
                what="l3afpad's window",
            )
        finally:
            windows.close()
        asyncio.run(measure(args.runs))
        session.stop(editor)
    finally:
        release_pyautogui()
        saved.restore()
        session.close()


if __name__ == "__main__":
    main()
