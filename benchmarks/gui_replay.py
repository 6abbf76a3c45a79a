"""Replay of a stored 1000-step run into the main window's timeline.

    python benchmarks/gui_replay.py [--steps 1000] [--repeat 7] [--store sqlite|memory] [--xvfb]

A terminal run of `--steps` step rows (observe / decide / action per turn, with a
real screenshot and thumbnail file per turn) is written to the real SQLite store.
Then, in the real main window, the run is chosen in the history (the same call a
click makes) and timed until every row is in the timeline model and the worker is
done ("rows in"), and until the timeline has painted them ("painted", a forced
repaint of the view). Reading the steps from SQLite is part of the figure.
Target (DESIGN §7): <= 300 ms.

Runs offscreen unless QT_QPA_PLATFORM or DISPLAY says otherwise; `--xvfb` runs it on a
private Xvfb 1920x1080 + openbox desktop (tests/support/xdisplay.py) with Qt's xcb platform.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop_agent.core.models import (  # noqa: E402
    RunStatus,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
    TaskSpec,
)
from desktop_agent.ui.main_window import MainWindow  # noqa: E402
from tests.fakes import jpeg, make_agent
from tests.gui.fake_agent import bind_window, until  # noqa: E402


async def store_run(agent: Any, steps: int) -> str:
    """A completed run of `steps` rows, as the loop would have stored it."""
    repo = agent.repo
    run = await repo.create_run(TaskSpec(goal=f"a stored run of {steps} steps", max_steps=500))
    start = run.created_at
    image, thumb = jpeg(640, 360), jpeg(160, 90)
    turns = (steps + 2) // 3
    seq = 0
    for turn in range(1, turns + 1):
        shot = await repo.save_artifact(run.id, f"{turn:04d}.jpg", image)
        small = await repo.save_artifact(run.id, f"{turn:04d}.thumb.jpg", thumb)
        for kind in (StepKind.OBSERVE, StepKind.DECIDE, StepKind.ACTION):
            if seq == steps:
                break
            seq += 1
            at = start + timedelta(milliseconds=seq * 10)
            is_obs, is_act = kind is StepKind.OBSERVE, kind is StepKind.ACTION
            await repo.save_step(
                StepView(
                    run_id=run.id,
                    seq=seq,
                    index=turn,
                    kind=kind,
                    status=StepStatus.OK,
                    started_at=at,
                    finished_at=at + timedelta(milliseconds=8),
                    duration_ms=8.0,
                    tool="screen_snapshot" if is_obs else "click",
                    args={} if is_obs else {"x": turn % 640, "y": turn % 360},
                    summary="screenshot 640x360, 0 elements" if is_obs else "click ok",
                    screenshot=shot if is_obs else None,
                    thumbnail=small if is_obs else None,
                    reason=None if is_obs else f"turn {turn}: the button is there",
                    target=(turn % 640, turn % 360) if is_act else None,
                )
            )
    await repo.save_run(
        run.with_(
            status=RunStatus.COMPLETED,
            stop_reason=StopReason.DONE,
            step_count=turns,
            started_at=start,
            finished_at=start + timedelta(seconds=turns),
            message="done",
        )
    )
    return run.id


async def replay_once(window: MainWindow, run_id: str, steps: int) -> tuple[float, float]:
    window.timeline_model.clear()
    await asyncio.sleep(0.05)
    started = time.perf_counter()
    window.on_run_selected(run_id)
    worker = window.worker
    assert worker is not None and not worker.live
    await worker.wait()
    rows_in = time.perf_counter() - started
    window.timeline.viewport().repaint()
    painted = time.perf_counter() - started
    assert window.timeline_model.rowCount() == steps, window.timeline_model.rowCount()
    return rows_in * 1000, painted * 1000


async def main_async(args: argparse.Namespace, data_dir: Path) -> list[tuple[float, float]]:
    agent = make_agent(data_dir)
    if args.store == "sqlite":
        from desktop_agent.store import SqliteRunRepository

        agent.repo = SqliteRunRepository.open(data_dir)
        agent.runner.services.repo = agent.repo
    run_id = await store_run(agent, args.steps)
    window = MainWindow()
    window.show()
    client = bind_window(window, agent)  # the store is read on the engine thread, as in the app
    await until(lambda: window.history.model.rowCount() == 1 and not window.tasks)
    await asyncio.sleep(0.2)
    try:
        return [await replay_once(window, run_id, args.steps) for _ in range(args.repeat)]
    finally:
        await window.shutdown()
        window.allow_close()
        window.close()
        await client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument("--xvfb", action="store_true", help="on a private Xvfb desktop")
    args = parser.parse_args()
    if args.xvfb:
        from tests.support.xdisplay import rerun_on_xvfb

        return rerun_on_xvfb()
    app = QApplication([sys.argv[0]])
    app.setQuitOnLastWindowClosed(False)  # the engine closes after the window
    with (
        tempfile.TemporaryDirectory(prefix="gui-replay-") as tmp,
        asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner,
    ):
        times = runner.run(main_async(args, Path(tmp)))
    rows = [t[0] for t in times]
    painted = [t[1] for t in times]
    print(
        f"gui_replay: replay of a {args.steps}-step run into the timeline "
        f"({args.store} store, {app.platformName()}, {args.repeat} times)"
    )
    print("  rows in:  " + ", ".join(f"{t:.0f}" for t in rows) + " ms")
    print("  painted:  " + ", ".join(f"{t:.0f}" for t in painted) + " ms")
    print(
        f"  median {statistics.median(painted):.0f} ms, worst {max(painted):.0f} ms "
        f"to painted (target <= 300 ms); first replay {painted[0]:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
