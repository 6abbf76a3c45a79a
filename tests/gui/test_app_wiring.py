"""DesktopApp's wiring: approvals, the acting panel, the tray's state, Stop all, one instance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from desktop_agent.app import DesktopApp
from desktop_agent.core.models import Policy, RunStatus, StepKind, StepStatus, StopReason
from desktop_agent.settings import Settings
from desktop_agent.ui.acting_panel import ActingPanel
from desktop_agent.ui.approval import ApprovalDialog
from desktop_agent.ui.main_window import MainWindow
from desktop_agent.ui.single_instance import InstanceGuard
from desktop_agent.ui.tray import TrayController
from tests.fakes import ALLOW_ALL, ScriptedPlanner, done, make_agent, tool
from tests.gui.fake_agent import CrossEvent, drive, make_client, until

pytestmark = [pytest.mark.gui]


class RecordingTray(TrayController):
    """The tray's menu and state without a tray, keeping what it was asked to say."""

    def __init__(self) -> None:
        super().__init__(available=False)
        self.notes: list[tuple[str, str]] = []

    def notify(self, title: str, text: str) -> None:
        self.notes.append((title, text))


class Harness:
    """A main window and a DesktopApp (no tray, no API, no hotkey) over a scripted Agent."""

    def __init__(self, qtbot: Any, agent: Any, tray: TrayController | None = None) -> None:
        self.agent = agent
        self.client = make_client(agent)
        self.quits = 0
        # not given to qtbot: it deletes its widgets before fixtures end, while `close`
        # (the app's own end: it closes them) may still be to come
        self.window = MainWindow()
        self.window.show()
        panel = ActingPanel()
        self.app = DesktopApp(
            self.window,
            self.client,
            quit_app=self.on_quit,
            tray=tray or TrayController(available=False),
            acting_panel=panel,
        )

    async def close(self) -> None:
        await self.app.close()

    def on_quit(self) -> None:
        self.quits += 1

    def start(self, goal: str) -> None:
        self.window.panel.goal_edit.setPlainText(goal)
        self.window.panel.start_button.click()

    async def finished(self) -> None:
        window = self.window
        await until(lambda: window.run is not None and window.run.status.is_terminal, 10)


def build(qtbot: Any, qloop: Any, agent: Any, tray: TrayController | None = None) -> Harness:
    async def make() -> Harness:
        harness = Harness(qtbot, agent, tray)  # binding the window spawns its first tasks
        await until(lambda: not harness.window.tasks)
        return harness

    return drive(qloop, make())


def assert_stopped_by_user(run: Any) -> None:
    assert run is not None and (run.status, run.stop_reason) == (
        RunStatus.STOPPED,
        StopReason.USER_STOP,
    )


def blocking_planner(release: CrossEvent, *then: Any) -> Any:
    async def wait_for_release(request: Any) -> Any:
        await release.wait()
        return tool("wait", seconds=0)

    return lambda run: ScriptedPlanner([wait_for_release, *then], then=done("finished"))


def test_while_a_run_acts_the_window_is_minimised_and_the_panel_shown_then_restored(
    harness: Harness, qloop: Any
) -> None:
    release = CrossEvent()
    harness.agent.planner_factory = blocking_planner(release)
    window, panel = harness.window, harness.app.acting_panel
    observer = harness.agent.runner.services.observer
    seen_before_first_step: list[tuple[bool, int]] = []
    prepare = window.before_run
    assert prepare is not None

    async def recording_prepare() -> None:
        await prepare()
        seen_before_first_step.append((window.isMinimized(), observer.calls))

    window.before_run = recording_prepare

    async def scenario() -> None:
        harness.start("act for a while")
        await until(lambda: panel.isVisible(), what="the acting panel")
        assert window.isMinimized()
        assert panel.goal == "act for a while"
        await until(lambda: "Turn 1/20" in panel.step_label.toolTip(), what="the step line")
        release.set()
        await harness.finished()

    drive(qloop, scenario())
    assert seen_before_first_step == [(True, 0)], "minimised before the first screenshot"
    assert not panel.isVisible()
    assert not window.isMinimized() and window.isVisible()


def test_the_window_stays_put_when_minimising_is_turned_off(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, settings=Settings(minimize_while_acting=False))
    harness = build(qtbot, qloop, agent)
    release = CrossEvent()
    agent.planner_factory = blocking_planner(release)

    async def scenario() -> None:
        harness.start("act")
        await until(lambda: harness.app.acting_panel.isVisible())
        assert not harness.window.isMinimized()
        release.set()
        await harness.finished()

    try:
        drive(qloop, scenario())
    finally:
        drive(qloop, harness.close())


