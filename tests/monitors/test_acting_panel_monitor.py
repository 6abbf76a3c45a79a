"""The acting panel goes to the monitor the action is on, when a person is asked about it
(as the approval dialog opens there) and when an action ran there (issue 33 item 2): the
app's own ActingController on Qt's xcb screens of three RandR monitors, the panel's place
read at the X server."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from desktop_agent.eval.monitors_desk import MonitorsSession
from desktop_agent.ui.acting_panel import ActingPanel
from tests.support.xdisplay import READY_TIMEOUT_S, wait_until

pytestmark = [pytest.mark.gui]

ROOT = Path(__file__).resolve().parents[2]

#: runs in a child process on the desk (this test process has an offscreen QApplication):
#: the real controller and panel, told a run started and then, per line "ask|act left,top"
#: read, that a question is asked about an action on that monitor (the capture's own
#: MonitorArea), or that an action on it finished
CHILD = textwrap.dedent(
    """
    import select, sys
    from datetime import UTC, datetime
    from PySide6.QtWidgets import QApplication, QWidget
    app = QApplication(["desktop-agent"])
    import mss
    from desktop_agent.core.events import ApprovalRequested, RunStarted, StepFinished
    from desktop_agent.core.models import (ApprovalRequest, Risk, RunStatus, RunView, StepKind,
                                           StepStatus, StepView)
    from desktop_agent.desktop.geometry import layout_of, order_monitors
    from desktop_agent.ui.acting import ActingController
    from desktop_agent.ui.acting_panel import ActingPanel
    from desktop_agent.ui.runs_state import RunsState

    with mss.mss() as grabber:
        monitors = layout_of(order_monitors(grabber.monitors), 0).monitors
    window, panel, runs = QWidget(), ActingPanel(), RunsState()
    controller = ActingController(window, panel, runs, minimize=lambda: False)
    run = RunView("r1", "act on monitors", RunStatus.RUNNING, None, 0, 20, 3, ("click",),
                  "m", "http://127.0.0.1:9/v1", datetime.now(UTC))
    runs.apply(RunStarted(run))
    print(int(panel.winId()), flush=True)
    turn = 0
    while True:
        app.processEvents()
        if not select.select([sys.stdin], [], [], 0.01)[0]:
            continue
        line = sys.stdin.readline().strip()
        if not line:
            break
        turn += 1
        what, place = line.split()
        where = next(m for m in monitors if f"{m.left},{m.top}" == place)
        if what == "ask":
            asked = ApprovalRequest(f"a{turn}", "r1", turn, "click", {"x": 1, "y": 2}, "-",
                                    Risk.INPUT, True, 30, monitor=where)
            runs.apply(ApprovalRequested(asked))
        else:
            step = StepView("r1", turn, turn, StepKind.ACTION, StepStatus.OK,
                            datetime.now(UTC), tool="click", args={"x": 1, "y": 2},
                            monitor=where)
            runs.apply(StepFinished(step))
        print(f"{what} on monitor {where.number}", flush=True)
    """
)


class Child:
    """The child app and the X connection its panel is read on."""

    def __init__(self, desk: MonitorsSession) -> None:
        from Xlib import display

        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD],
            env=desk.child_env({"QT_QPA_PLATFORM": "xcb"}),
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.panel_id = int(self.process.stdout.readline())
        self.x = display.Display(desk.display)

    def tell(self, what: str, monitor: tuple[int, int, int, int]) -> None:
        """`what` ("ask" or "act") about an action on `monitor`."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{what} {monitor[0]},{monitor[1]}\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().startswith(f"{what} on monitor ")

    def panel_rect(self) -> tuple[int, int, int, int] | None:
        """The panel's window at the X server: root position and size; None until mapped."""
        from Xlib import X
        from Xlib.error import XError

        window = self.x.create_resource_object("window", self.panel_id)
        try:
            if window.get_attributes().map_state != X.IsViewable:
                return None
            geometry = window.get_geometry()
            at = window.translate_coords(self.x.screen().root, 0, 0)
        except XError:
            return None
        # translate_coords from the panel to the root: the root's origin in the panel
        return -at.x, -at.y, geometry.width, geometry.height

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.x.close()


@pytest.fixture
def child(monitors_desk: MonitorsSession) -> Iterator[Child]:
    running = Child(monitors_desk)
    yield running
    running.close()


def in_the_top_right_corner_of(
    monitor: tuple[int, int, int, int],
) -> Callable[[tuple[int, int, int, int] | None], bool]:
    left, top, width, _ = monitor
    margin = ActingPanel.MARGIN

    def check(rect: tuple[int, int, int, int] | None) -> bool:
        if rect is None:
            return False
        x, y, w, _ = rect
        # within the frame's border (the panel's frame may be a pixel or two wider)
        return abs(x + w - (left + width - margin)) <= 3 and abs(y - (top + margin)) <= 3

    return check


def test_the_panel_goes_to_the_monitor_a_question_or_an_action_is_on(
    monitors_desk: MonitorsSession, child: Child
) -> None:
    outputs = {output.name: output.rect for output in monitors_desk.outputs}
    primary, left_one, right_one = outputs["DUMMY0"], outputs["DUMMY1"], outputs["DUMMY2"]
    on_primary = in_the_top_right_corner_of(primary)
    wait_until(
        lambda: on_primary(child.panel_rect()),
        timeout=READY_TIMEOUT_S,
        what="the panel in the primary's corner",
    )
    for what, rect in (("ask", right_one), ("ask", left_one), ("act", right_one)):
        child.tell(what, rect)
        there = in_the_top_right_corner_of(rect)
        wait_until(
            lambda: there(child.panel_rect()),  # noqa: B023 - waited on in this iteration
            timeout=READY_TIMEOUT_S,
            what=f"the panel in the corner of the monitor at {rect[0]},{rect[1]}",
        )
