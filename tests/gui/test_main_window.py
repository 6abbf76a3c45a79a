"""The main window over a scripted Agent: signal order, timeline rows, replay, detail, controls."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap

from desktop_agent.core.models import (
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
)
from desktop_agent.host.starts import RunRequest, store_queued
from desktop_agent.ui import frames
from desktop_agent.ui.main_window import MainWindow
from desktop_agent.ui.timeline import THUMB_SIZE, TimelineModel
from desktop_agent.ui.worker import RunWorker, stored_events
from tests.fakes import ScriptedPlanner, done, tool
from tests.gui.fake_agent import (
    CrossEvent,
    drive,
    engine_of,
    fake_observer,
    memory_repo,
    until,
)

pytestmark = [pytest.mark.gui]


def script(agent: Any, *answers: Any) -> None:
    agent.planner_factory = lambda run: ScriptedPlanner(list(answers))


def start(window: MainWindow, goal: str) -> None:
    window.panel.goal_edit.setPlainText(goal)
    window.panel.start_button.click()


def row_shapes(model: TimelineModel) -> list[tuple[Any, ...]]:
    return [
        (s.seq, s.index, s.kind, s.tool, s.args, s.status, s.summary, s.error, s.screenshot)
        for s in model.steps()
    ]


def test_a_worker_hands_on_a_runs_events_in_order_then_done(
    qtbot: Any, qloop: Any, agent: Any
) -> None:
    script(agent, tool("wait", seconds=0), done("all done"))

    async def make_worker() -> RunWorker:
        run = await store_queued(agent, RunRequest("wait, then finish"))
        return RunWorker(agent.runner.start(run, agent.planner_factory(run)), live=True)

    worker = drive(qloop, make_worker())
    seen: list[str] = []
    worker.run_event.connect(lambda event: seen.append(event.type))
    with qtbot.waitSignal(worker.done, timeout=5000):

        async def consume() -> None:
            worker.start()
            await worker.wait()

        drive(qloop, consume())
    turn = ["step_started", "step_finished"]  # one step row: opened, closed
    steps = [kind for kind in seen if kind.startswith("step_")]
    assert seen[0] == "run_started" and seen[-1] == "run_finished"
    assert steps == turn * 5  # turn 1: observe, decide, action; turn 2: observe, decide
    assert worker.run is not None and worker.run.status is RunStatus.COMPLETED


def test_timeline_shows_one_row_per_step_of_a_scripted_run(window: MainWindow, qloop: Any) -> None:
    script(
        engine_of(window).host._agent,
        tool("click", x=100, y=50, reason="the OK button"),
        done("clicked"),
    )

    async def scenario() -> None:
        start(window, "click OK")
        await until(lambda: window.run is not None and window.run.status.is_terminal)

    drive(qloop, scenario())
    rows = window.timeline_model.steps()
    assert [(s.index, s.kind, s.tool, s.status) for s in rows] == [
        (1, StepKind.OBSERVE, "screen_snapshot", StepStatus.OK),
        (1, StepKind.DECIDE, "click", StepStatus.OK),
        (1, StepKind.ACTION, "click", StepStatus.OK),
        (2, StepKind.OBSERVE, "screen_snapshot", StepStatus.OK),
        (2, StepKind.DECIDE, None, StepStatus.OK),
    ]
    model = window.timeline_model
    assert model.index(2, TimelineModel.ACTION).data() == (
        "Click the point (100, 50) of the screenshot"
    )
    tip = model.index(2, TimelineModel.ACTION).data(Qt.ItemDataRole.ToolTipRole)
    assert tip == 'click {"x":100,"y":50}'  # the call as the program sees it
    assert window.run is not None and window.run.status is RunStatus.COMPLETED
    assert window.bar.turn_label.text() == "Turn 2 of 20"
    assert window.bar.status_label.text() == "Completed: clicked"
    assert window.panel.state == "idle"


def test_thumbnails_load_off_the_gui_thread_into_the_timeline(
    window: MainWindow, qloop: Any
) -> None:
    script(engine_of(window).host._agent, done("nothing to do"))

    async def scenario() -> QPixmap:
        start(window, "look only")
        await until(lambda: window.run is not None and window.run.status.is_terminal)
        cell = window.timeline_model.index(0, TimelineModel.SCREEN)
        cell.data(1)  # DecorationRole: asks the loader, answers None until it is loaded
        thumbnail: QPixmap = await until(lambda: cell.data(1), what="the thumbnail")
        return thumbnail

    pixmap = drive(qloop, scenario())
    assert isinstance(pixmap, QPixmap)
    assert not pixmap.isNull()
    assert pixmap.width() == THUMB_SIZE.width() or pixmap.height() == THUMB_SIZE.height()
    assert pixmap.width() <= THUMB_SIZE.width() and pixmap.height() <= THUMB_SIZE.height()


def test_replay_of_a_stored_run_gives_the_rows_of_the_live_run(
    window: MainWindow, qloop: Any
) -> None:
    script(
        engine_of(window).host._agent,
        tool("type_text", text="hello"),
        tool("wait", seconds=0),
        done("typed"),
    )

    async def live() -> str:
        start(window, "type hello")
        await until(lambda: window.run is not None and window.run.status.is_terminal)
        assert window.run is not None
        return window.run.id

    run_id = drive(qloop, live())
    live_rows = row_shapes(window.timeline_model)
    live_status = window.bar.status_label.text()

    async def replay() -> None:
        window.timeline_model.clear()
        window.on_run_selected(run_id)
        assert window.worker is not None and not window.worker.live
        await window.worker.wait()

    drive(qloop, replay())
    assert row_shapes(window.timeline_model) == live_rows
    assert len(live_rows) == 8
    assert window.run_title.text().startswith("Replay: ")
    assert window.bar.status_label.text() == f"Replayed: {live_status}"
    assert window.bar.turn_label.text() == "Turn 3 of 20"


def test_selecting_an_action_shows_its_screenshot_with_the_target_and_the_reason(
    window: MainWindow, qloop: Any
) -> None:
    script(
        engine_of(window).host._agent,
        tool("click", x=320, y=180, reason="the Save button is there"),
        done(),
    )

    async def scenario() -> None:
        start(window, "save")
        await until(lambda: window.run is not None and window.run.status.is_terminal)
        window.timeline.selectRow(2)  # turn 1's action
        await until(lambda: window.detail.screenshot.image is not None, what="the screenshot")

    drive(qloop, scenario())
    detail = window.detail
    assert detail.step is not None and detail.step.kind is StepKind.ACTION
    assert detail.screenshot.target == (320, 180)
    assert detail.screenshot.image is not None and detail.screenshot.image.width() == 640
    assert detail.labels["reason"].text() == "the Save button is there"
    assert detail.labels["result"].text() == "click ok"
    assert detail.labels["title"].text() == "Turn 1 · action · click"


def test_the_selected_steps_detail_is_redrawn_once_per_frame_while_steps_stream(
    window: MainWindow, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a live run with its newest row selected changes the detail with every event: it is laid
    # out and painted at once, then at most once more per frame, with the latest step
    shown: list[StepView | None] = []
    monkeypatch.setattr(window.detail, "show_step", lambda step, **_: shown.append(step))
    monkeypatch.setattr(frames, "monotonic", lambda: 1000.0)  # the burst within one frame
    at = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
    for seq in range(1, 31):
        window.timeline_model.upsert(
            StepView(
                run_id="r1", seq=seq, index=seq, kind=StepKind.ACTION, status=StepStatus.OK,
                started_at=at, tool="wait",
            )
        )  # fmt: skip
        window.timeline.selectRow(seq - 1)
    assert [step.seq for step in shown if step] == [1], "the first at once, the rest waits"
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=1000)
    assert shown[-1] is not None and shown[-1].seq == 30


def test_pause_resume_and_stop_buttons_drive_the_runner(window: MainWindow, qloop: Any) -> None:
    agent = engine_of(window).host._agent
    release = CrossEvent()

    async def slow_decision(request: Any) -> Any:
        await release.wait()
        return tool("wait", seconds=0)

    agent.planner_factory = lambda run: ScriptedPlanner(
        [slow_decision], then=tool("wait", seconds=0)
    )
    panel = window.panel

    async def scenario() -> None:
        start(window, "keep waiting")
        await until(lambda: panel.state == "running", what="running")
        assert panel.pause_button.text() == "&Pause"
        panel.pause_button.click()  # asked while the model thinks: takes effect before acting
        release.set()
        await until(lambda: panel.state == "paused", what="paused")
        assert window.run is not None and window.run.status is RunStatus.PAUSED
        assert agent.runner.is_active(window.run.id)
        assert panel.pause_button.text() == "&Resume"
        panel.pause_button.click()
        await until(lambda: panel.state == "running", what="resumed")
        panel.stop_button.click()
        await until(lambda: window.run is not None and window.run.status.is_terminal)

    drive(qloop, scenario())
    run = window.run
    assert run is not None
    assert (run.status, run.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert agent.runner.active_ids == ()
    assert memory_repo(agent).runs[run.id].status is RunStatus.STOPPED
    assert panel.state == "idle" and panel.start_button.isEnabled()


def test_a_refused_start_is_shown_in_one_line_and_nothing_runs(
    window: MainWindow, qloop: Any
) -> None:
    from desktop_agent.core.errors import VisionRequired

    agent = engine_of(window).host._agent

    async def refuse(run: Any, vision: Any = None) -> Any:
        raise VisionRequired("model 'blind' at http://x cannot see screenshots")

    agent.prepare = refuse  # type: ignore[method-assign]

    async def scenario() -> None:
        start(window, "anything")
        await until(lambda: window.panel.error_label.isVisible(), what="the error")

    drive(qloop, scenario())
    assert window.panel.error_label.text() == "model 'blind' at http://x cannot see screenshots"
    assert window.panel.state == "idle"
    assert window.run is None and not window.live_running
    assert memory_repo(agent).runs == {}, "a refused start is forgotten"


def test_a_start_the_model_server_refuses_leaves_no_queued_run(
    window: MainWindow, qloop: Any
) -> None:
    from desktop_agent.core.errors import ModelUnreachable

    agent = engine_of(window).host._agent

    async def unreachable(base_url: str, model: str, vision: Any = None) -> None:
        raise ModelUnreachable(f"the model server at {base_url} does not answer")

    agent.ensure_model = unreachable  # type: ignore[method-assign]

    async def scenario() -> None:
        start(window, "anything")
        await until(lambda: window.panel.error_label.isVisible(), what="the error")

    drive(qloop, scenario())
    assert window.panel.error_label.text().startswith("the model server at ")
    assert memory_repo(agent).runs == {}
    assert window.history.model.rowCount() == 0
    assert window.panel.state == "idle"


def test_an_unexpected_error_while_starting_is_one_line_and_the_window_stays_usable(
    window: MainWindow, qloop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    agent, host = engine_of(window).host._agent, engine_of(window).host
    real_start = host.start

    def broken(request: Any, **options: Any) -> Any:
        raise RuntimeError("socket went away\nsecond line")

    host.start = broken  # type: ignore[method-assign]

    async def scenario() -> None:
        start(window, "anything")
        await until(lambda: window.panel.error_label.isVisible(), what="the error")

    drive(qloop, scenario())
    assert window.panel.error_label.text() == "socket went away second line"
    assert window.bar.status_label.text() == "Not started: socket went away second line"
    assert window.panel.state == "idle"
    assert "starting a run failed" in caplog.text  # logged with its traceback
    script(agent, done("ok"))
    host.start = real_start  # type: ignore[method-assign]

    async def again() -> None:
        start(window, "anything, again")
        await until(lambda: window.run is not None and window.run.status.is_terminal)

    drive(qloop, again())
    assert window.run is not None and window.run.status is RunStatus.COMPLETED


def test_a_fault_while_the_run_is_prepared_ends_it_failed_in_one_line(
    window: MainWindow, qloop: Any
) -> None:
    agent = engine_of(window).host._agent

    async def broken(run: Any, vision: Any = None) -> Any:
        raise RuntimeError("keyring exploded\nbadly")

    agent.prepare = broken  # type: ignore[method-assign]

    async def scenario() -> None:
        start(window, "anything")
        await until(lambda: window.run is not None and window.run.status.is_terminal)

    drive(qloop, scenario())
    run = window.run
    assert run is not None and (run.status, run.stop_reason) == (
        RunStatus.FAILED,
        StopReason.ERROR,
    )
    assert run.message == "unexpected fault before it started: RuntimeError: keyring exploded badly"
    assert memory_repo(agent).runs[run.id].status is RunStatus.FAILED
    assert window.panel.state == "idle"


def test_a_new_step_limit_in_the_settings_is_what_the_next_start_uses(
    window: MainWindow, qloop: Any
) -> None:
    agent = engine_of(window).host._agent
    script(agent, done("ok"))

    async def scenario() -> None:
        chosen = agent.settings.model_copy(update={"max_steps": 7})
        await engine_of(window).ask(engine_of(window).host.apply_settings, chosen)
        window.apply_settings()
        assert window.panel.max_steps.value() == 7
        start(window, "anything")
        await until(lambda: window.run is not None and window.run.status.is_terminal)

    drive(qloop, scenario())
    assert window.run is not None and window.run.max_steps == 7


def test_stop_while_the_model_is_being_checked_ends_the_run_before_it_acts(
    window: MainWindow, qloop: Any
) -> None:
    agent = engine_of(window).host._agent
    checking = CrossEvent()
    never = CrossEvent()
    asked: list[Any] = []

    def planner_for(run: RunView) -> ScriptedPlanner:
        asked.append(run)
        return ScriptedPlanner([done()])

    agent.planner_factory = planner_for
    real_prepare = agent.prepare

    async def slow_prepare(run: Any, vision: Any = None) -> Any:
        checking.set()
        await never.wait()  # the model server never answers
        return await real_prepare(run, vision)

    agent.prepare = slow_prepare  # type: ignore[method-assign]

    async def scenario() -> None:
        start(window, "anything")
        await until(lambda: checking._event.is_set(), what="the model check")
        await until(lambda: window.panel.state == "starting" and window.shown.run_id is not None)
        assert window.panel.stop_button.isEnabled()
        window.panel.stop_button.click()
        await until(lambda: window.panel.state == "idle", what="the run to end")

    drive(qloop, scenario())
    run = window.run
    assert run is not None and (run.status, run.stop_reason) == (
        RunStatus.STOPPED,
        StopReason.USER_STOP,
    )
    assert window.bar.status_label.text() == "Stopped: stopped before it started"
    assert agent.runner.active_ids == ()
    assert asked == [] and fake_observer(agent).calls == 0


def test_a_replay_that_cannot_be_read_says_why(window: MainWindow, qloop: Any) -> None:
    async def scenario() -> None:
        events = stored_events(engine_of(window), "no-such-run")
        worker = RunWorker(events, live=False, parent=window)
        window.show_worker(worker)
        await worker.wait()

    drive(qloop, scenario())
    assert window.bar.status_label.text() == "Could not show the run: no run 'no-such-run'"
    assert window.panel.state == "idle"


def test_the_window_renders_its_model_and_sends_the_stop_the_model_answers(
    window: MainWindow, qloop: Any
) -> None:
    """The run on show is the model's (RunOnShow): what it says is what the panel and the
    status bar show, and Stop goes to the run the model names (here one the engine never
    admitted: the stop is sent all the same, and lands as a no-op)."""
    from desktop_agent.core.events import StartRefused

    assert window.runs is not None and window.shown is window.runs.shown
    shown = window.shown
    shown.show_live("not-admitted", status="Starting routine export…")
    assert window.panel.state == "starting" and window.panel.stop_button.isEnabled()
    assert window.bar.status_label.text() == "Starting routine export…"
    assert window.live_running and window.run is None

    window.panel.stop_button.click()
    assert window.panel.state == "stopping" and window.bar.status_label.text() == "Stopping…"
    shown.apply(StartRefused("not-admitted", "no routine 'export'"))

    assert window.panel.state == "idle" and not window.live_running
    assert window.bar.status_label.text() == "Not started: no routine 'export'"
    assert window.panel.error_label.text() == "no routine 'export'"


def test_the_window_paints_before_its_icon_is_drawn_and_has_it_after(qtbot: Any) -> None:
    # the app icon is an SVG drawn at each size a window manager may show: not on the way
    # to the first paint
    window = MainWindow()
    qtbot.addWidget(window)
    assert window.windowIcon().isNull()
    with qtbot.waitSignal(window.first_painted):
        window.show()
    qtbot.waitUntil(lambda: not window.windowIcon().isNull())
    assert not window.windowIcon().pixmap(32).isNull()  # the SVG draws
