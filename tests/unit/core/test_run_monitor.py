"""A run's own monitor (API, MCP run_task, `run --monitor`) is the one its observations show;
without one the observer's setting holds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from desktop_agent.cli.output import human
from desktop_agent.core.errors import RefusedToStart
from desktop_agent.core.events import ApprovalRequested, RunStarted, StepFinished, StepStarted
from desktop_agent.core.models import (
    ApprovalRequest,
    MonitorArea,
    MonitorChoice,
    Observation,
    Policy,
    Risk,
    RunStatus,
    ScreenLayout,
    ScreenMapping,
    StepKind,
    StepStatus,
    TaskSpec,
    monitor_of,
)
from desktop_agent.host.requests import RunRequest, task_spec
from desktop_agent.settings import Settings
from tests.fakes import FakeObserver, ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import make_harness


class ChoosingObserver(FakeObserver):
    """A FakeObserver that is a MonitorChooser (core/ports.py): it records, for each
    observation, the monitor it was made for (None: the observer's own setting)."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[MonitorChoice | None] = []

    async def observe(self) -> Observation:
        self.shown.append(None)
        return await super().observe()

    def showing(self, monitor: MonitorChoice) -> _Shown:
        return _Shown(self, monitor)


class _Shown:
    def __init__(self, chooser: ChoosingObserver, monitor: MonitorChoice) -> None:
        self.chooser, self.monitor = chooser, monitor

    async def observe(self) -> Observation:
        self.chooser.shown.append(self.monitor)
        return await FakeObserver.observe(self.chooser)


@pytest.mark.parametrize(("asked", "shown"), [("2", 2), ("all", "all"), ("", None)])
async def test_each_observation_of_a_run_shows_the_monitor_the_run_asked_for(
    asked: str, shown: MonitorChoice | None
) -> None:
    h = make_harness()
    observer = ChoosingObserver()
    h.runner.services.observer = observer
    spec = TaskSpec(goal="g", allowed_tools=("wait",), monitor=asked)
    run = await h.runner.create(spec)

    await h.collect(run, ScriptedPlanner([tool("wait", seconds=0), done()]))

    assert h.stored(run.id).status is RunStatus.COMPLETED
    assert len(observer.shown) >= 2 and set(observer.shown) == {shown}
    assert h.stored(run.id).monitor == asked


@pytest.mark.parametrize(("asked", "stored"), [(None, ""), (0, "all"), ("AUTO", "auto"), (3, "3")])
def test_a_requests_monitor_is_stored_as_parse_monitor_reads_it(
    asked: MonitorChoice | None, stored: str
) -> None:
    assert task_spec(Settings(), RunRequest("g", monitor=asked)).monitor == stored


def test_a_monitor_no_setting_reads_refuses_the_run_in_one_line() -> None:
    with pytest.raises(RefusedToStart) as refused:
        task_spec(Settings(), RunRequest("g", monitor="left"))
    assert str(refused.value) == (
        "monitor must be auto, all or a monitor number from 1 (the primary) to 16, not 'left'"
    )


async def test_the_run_started_line_says_the_runs_monitor() -> None:
    h = make_harness()
    run = await h.runner.create(TaskSpec(goal="g", allowed_tools=("wait",), monitor="2"))
    assert human(RunStarted(run)).endswith("(max 20 steps, monitor 2)")


#: the primary, and a monitor left of it
MONITORS = (MonitorArea(1, 0, 0, 1920, 1080, primary=True), MonitorArea(2, -1280, 0, 1280, 1024))


def test_an_action_is_on_the_monitor_the_image_shows_or_under_its_point_in_all() -> None:
    shown = replace(make_observation(), layout=ScreenLayout(MONITORS[1], MONITORS))
    assert monitor_of(shown, None) == MONITORS[1]
    # all monitors as one image, 1280 px wide for 3200 desktop px, from -1280
    everything = replace(
        make_observation(),
        layout=ScreenLayout(MonitorArea(0, -1280, 0, 3200, 1080), MONITORS),
        mapping=ScreenMapping(scale_x=2.5, scale_y=2.5, offset_x=-1280),
    )
    assert monitor_of(everything, (100, 100)) == MONITORS[1]  # -1030,250
    assert monitor_of(everything, (900, 100)) == MONITORS[0]  # 970,250
    assert monitor_of(everything, None) is None
    alone = replace(make_observation(), layout=ScreenLayout(MONITORS[0], MONITORS[:1]))
    assert monitor_of(alone, (10, 10)) is None and monitor_of(make_observation(), None) is None


async def test_the_person_asked_is_told_the_monitor_the_click_is_on() -> None:
    h = make_harness(policies={"click": Policy.ASK})
    h.observer.observation = replace(make_observation(), layout=ScreenLayout(MONITORS[1], MONITORS))
    run = await h.runner.create(TaskSpec(goal="g", allowed_tools=("click",)))
    await h.collect(run, ScriptedPlanner([tool("click", x=10, y=10), done()]))
    assert [approval.monitor for approval in h.gate.requests] == [MONITORS[1]]


def test_the_cli_line_of_a_question_says_its_monitor() -> None:
    asked = ApprovalRequest(
        "a", "r1", 1, "click", {"x": 1, "y": 2}, "", Risk.INPUT, True, 60, monitor=MONITORS[1]
    )
    assert human(ApprovalRequested(asked)).endswith(
        '{"x": 1, "y": 2}) on monitor 2, 1280x1024 at -1280,0'
    )
    assert human(ApprovalRequested(replace(asked, monitor=None))).endswith('{"x": 1, "y": 2})')


async def test_an_action_row_says_the_monitor_it_is_on_from_its_first_event() -> None:
    h = make_harness(policies={"click": Policy.ALLOW})
    h.observer.observation = replace(make_observation(), layout=ScreenLayout(MONITORS[1], MONITORS))
    run = await h.runner.create(TaskSpec(goal="g", allowed_tools=("click",)))
    events = await h.collect(run, ScriptedPlanner([tool("click", x=10, y=10), done()]))

    acted = [e.step for e in events if isinstance(e, StepStarted | StepFinished)
             and e.step.kind is StepKind.ACTION]  # fmt: skip
    assert [(s.status, s.monitor) for s in acted] == [
        (StepStatus.RUNNING, MONITORS[1]),
        (StepStatus.OK, MONITORS[1]),
    ]
    (stored,) = [s for s in h.repo.steps[run.id].values() if s.kind is StepKind.ACTION]
    assert stored.monitor == MONITORS[1]
    assert stored.to_json()["monitor"]["left"] == -1280
    # on one monitor an action row says none
    alone = make_harness(policies={"click": Policy.ALLOW})
    one = await alone.runner.create(TaskSpec(goal="g", allowed_tools=("click",)))
    events = await alone.collect(one, ScriptedPlanner([tool("click", x=10, y=10), done()]))
    assert {e.step.monitor for e in events if isinstance(e, StepFinished)} == {None}
