"""A run's own monitor (API, MCP run_task, `run --monitor`) is the one its observations show;
without one the observer's setting holds."""

from __future__ import annotations

import pytest

from desktop_agent.cli.output import human
from desktop_agent.core.errors import RefusedToStart
from desktop_agent.core.events import RunStarted
from desktop_agent.core.models import MonitorChoice, Observation, RunStatus, TaskSpec
from desktop_agent.host.requests import RunRequest, task_spec
from desktop_agent.settings import Settings
from tests.fakes import FakeObserver, ScriptedPlanner, done, tool
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
