"""Run history (newest first, filter, live updates) and the window's keyboard shortcuts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop_agent.core.models import RunStatus, RunView, StopReason
from desktop_agent.ui.history import HistoryPanel, format_time
from desktop_agent.ui.main_window import MainWindow
from tests.fakes import ScriptedPlanner, done, tool
from tests.gui.fake_agent import CrossEvent, bind_window, drive, engine_of, memory_repo, until

pytestmark = [pytest.mark.gui]

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def run_view(n: int, goal: str, status: RunStatus, model: str = "qwen2.5vl") -> RunView:
    return RunView(
        id=f"r{n}",
        goal=goal,
        status=status,
        stop_reason={
            RunStatus.COMPLETED: StopReason.DONE,
            RunStatus.FAILED: StopReason.ERROR,
            RunStatus.INTERRUPTED: StopReason.CRASH,
        }.get(status),
        step_count=n,
        max_steps=20,
        max_failures=3,
        allowed_tools=("click",),
        model=model,
        base_url="http://localhost:11434/v1",
        created_at=T0 + timedelta(minutes=n),
    )


RUNS = [
    run_view(1, "Open the editor and type hello", RunStatus.COMPLETED),
    run_view(2, "Save the report as PDF", RunStatus.FAILED),
    run_view(3, "open the calculator", RunStatus.INTERRUPTED, model="gpt-4.1-mini"),
    run_view(4, "Type the address into the browser", RunStatus.COMPLETED),
]


@pytest.fixture
def history(qtbot: Any) -> HistoryPanel:
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    panel.model.set_runs(RUNS)
    return panel


def goals(panel: HistoryPanel) -> list[str]:
    return [run.goal for run in panel.visible_runs()]


def test_history_lists_runs_newest_first(history: HistoryPanel) -> None:
    assert [run.id for run in history.visible_runs()] == ["r4", "r3", "r2", "r1"]
    assert history.model.index(1, 0).data() == "interrupted"


def test_the_filter_matches_goal_status_and_model_words_case_blind(
    history: HistoryPanel, qtbot: Any
) -> None:
    qtbot.keyClicks(history.filter_edit, "OPEN")
    assert goals(history) == ["open the calculator", "Open the editor and type hello"]
    history.filter_edit.setText("completed type")
    assert goals(history) == ["Type the address into the browser", "Open the editor and type hello"]
    history.filter_edit.setText("gpt-4.1")
    assert goals(history) == ["open the calculator"]
    history.filter_edit.setText("nothing like this")
    assert goals(history) == []
    history.filter_edit.clear()
    assert len(goals(history)) == 4


def test_a_new_run_goes_on_top_and_a_known_one_is_updated_in_place(
    history: HistoryPanel,
) -> None:
    newest = run_view(9, "the newest", RunStatus.RUNNING)
    history.model.upsert(newest)
    assert history.visible_runs()[0].id == "r9"
    history.model.upsert(newest.with_(status=RunStatus.COMPLETED, stop_reason=StopReason.DONE))
    assert history.model.rowCount() == 5
    assert history.visible_runs()[0].status is RunStatus.COMPLETED


def test_clicking_a_run_asks_for_it(history: HistoryPanel, qtbot: Any) -> None:
    history.filter_edit.setText("calculator")
    index = history.view.model().index(0, 1)
    rect = history.view.visualRect(index)
    history.show()
    with qtbot.waitSignal(history.run_selected, timeout=1000) as blocker:
        qtbot.mouseClick(history.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == ["r3"]


def test_interrupted_runs_of_the_store_show_in_the_history_on_bind(
    qtbot: Any, qloop: Any, agent: Any
) -> None:
    agent.repo.runs.update({run.id: run for run in RUNS})
    made = MainWindow()
    qtbot.addWidget(made)

    async def bind() -> Any:
        client = bind_window(made, agent)
        await until(lambda: made.history.model.rowCount() == 4)
        return client

    client = drive(qloop, bind())
    statuses = {run.id: run.status for run in made.history.visible_runs()}
    assert statuses["r3"] is RunStatus.INTERRUPTED
    drive(qloop, made.shutdown())
    drive(qloop, client.close())


def test_ctrl_return_in_the_goal_starts_and_escape_stops(
    window: MainWindow, qtbot: Any, qloop: Any
) -> None:
    release = CrossEvent()

    async def slow(request: Any) -> Any:
        await release.wait()
        return tool("wait", seconds=0)

    engine_of(window).host._agent.planner_factory = lambda run: ScriptedPlanner([slow], then=done())
    goal = window.panel.goal_edit

    async def scenario() -> None:
        goal.setFocus()
        qtbot.keyClicks(goal, "wait a bit")
        qtbot.keyClick(goal, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: window.panel.state == "running", what="started by Ctrl+Return")
        assert goal.toPlainText() == "wait a bit"  # the shortcut did not type a newline
        qtbot.keyClick(window.timeline, Qt.Key.Key_Escape)
        await until(lambda: window.run is not None and window.run.status.is_terminal)

    drive(qloop, scenario())
    assert window.run is not None and window.run.stop_reason is StopReason.USER_STOP


def test_ctrl_p_pauses_and_resumes(window: MainWindow, qtbot: Any, qloop: Any) -> None:
    release = CrossEvent()

    async def slow(request: Any) -> Any:
        await release.wait()
        return tool("wait", seconds=0)

    engine_of(window).host._agent.planner_factory = lambda run: ScriptedPlanner([slow], then=done())

    async def scenario() -> None:
        window.panel.goal_edit.setPlainText("wait")
        window.menu_actions.start.trigger()
        await until(lambda: window.panel.state == "running")
        qtbot.keyClick(window.timeline, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
        release.set()
        await until(lambda: window.panel.state == "paused", what="paused by Ctrl+P")
        qtbot.keyClick(window.timeline, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: window.run is not None and window.run.status.is_terminal)

    drive(qloop, scenario())
    assert window.run is not None and window.run.status is RunStatus.COMPLETED


def test_replay_is_refused_while_a_live_run_is_on_show(window: MainWindow, qloop: Any) -> None:
    release = CrossEvent()

    async def slow(request: Any) -> Any:
        await release.wait()
        return done()

    engine_of(window).host._agent.planner_factory = lambda run: ScriptedPlanner([slow])
    memory_repo(engine_of(window).host._agent).runs.update({run.id: run for run in RUNS})

    async def scenario() -> None:
        window.panel.goal_edit.setPlainText("wait")
        window.menu_actions.start.trigger()
        await until(lambda: window.panel.state == "running")
        live = window.run
        window.on_run_selected("r1")
        assert window.worker is None and window.run is live and window.live_running
        assert "replayed when it ends" in window.bar.status_label.text()
        release.set()
        await until(lambda: window.run is not None and window.run.status.is_terminal)

    drive(qloop, scenario())
    assert window.run is not None and window.run.status is RunStatus.COMPLETED


def test_a_runs_time_shows_the_clock_today_and_the_date_on_another_day() -> None:
    now = datetime.now(UTC)
    local = now.astimezone()
    assert format_time(now) == f"{local:%H:%M:%S}"
    earlier = now - timedelta(days=3)
    assert format_time(earlier) == f"{earlier.astimezone():%Y-%m-%d %H:%M}"
    assert format_time(None) == ""