def test_an_approval_restores_the_window_and_the_dialog_answer_reaches_the_run(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, policies={**ALLOW_ALL, "click": Policy.ASK})
    harness = build(qtbot, qloop, agent)
    agent.planner_factory = lambda run: ScriptedPlanner(
        [tool("click", x=10, y=20, reason="press it"), done("pressed")]
    )
    window = harness.window
    resolve = agent.approvals.resolve
    minimised_when_answered: list[bool] = []

    def recording_resolve(approval_id: str, decision: Any) -> bool:
        minimised_when_answered.append(window.isMinimized())
        return resolve(approval_id, decision)

    agent.approvals.resolve = recording_resolve  # type: ignore[method-assign]  # wrapped on purpose

    async def scenario() -> ApprovalDialog:
        harness.start("press the button")
        dialog: ApprovalDialog = await until(
            lambda: window.findChild(ApprovalDialog), what="the approval dialog"
        )
        assert not window.isMinimized()
        assert harness.app.acting_panel.step_label.toolTip() == (
            "Waiting for your approval: Click the point (10, 20) of the screenshot"
        )
        await until(dialog.once_button.isEnabled, what="the dialog's Allow to wake")
        dialog.once_button.click()
        await harness.finished()
        return dialog

    try:
        drive(qloop, scenario())
    finally:
        drive(qloop, harness.close())
    action = [s for s in window.timeline_model.steps() if s.kind is StepKind.ACTION]
    assert [(s.tool, s.status) for s in action] == [("click", StepStatus.OK)]
    assert window.run is not None and window.run.status is RunStatus.COMPLETED
    assert minimised_when_answered == [True], "out of the way again before the run acts"
    assert not window.isMinimized()


def test_an_approval_answered_elsewhere_closes_the_dialog(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, policies={**ALLOW_ALL, "click": Policy.ASK})
    harness = build(qtbot, qloop, agent)
    agent.planner_factory = lambda run: ScriptedPlanner([tool("click", x=1, y=2), done()])
    window = harness.window

    async def scenario() -> None:
        harness.start("press")
        await until(lambda: window.findChild(ApprovalDialog), what="the approval dialog")
        (pending,) = agent.approvals.pending
        from desktop_agent.core.models import ApprovalDecision

        # e.g. through the API
        harness.client.engine.call(agent.approvals.resolve, pending.id, ApprovalDecision.DENY)
        await harness.finished()
        await until(lambda: not harness.app.approvals.open_dialogs, what="the dialog task to end")

    try:
        drive(qloop, scenario())
    finally:
        drive(qloop, harness.close())
    dialogs = [d for d in window.findChildren(ApprovalDialog) if d.isVisible()]
    assert dialogs == []
    action = [s for s in window.timeline_model.steps() if s.kind is StepKind.ACTION]
    assert [(s.status, s.error) for s in action] == [(StepStatus.DENIED, "denied by the user")]


