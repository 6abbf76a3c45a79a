"""What the GUI thread does in the heartbeat gaps of benchmarks/gui_stall.py: a breakdown.

    python benchmarks/gui_stall_profile.py [--turns 200] [--repeat 2] [--top 1] [--cprofile N]
                                           [--xvfb]

The same run as gui_stall.py (the real window, a 200-turn scripted run on the engine thread,
the SQLite store, the app's GUI-thread collector) with every Qt event the GUI thread handles
timed (QApplication.notify overridden: wall and thread CPU time, the event's type and
receiver; nested sends — a widget's Paint inside the window's UpdateRequest — are kept too)
and a few of the app's Python slots timed as well. Each heartbeat gap is then broken down by
what started in it. Printed: the gaps whose GUI-thread CPU is in the top `--top` percent,
the mean CPU per part in them, against the same for the median gap; and the ten heaviest
gaps one by one. The timing itself costs a few µs per event (the Python override), so the
gaps here are a little longer than gui_stall.py's; the breakdown is what this is for.
`--cprofile N`: instead, cProfile on the GUI thread (only) through each run, its N heaviest
functions by own time.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import gc
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import gui_stall  # noqa: E402
import qasync  # noqa: E402
from PySide6.QtCore import QEvent, QObject  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop_agent.ui.collector import collect_on_gui_thread  # noqa: E402

#: (start wall, wall ms, cpu ms, depth, label) of every timed piece, on the GUI thread
Record = tuple[float, float, float, int, str]
#: the depth recorded for a timed Python call (within whatever event it ran in)
PYTHON = 99


class TimedApp(QApplication):
    """A QApplication that times every event it delivers (on the GUI thread)."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv)
        self.records: list[Record] = []
        self.depth = 0
        self.on = False

    def notify(self, receiver: QObject, event: QEvent) -> bool:  # type: ignore[override]
        if not self.on:
            return super().notify(receiver, event)
        depth = self.depth
        self.depth = depth + 1
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return super().notify(receiver, event)
        finally:
            self.depth = depth
            took = (time.perf_counter() - wall) * 1000
            used = (time.thread_time() - cpu) * 1000
            kind = event.type()
            if depth == 0 or kind in _NESTED_KEPT:
                try:
                    name = receiver.objectName() or type(receiver).__name__
                    if name == "QWidget" and receiver.parent() is not None:
                        name = "QWidget in " + (
                            receiver.parent().objectName() or type(receiver.parent()).__name__
                        )
                except RuntimeError:  # deleted while it handled the event
                    name = "(deleted)"
                label = f"{kind.name} {name}"
                self.records.append((wall, took, used, depth, label))


_NESTED_KEPT = {QEvent.Type.Paint, QEvent.Type.LayoutRequest, QEvent.Type.MetaCall}


def time_calls(app: TimedApp, owner: Any, name: str, label: str | None = None) -> None:
    """Record each call of `owner.name` (a Python function) as a piece at depth PYTHON."""
    original: Callable[..., Any] = getattr(owner, name)
    shown = label or f"{getattr(owner, '__name__', owner)}.{name}"

    def timed(*args: Any, **kwargs: Any) -> Any:
        if not app.on:
            return original(*args, **kwargs)
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            app.records.append(
                (
                    wall,
                    (time.perf_counter() - wall) * 1000,
                    (time.thread_time() - cpu) * 1000,
                    PYTHON,
                    "py " + shown,
                )
            )

    setattr(owner, name, timed)


def instrument(app: TimedApp) -> None:
    from desktop_agent.ui import (
        collector,
        engine_client,
        history,
        main_window,
        status_bar,
        step_detail,
    )
    from desktop_agent.ui import timeline as tl

    for owner, names in (
        (engine_client.EngineClient, ("_hand_on_events", "_after_paint", "_tell_caught_up")),
        (main_window.MainWindow, ("on_shown_changed",)),
        (
            status_bar.RunStatusBar,
            ("on_shown_changed", "show_turn", "set_status", "show_elapsed"),
        ),
        (
            step_detail.StepDetail,
            ("show_step", "on_image_loaded", "show_selected", "on_timeline_data_changed"),
        ),
        (tl.TimelineModel, ("upsert", "on_image_loaded", "_make_texts")),
        (tl.TimelineView, ("on_scroll_due", "on_rows_inserted", "on_rows_about_to_be_inserted")),
        (tl.ImageLoader, ("on_decoded",)),
        (history.HistoryModel, ("upsert", "on_run_event")),
        (collector, ("collect_long_lived_rarely",)),
    ):
        for name in names:
            time_calls(app, owner, name)


class Gap(NamedTuple):
    cpu_ms: float  # the GUI thread's CPU time between the two beats
    wall_ms: float
    first: int  # the index of the beat it starts at


