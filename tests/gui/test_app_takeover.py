"""The app when the user takes over: the watch runs on the engine while a run does, the
user's input pauses the run, and the window, the acting panel and the tray say why."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from desktop_agent.core.models import RunStatus
from desktop_agent.takeover import UserTakeover
from desktop_agent.ui import acting, main_window
from desktop_agent.ui.tray import TrayController
from tests.gui.fake_agent import CrossEvent, drive, until
from tests.gui.test_app_wiring import Harness, RecordingTray, blocking_planner
from tests.unit.host.test_takeover import Watches

pytestmark = [pytest.mark.gui]


def from_the_watch_thread(report: Any) -> None:
    thread = threading.Thread(target=report)
    thread.start()
    thread.join()


def test_the_users_input_pauses_the_run_and_every_view_says_they_took_over(
    qtbot: Any, qloop: Any, agent: Any
) -> None:
    watches = Watches()
    # a clock that stands still: every report is "the same gesture" as the one before
    agent.takeover = UserTakeover(
        agent.runner, agent.injections, start_watch=watches, clock=lambda: 5.0
    )
    tray = RecordingTray()
    harness = drive(qloop, _build(qtbot, agent, tray))
    release = CrossEvent()
    agent.planner_factory = blocking_planner(release)
    window, panel, runner = harness.window, harness.app.acting_panel, agent.runner

    async def scenario() -> None:
        await harness.client.ask(harness.client.host.watch_takeover)
        assert not watches.started  # no run, no watch
        harness.start("act for a while")
        await until(lambda: watches.started, what="the watch to start with the run")
        await until(lambda: runner.active_ids, what="the run")

        from_the_watch_thread(watches.started[0].report)
        await until(lambda: window.bar.status_label.text() == main_window.TOOK_OVER, what="status")
        assert panel.step_label.toolTip() == acting.TOOK_OVER
        assert tray.notes[-1][0] == "Paused: you took over"
        release.set()  # the model answers: the run pauses before acting on it
        await until(lambda: window.panel.state == "paused", what="the pause")
        assert window.bar.status_label.text() == main_window.TOOK_OVER
        # the decide step's end came meanwhile: the panel still says why it waits
        assert panel.step_label.toolTip() == acting.TOOK_OVER

        harness.client.send(harness.client.host.pause_all, False)  # Resume …
        await until(lambda: window.panel.state != "paused", what="the resume")
        from_the_watch_thread(watches.started[0].report)  # … and the hand that clicked it
        await harness.finished()
        await until(lambda: watches.started[0].stopped, what="the watch to stop")

    drive(qloop, scenario())
    assert window.run is not None and window.run.status is RunStatus.COMPLETED
    assert len([note for note in tray.notes if note[0].startswith("Paused")]) == 1
    drive(qloop, harness.close())


async def _build(qtbot: Any, agent: Any, tray: TrayController) -> Harness:
    harness = Harness(qtbot, agent, tray)
    await until(lambda: not harness.window.tasks)
    return harness