def test_an_approval_dialog_that_fails_denies_at_once_and_says_why(
    qtbot: Any,
    qloop: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import desktop_agent.ui.approval

    agent = make_agent(tmp_path, policies={**ALLOW_ALL, "click": Policy.ASK})
    harness = build(qtbot, qloop, agent)
    agent.planner_factory = lambda run: ScriptedPlanner([tool("click", x=1, y=2), done()])
    window = harness.window

    async def broken_dialog(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no screen\nfor the dialog")

    monkeypatch.setattr(desktop_agent.ui.approval, "ask_approval", broken_dialog)

    async def scenario() -> None:
        harness.start("press")
        await harness.finished()  # the approval timeout is 30 s: this denial is the dialog's
        await until(lambda: not harness.app.approvals.open_dialogs, what="the dialog task to end")

    try:
        drive(qloop, scenario())
    finally:
        drive(qloop, harness.close())
    action = [s for s in window.timeline_model.steps() if s.kind is StepKind.ACTION]
    assert [(s.status, s.error) for s in action] == [(StepStatus.DENIED, "denied by the user")]
    assert (
        window.statusBar().currentMessage()
        == "click denied: the approval dialog failed: no screen for the dialog"
    )
    assert "the approval dialog for click failed" in caplog.text


def test_the_tray_state_follows_the_run_and_a_failed_run_leaves_it_failed(
    harness: Harness, qloop: Any
) -> None:
    release = CrossEvent()
    from tests.fakes import fail

    async def gated(request: Any) -> Any:
        await release.wait()
        return fail("the app is not installed")

    harness.agent.planner_factory = lambda run: ScriptedPlanner([gated])
    tray = harness.app.tray

    async def scenario() -> None:
        harness.start("do the impossible")
        await until(lambda: tray.state == "running", what="running")
        release.set()
        await harness.finished()

    drive(qloop, scenario())
    assert tray.state == "failed"
    assert harness.window.run is not None and harness.window.run.status is RunStatus.FAILED


def test_tray_pause_and_resume_reach_every_active_run(harness: Harness, qloop: Any) -> None:
    release = CrossEvent()
    harness.agent.planner_factory = blocking_planner(release)
    tray, runner = harness.app.tray, harness.agent.runner

    async def scenario() -> None:
        harness.start("long task")
        await until(lambda: tray.state == "running")
        tray.pause_action.trigger()
        release.set()
        await until(lambda: tray.state == "paused", what="paused")
        assert harness.window.panel.state == "paused"
        tray.pause_action.trigger()
        await until(lambda: tray.state in ("running", "idle"), what="resumed")
        await harness.finished()

    drive(qloop, scenario())
    assert runner.active_ids == ()
    assert tray.state == "idle"


def test_stop_all_from_the_window_stops_the_run_and_revokes_task_grants(
    harness: Harness, qloop: Any
) -> None:
    release = CrossEvent()
    harness.agent.planner_factory = blocking_planner(release)
    agent = harness.agent

    async def scenario() -> None:
        harness.start("long task")
        await until(lambda: agent.runner.active_ids, what="an active run")
        run_id = agent.runner.active_ids[0]
        harness.client.engine.call(agent.permissions.grant_for_run, run_id, "click")
        harness.window.panel.stop_all_button.click()
        await harness.finished()

    drive(qloop, scenario())
    run = harness.window.run
    assert_stopped_by_user(run)
    assert agent.permissions.task_grants(run.id) == frozenset()  # type: ignore[union-attr]


def test_the_acting_panels_stop_button_stops_the_run(harness: Harness, qloop: Any) -> None:
    release = CrossEvent()
    harness.agent.planner_factory = blocking_planner(release)
    panel = harness.app.acting_panel

    async def scenario() -> None:
        harness.start("long task")
        await until(lambda: panel.isVisible())
        panel.stop_button.click()
        await harness.finished()

    drive(qloop, scenario())
    run = harness.window.run
    assert run is not None and run.stop_reason is StopReason.USER_STOP
    assert not panel.isVisible()


def test_closing_the_window_without_a_tray_quits(harness: Harness, qloop: Any) -> None:
    assert harness.window.hide_on_close is False
    harness.window.close()
    assert harness.quits == 1


def test_a_second_launch_on_the_same_data_dir_raises_the_first(
    qtbot: Any, qapp: QApplication, tmp_path: Path
) -> None:
    first = InstanceGuard(tmp_path / "a")
    assert first.signal_running() is False
    assert first.listen()
    try:
        with qtbot.waitSignal(first.raise_requested, timeout=3000):
            assert InstanceGuard(tmp_path / "a").signal_running() is True
        assert InstanceGuard(tmp_path / "b").signal_running() is False
    finally:
        first.close()
    assert InstanceGuard(tmp_path / "a").signal_running() is False


def test_settings_saved_in_the_dialog_are_written_and_applied(
    harness: Harness, qloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QLineEdit

    from desktop_agent.core.models import Risk
    from desktop_agent.settings import load_settings
    from desktop_agent.ui.settings_dialog import SettingsDialog

    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path))
    for name in ("DESKTOP_AGENT_MODEL", "DESKTOP_AGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    window, agent = harness.window, harness.agent

    async def scenario() -> None:
        window.menu_actions.settings.trigger()
        dialog = await until(lambda: window.findChild(SettingsDialog), what="the settings dialog")
        assert dialog.isVisible()
        model = dialog.fields["model"]
        assert isinstance(model, QLineEdit)
        model.setText("llava:13b")
        box = dialog.policy_boxes["click"]
        box.setCurrentIndex(box.findData("deny"))
        dialog.save_button.click()
        await until(lambda: agent.settings.model == "llava:13b", what="the settings applied")
        await until(lambda: not window.tasks, what="the save to finish")

    drive(qloop, scenario())
    assert load_settings().model == "llava:13b"
    assert load_settings().policies["click"] is Policy.DENY
    assert agent.permissions.policy("click", Risk.INPUT) is Policy.DENY
    assert "llava:13b" in window.panel.model_label.text()


def test_settings_that_cannot_be_written_are_used_anyway_and_it_is_said(
    harness: Harness, qloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the settings directory should be")
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(blocker / "home"))
    agent, window = harness.agent, harness.window
    chosen = agent.settings.model_copy(update={"model": "llava:13b", "max_failures": 9})

    drive(qloop, harness.app.settings.apply_settings(chosen))
    assert agent.settings is chosen and harness.client.host.settings is chosen
    notice = window.statusBar().currentMessage()
    assert notice.startswith("Settings used until the app quits, but not saved: "), notice
    assert "\n" not in notice
    assert "llava:13b" in window.panel.model_label.text()


def test_a_question_while_the_window_is_not_active_is_said_in_words_on_the_tray(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, policies={**ALLOW_ALL, "click": Policy.ASK})
    tray = RecordingTray()
    harness = build(qtbot, qloop, agent, tray)
    agent.planner_factory = lambda run: ScriptedPlanner([tool("click", x=10, y=20), done()])
    window = harness.window

    async def scenario() -> None:
        harness.start("press")
        dialog = await until(lambda: window.findChild(ApprovalDialog), what="the dialog")
        await until(dialog.once_button.isEnabled, what="the dialog's Allow to wake")
        dialog.once_button.click()
        await harness.finished()

    try:
        drive(qloop, scenario())
    finally:
        drive(qloop, harness.close())
    assert not window.isActiveWindow()  # offscreen: no window is ever the active one
    asked = [text for title, text in tray.notes if title == "Waiting for your approval"]
    assert asked == ["Click the point (10, 20) of the screenshot"]