def breakdown(records: list[Record], beats: list[float], cpu: list[float], top: float) -> str:
    """The mean CPU per part in the gaps of the top `top` % GUI CPU, and in the median ones."""
    records.sort()
    starts = [record[0] for record in records]
    gaps = [
        Gap((cpu[n + 1] - cpu[n]) * 1000, (beats[n + 1] - beats[n]) * 1000, n)
        for n in range(len(beats) - 1)
    ]
    by_cpu = sorted(gaps)
    cut = by_cpu[int(len(by_cpu) * (1 - top / 100))].cpu_ms
    heavy = [gap for gap in gaps if gap.cpu_ms >= cut]
    half = len(heavy) // 2
    middle = by_cpu[len(by_cpu) // 2 - half : len(by_cpu) // 2 + half + 1]

    def parts(gap: Gap) -> tuple[dict[str, float], dict[str, int]]:
        """CPU ms and count per part of what started in `gap` (indented by nesting)."""
        lo = bisect.bisect_left(starts, beats[gap.first])
        hi = bisect.bisect_left(starts, beats[gap.first + 1])
        used: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        top_level = 0.0
        for _, _, cpu_ms, depth, label in records[lo:hi]:
            if depth == 0 and not label.endswith(" Heartbeat"):
                top_level += cpu_ms
            key = ("    " if depth == PYTHON else "  " * min(depth, 1)) + label
            used[key] += cpu_ms
            count[key] += 1
        used["(outside any event)"] = max(gap.cpu_ms - top_level, 0.0)
        return used, count

    def mean_parts(chosen: list[Gap]) -> tuple[dict[str, float], dict[str, float]]:
        used: dict[str, float] = defaultdict(float)
        count: dict[str, float] = defaultdict(float)
        for gap in chosen:
            gap_used, gap_count = parts(gap)
            for key, value in gap_used.items():
                used[key] += value / len(chosen)
            for key, n in gap_count.items():
                count[key] += n / len(chosen)
        return used, count

    (heavy_ms, heavy_n), (middle_ms, middle_n) = mean_parts(heavy), mean_parts(middle)
    lines = [
        f"  gaps: {len(gaps)}; GUI CPU in a gap: median "
        f"{statistics.median(gap.cpu_ms for gap in gaps):.2f} ms, top {top:g} % from "
        f"{cut:.2f} ms ({len(heavy)} gaps, wall mean "
        f"{statistics.mean(gap.wall_ms for gap in heavy):.1f} ms)",
        f"  mean per gap, CPU ms (count): {'heaviest':>34}  {'median':>13}",
    ]
    for key in sorted(heavy_ms.keys() | middle_ms.keys(), key=lambda k: -heavy_ms.get(k, 0)):
        if heavy_ms.get(key, 0) < 0.05 and middle_ms.get(key, 0) < 0.05:
            continue
        lines.append(
            f"    {key[:60]:<60} {heavy_ms.get(key, 0):6.2f} ({heavy_n.get(key, 0):4.1f})"
            f"  {middle_ms.get(key, 0):6.2f} ({middle_n.get(key, 0):4.1f})"
        )

    def one_by_one(title: str, chosen: list[Gap]) -> None:
        lines.append(f"  {title} (CPU ms / wall ms: the parts over 0.3 ms)")
        for gap in chosen:
            shown = sorted(((ms, key.strip()) for key, ms in parts(gap)[0].items()), reverse=True)
            lines.append(
                f"    {gap.cpu_ms:5.1f} / {gap.wall_ms:5.1f}: "
                + "; ".join(f"{key} {ms:.1f}" for ms, key in shown[:9] if ms >= 0.3)
            )

    one_by_one("the ten heaviest gaps", sorted(gaps, reverse=True)[:10])
    one_by_one("the five longest", sorted(gaps, key=lambda gap: -gap.wall_ms)[:5])
    return "\n".join(lines)


async def main_async(app: TimedApp, args: argparse.Namespace, data_dir: Path) -> list[str]:
    heartbeat = gui_stall.Heartbeat(args.tick_ms)
    heartbeat.timer.setObjectName("Heartbeat")
    out = []
    async with gui_stall.shown_window(data_dir, "sqlite") as (window, agent):
        for _ in range(args.repeat):
            app.records.clear()
            app.on = not args.cprofile
            if args.cprofile:
                import cProfile

                profile = cProfile.Profile()
                profile.enable()  # this (the GUI) thread only
            result = await gui_stall.one_run(window, agent, args.turns, heartbeat)
            app.on = False
            if args.cprofile:
                import io
                import pstats

                profile.disable()
                text = io.StringIO()
                pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(args.cprofile)
                out.append(text.getvalue())
                continue
            out.append(
                f"  run: p99 gap {result['p99']:.1f} ms, longest {result['max']:.1f} ms, "
                f"GUI CPU p99 {result['cpu_p99']:.1f} ms\n"
                + breakdown(app.records, heartbeat.beats, heartbeat.cpu, args.top)
            )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--tick-ms", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--top", type=float, default=1.0, help="percent of gaps, by GUI CPU")
    parser.add_argument("--xvfb", action="store_true")
    parser.add_argument("--cprofile", type=int, default=0, help="cProfile: the N top functions")
    args = parser.parse_args()
    if args.xvfb:
        from tests.support.xdisplay import rerun_on_xvfb

        return rerun_on_xvfb()
    app = TimedApp([sys.argv[0]])
    app.setQuitOnLastWindowClosed(False)
    instrument(app)
    collections = gui_stall.Collections()
    gc.callbacks.append(collections)
    with (
        collect_on_gui_thread(),
        tempfile.TemporaryDirectory(prefix="gui-stall-") as tmp,
        asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner,
    ):
        results = runner.run(main_async(app, args, Path(tmp)))
    gc.callbacks.remove(collections)
    print(f"gui_stall_profile: {args.turns}-turn run, {app.platformName()}")
    print("\n".join(results))
    print(f"  collections: {collections.summary()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
