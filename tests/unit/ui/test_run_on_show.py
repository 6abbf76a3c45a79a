"""The window's model (ui/run_on_show.py, ui/runs_state.py), with no window and no Qt: which
run is on show, live or replayed, starting or refused, paused by the user; what the panel
offers and the status line says; one path for live and replayed events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from desktop_agent.core.events import (
    ApprovalRequested,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    RunTotals,
    StartRefused,
    StepFinished,
    StepStarted,
    TaskLoopEvent,
    UserTookOver,
)
from desktop_agent.core.models import (
    ApprovalRequest,
    Risk,
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
    TaskSpec,
)
from desktop_agent.ui.run_on_show import TOOK_OVER, Change, PanelState, RunOnShow, Showing
from desktop_agent.ui.runs_state import RunsState

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def run(run_id: str = "r1", status: RunStatus = RunStatus.RUNNING, **changes: Any) -> RunView:
    made = RunView.queued(TaskSpec("save the file", max_steps=20), run_id, T0)
    return made.with_(status=status, started_at=T0, **changes)


def ended(run_id: str = "r1", status: RunStatus = RunStatus.COMPLETED, **changes: Any) -> RunView:
    return run(run_id, status, finished_at=T0 + timedelta(seconds=75), **changes)


def step(index: int, run_id: str = "r1") -> StepView:
    return StepView(run_id, index * 3, index, StepKind.ACTION, StepStatus.OK, T0, tool="click")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def watched(shown: RunOnShow) -> list[Change]:
    heard: list[Change] = []
    shown.subscribe(heard.append)
    return heard


def test_a_live_run_is_on_show_from_the_click_and_its_events_move_panel_and_status() -> None:
    shown = RunOnShow()
    heard = watched(shown)

    shown.show_live("r1")
    assert (shown.showing, shown.run_id, shown.state) == (Showing.LIVE, "r1", PanelState.STARTING)
    assert shown.status == "Checking the model…" and shown.live_running and shown.run is None

    for event in (RunStarted(run()), StepStarted(step(1)), StepFinished(step(1))):
        shown.apply(event)
    assert (shown.state, shown.status, shown.turn) == (PanelState.RUNNING, "Running.", 1)

    shown.apply(RunPaused(run(status=RunStatus.PAUSED)))
    assert (shown.state, shown.status) == (PanelState.PAUSED, "Paused. Resume with Ctrl+P.")
    shown.apply(RunResumed(run()))
    shown.apply(RunFinished(ended(message="Saved the file.", step_count=4)))

    assert (shown.state, shown.turn) == (PanelState.IDLE, 4)
    assert shown.status == "Completed: Saved the file." and not shown.live_running
    assert heard[0] == "reset" and [c.type for c in heard[1:] if not isinstance(c, str)] == [
        "run_started",
        "step_started",
        "step_finished",
        "run_paused",
        "run_resumed",
        "run_finished",
    ]


def test_a_refused_start_leaves_no_live_run_and_says_why_once() -> None:
    shown = RunOnShow()
    heard = watched(shown)
    shown.show_live("r1")

    shown.apply(StartRefused("another run", "not ours"))  # another run's: nothing changes
    assert shown.run_id == "r1" and len(heard) == 1
    shown.apply(StartRefused("r1", "model 'blind' cannot see screenshots"))

    assert shown.run_id is None and shown.run is None and not shown.live_running
    assert shown.state is PanelState.IDLE and shown.refused.startswith("model 'blind'")
    assert shown.status == "Not started: model 'blind' cannot see screenshots"
    assert shown.ask_stop() is None


@pytest.mark.parametrize(
    "before",
    [
        (),  # starting: admitted at the click, its model being checked
        (RunStarted(run()),),
        (RunStarted(run()), StepStarted(step(1))),
        (RunStarted(run()), RunPaused(run(status=RunStatus.PAUSED))),
        (RunStarted(run()), UserTookOver("r1")),
        (RunStarted(run()), RunPaused(run(status=RunStatus.PAUSED), reason="user")),
    ],
    ids=["starting", "running", "mid-turn", "paused", "taken-over", "paused-by-user"],
)
def test_stop_goes_to_the_live_run_in_every_state_until_it_has_ended(
    before: tuple[TaskLoopEvent, ...],
) -> None:
    shown = RunOnShow()
    shown.show_live("r1")
    for event in before:
        shown.apply(event)

    assert shown.ask_stop() == "r1"
    assert (shown.state, shown.status) == (PanelState.STOPPING, "Stopping…")
    shown.apply(RunFinished(ended(status=RunStatus.STOPPED, stop_reason=StopReason.USER_STOP)))
    assert shown.ask_stop() is None and shown.state is PanelState.IDLE


def test_pause_and_resume_go_to_the_live_run_once_it_started() -> None:
    shown = RunOnShow()
    shown.show_live("r1")
    assert shown.ask_pause(True) is None  # nothing to pause before run_started
    shown.apply(RunStarted(run()))

    assert shown.ask_pause(True) == "r1" and shown.status == "Pausing at the next safe point…"
    assert shown.ask_pause(False) == "r1"


def test_the_user_taking_over_says_so_until_the_run_resumes() -> None:
    shown = RunOnShow()
    shown.show_live("r1")
    shown.apply(RunStarted(run()))

    shown.apply(UserTookOver("r1"))
    assert shown.status == TOOK_OVER and shown.state is PanelState.RUNNING  # not paused yet
    shown.apply(RunPaused(run(status=RunStatus.PAUSED), reason="user"))
    assert (shown.status, shown.state) == (TOOK_OVER, PanelState.PAUSED)
    shown.apply(RunResumed(run()))
    assert shown.status == "Running."


def test_a_replay_takes_the_same_path_and_says_it_is_a_replay() -> None:
    shown = RunOnShow()
    shown.show_live("r1")
    shown.apply(RunStarted(run()))
    shown.apply(RunFinished(ended()))
    heard = watched(shown)

    shown.show_replay()
    assert (shown.showing, shown.run_id, shown.run, shown.turn) == (Showing.REPLAY, None, None, 0)
    for event in (RunStarted(run("r0")), StepFinished(step(1, "r0")), StepFinished(step(2, "r0"))):
        shown.apply(event)
    assert shown.status == "Replaying a stored run." and shown.turn == 2
    shown.apply(RunFinished(ended("r0", RunStatus.FAILED, message="No editor.")))

    assert shown.status == "Replayed: Failed: No editor." and not shown.live_running
    assert shown.ask_stop() is None and shown.clock_started is None
    assert heard[0] == "reset" and len(heard) == 5


def test_a_replay_that_fails_says_why_and_leaves_the_panel_idle() -> None:
    shown = RunOnShow()
    shown.show_replay()
    shown.replay_failed("no run 'x'")
    shown.replay_done()
    assert shown.status == "Could not show the run: no run 'x'"
    assert shown.state is PanelState.IDLE


def test_totals_update_the_live_run_but_never_its_final_view() -> None:
    shown = RunOnShow()
    shown.show_live("r1")
    shown.apply(RunTotals("r1", 100, 20, False, 0.5))  # before run_started: nothing to update
    assert shown.run is None
    shown.apply(RunStarted(run()))
    shown.apply(RunTotals("r1", 1000, 50, True, 0.0011))
    assert shown.run is not None
    assert (shown.run.prompt_tokens, shown.run.completion_tokens) == (1000, 50)
    assert shown.run.tokens_estimated and shown.run.cost == 0.0011

    shown.apply(RunFinished(ended(prompt_tokens=1200, completion_tokens=60)))
    shown.apply(RunTotals("r1", 1, 1, False, None))  # late: the stored view is final
    assert (shown.run.prompt_tokens, shown.run.completion_tokens) == (1200, 60)


def test_elapsed_runs_on_the_monotonic_clock_while_live_and_is_fixed_at_the_end() -> None:
    clock = Clock()
    shown = RunOnShow(clock)
    shown.show_live("r1")
    assert shown.elapsed_s() is None
    shown.apply(RunStarted(run()))
    clock.now += 12.5

    assert shown.elapsed_s() == 12.5
    shown.apply(RunFinished(ended()))
    clock.now += 100
    assert shown.elapsed_s() == 75.0


def test_elapsed_of_a_replayed_run_without_an_end_is_by_the_wall_clock_since_its_start() -> None:
    # a stored run that never ended (the app was killed): the time since its start, by the
    # wall clock (the run's own datetime tells the time now: no datetime import by the paint)
    shown = RunOnShow()
    shown.show_replay()
    started = datetime.now(UTC) - timedelta(seconds=30)
    shown.apply(RunStarted(run().with_(started_at=started)))
    elapsed = shown.elapsed_s()
    assert elapsed is not None and 30 <= elapsed < 90


def test_the_status_bar_lines_name_the_settings_limits_only_while_the_live_run_goes() -> None:
    # what the status bar says is the model's: the window only sets the texts (issue 32 item 5)
    clock = Clock()
    shown = RunOnShow(clock)
    assert (shown.turn_line(), shown.usage_line(1000), shown.elapsed_line(600)) == ("", "", "")
    shown.show_live("r1")
    shown.apply(RunStarted(run(prompt_tokens=1000, completion_tokens=50, cost=0.0011)))
    shown.apply(StepStarted(step(1)))
    clock.now += 75
    assert shown.going and shown.turn_line() == "Turn 1 of 20"
    assert shown.usage_line(1_000_000) == "1,000 + 50 tokens of 1,000,000 · $0.0011"
    assert shown.elapsed_line(1800) == "1:15 of 30:00" and shown.elapsed_line(0) == "1:15"
    assert "estimated" not in shown.usage_tip()

    shown.apply(RunFinished(ended(prompt_tokens=1000, completion_tokens=50, tokens_estimated=True)))
    assert not shown.going
    assert shown.usage_line(1_000_000) == "≈1,000 + 50 tokens · no price"
    assert shown.elapsed_line(1800) == "1:15" and "estimated" in shown.usage_tip()


def test_a_replay_never_names_todays_limits_and_its_title_says_it_is_a_replay() -> None:
    shown = RunOnShow()
    shown.show_replay()
    shown.apply(RunStarted(run(goal="save\n  the   file")))
    assert not shown.going and shown.usage_line(1_000_000) == "0 + 0 tokens · no price"
    assert shown.title() == "Replay: save the file"
    assert shown.title_tip().startswith("save\n  the   file\nrun r1 · ")
    live = RunOnShow()
    live.show_live("r1")
    live.apply(RunStarted(run(goal="save the file")))
    assert live.title() == "save the file"


def test_a_run_of_the_history_is_replayed_only_when_no_live_run_is_on_and_it_has_ended() -> None:
    shown = RunOnShow()
    assert shown.may_replay("r0", ended("r0")) == (True, "")
    assert shown.may_replay("r0", None) == (True, "")  # the store says whether it has it
    still = run("r2", RunStatus.RUNNING)
    assert shown.may_replay("r2", still) == (
        False,
        "That run has not ended in another window or client; it can be replayed when it has.",
    )
    shown.show_live("r1")
    shown.apply(RunStarted(run()))

    assert shown.may_replay("r0", ended("r0")) == (
        False,
        "A run is on; its history can be replayed when it ends.",
    )
    assert shown.may_replay("r1", None) == (False, "")  # the live run itself: on show already


def test_runs_state_hands_the_run_on_show_only_the_live_runs_events() -> None:
    runs = RunsState()
    heard = watched(runs.shown)
    runs.shown.show_live("r1")

    runs.apply(RunStarted(run("other")))
    runs.apply(StepFinished(step(1, "other")))
    runs.apply(RunStarted(run()))
    runs.apply(StepFinished(step(1)))

    assert [c if isinstance(c, str) else c.type for c in heard] == [
        "reset",
        "run_started",
        "step_finished",
    ]
    assert set(runs.active) == {"other", "r1"}  # every run is in the runs state


def test_paused_by_the_user_is_one_record_from_took_over_to_resumed_or_ended() -> None:
    runs = RunsState()
    runs.apply(RunStarted(run("a")))
    runs.apply(RunStarted(run("b")))

    runs.apply(UserTookOver("a"))
    assert runs.taken_over == {"a"}
    runs.apply(RunPaused(run("a", RunStatus.PAUSED), reason="user"))
    runs.apply(RunPaused(run("b", RunStatus.PAUSED), reason="user"))  # no took-over before it
    runs.apply(RunPaused(run("c", RunStatus.PAUSED)))  # asked for: not the user's taking over
    assert runs.taken_over == {"a", "b"}

    runs.apply(RunResumed(run("a")))
    runs.apply(RunFinished(ended("b", RunStatus.STOPPED)))
    assert runs.taken_over == set()


def test_an_approval_of_the_live_run_changes_nothing_on_show() -> None:
    runs = RunsState()
    runs.shown.show_live("r1")
    runs.apply(RunStarted(run()))
    heard = watched(runs.shown)
    request = ApprovalRequest("a1", "r1", 1, "click", {"x": 1, "y": 2}, "", Risk.INPUT, True, 30)

    runs.apply(ApprovalRequested(request))

    assert heard == [] and runs.approvals == {"a1": request}


def test_the_window_and_the_acting_panel_read_one_record_of_paused_by_the_user() -> None:
    """A pause asked while the user's input is pausing the run (the tray's Pause, the
    API's) still says the user took over: RunsState.taken_over decides, for every view."""
    runs = RunsState()
    runs.shown.show_live("r1")
    runs.apply(RunStarted(run()))
    runs.apply(UserTookOver("r1"))

    runs.apply(RunPaused(run(status=RunStatus.PAUSED), reason="request"))

    assert runs.taken_over == {"r1"} and runs.shown.status == TOOK_OVER
    runs.apply(RunResumed(run()))
    runs.apply(RunPaused(run(status=RunStatus.PAUSED), reason="request"))
    assert runs.taken_over == set() and runs.shown.status == "Paused. Resume with Ctrl+P."
