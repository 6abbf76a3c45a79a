"""Stop while the GUI thread is blocked: global hotkey → run_finished stored and emitted.

    python benchmarks/gui_blocked_stop.py [--trials 20] [--block-s 2.0] [--xvfb]

The app's parts as in `desktop-agent` (the main window, the Agent on its engine thread,
the real XGrabKey stop hotkey) run a task whose model request never returns. Then the GUI
thread is blocked for `--block-s` (a slot that sleeps, as a stuck widget would), and while
it is, `xdotool key ctrl+alt+Escape` presses the hotkey. Measured: from just before
xdotool is started to the moment the engine has stored the run stopped / user_stop and
emitted run_finished (an engine-side listener). Every trial checks that this happened while
the GUI thread was still blocked; a stop that waited for the GUI would take the rest of the
block. Target (issue #9): p99 <= 50 ms while the GUI is blocked. xdotool's own start-up is
in the figure (it is the "user" here).

Needs an X display with a window manager: `--xvfb` makes a private one.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop_agent.core.events import RunFinished  # noqa: E402
from desktop_agent.core.models import RunStatus, StopReason  # noqa: E402
from desktop_agent.ui.main_window import MainWindow  # noqa: E402
from tests.fakes import (
    ScriptedPlanner,  # noqa: E402
    make_agent,
)
from tests.gui.fake_agent import CrossEvent, bind_window, until  # noqa: E402

HOTKEY = "ctrl+alt+esc"


async def one_trial(
    window: MainWindow, client: Any, finished: dict[str, float], block_s: float
) -> tuple[float, float]:
    """(hotkey → run_finished ms, how much of the block was left then, ms)."""
    window.panel.goal_edit.setPlainText("wait for a model that never answers")
    window.panel.start_button.click()
    await until(lambda: window.panel.state == "running", timeout=10, what="running")
    await until(lambda: client.host._agent.runner.active_ids, timeout=10)
    await asyncio.sleep(0.05)  # the model request is in flight
    run_id = client.host._agent.runner.active_ids[0]
    blocked: dict[str, float] = {}

    def block_the_gui_thread() -> None:
        blocked["from"] = time.perf_counter()
        time.sleep(block_s)  # nothing else runs on the GUI thread meanwhile
        blocked["until"] = time.perf_counter()

    pressed: dict[str, float] = {}

    def press_the_hotkey() -> None:
        time.sleep(block_s / 4)  # well inside the block
        pressed["at"] = time.perf_counter()
        subprocess.run(["xdotool", "key", "ctrl+alt+Escape"], check=True)

    presser = threading.Thread(target=press_the_hotkey)
    QTimer.singleShot(0, block_the_gui_thread)
    presser.start()
    await until(lambda: "until" in blocked, timeout=block_s + 10, what="the block to end")
    presser.join()
    await until(lambda: window.run is not None and window.run.status.is_terminal, timeout=10)
    run = window.run
    assert run is not None and (run.status, run.stop_reason) == (
        RunStatus.STOPPED,
        StopReason.USER_STOP,
    ), run
    took = finished.pop(run_id) - pressed["at"]
    left = blocked["until"] - (pressed["at"] + took)
    return took * 1000, left * 1000


async def main_async(args: argparse.Namespace, data_dir: Path) -> list[tuple[float, float]]:
    agent = make_agent(data_dir)
    never = CrossEvent()

    async def hang(request: Any) -> Any:
        await never.wait()

    agent.planner_factory = lambda run: ScriptedPlanner([hang])
    window = MainWindow()
    window.show()
    client = bind_window(window, agent)
    finished: dict[str, float] = {}

    def on_engine(event: Any) -> None:  # the engine thread: the moment it is stored + emitted
        if isinstance(event, RunFinished):
            finished[event.run.id] = time.perf_counter()

    client.engine.call(agent.runner.subscribe, on_engine)
    await until(lambda: not window.tasks)
    if not await client.ask(client.host.grab_stop_hotkey, HOTKEY):
        raise SystemExit(f"gui_blocked_stop: no hotkey: {client.host.hotkey_problem}")
    try:
        return [await one_trial(window, client, finished, args.block_s) for _ in range(args.trials)]
    finally:
        await window.shutdown()
        window.allow_close()
        window.close()
        await client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--block-s", type=float, default=2.0)
    parser.add_argument("--xvfb", action="store_true", help="on a private Xvfb desktop")
    args = parser.parse_args()
    if args.xvfb:
        from tests.support.xdisplay import rerun_on_xvfb

        return rerun_on_xvfb()
    if not os.environ.get("DISPLAY"):
        print("gui_blocked_stop: needs an X display (use --xvfb)", file=sys.stderr)
        return 2
    import qasync

    app = QApplication([sys.argv[0]])
    app.setQuitOnLastWindowClosed(False)
    with (
        tempfile.TemporaryDirectory(prefix="gui-blocked-stop-") as tmp,
        asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner,
    ):
        results = runner.run(main_async(args, Path(tmp)))
    took = sorted(ms for ms, _ in results)
    p99 = took[min(len(took) - 1, round(len(took) * 0.99))]
    left = [ms for _, ms in results]
    print(
        f"gui_blocked_stop: hotkey (xdotool) → run_finished stored+emitted, GUI thread blocked "
        f"{args.block_s:g} s, {len(took)} trials ({app.platformName()})"
    )
    print(
        f"  p50 {statistics.median(took):.1f} ms, p99 {p99:.1f} ms, max {took[-1]:.1f} ms "
        f"(target p99 <= 50 ms)"
    )
    print(
        f"  every stop ended the run while the GUI thread was still blocked: "
        f"{all(ms > 0 for ms in left)} (least block left: {min(left):.0f} ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
