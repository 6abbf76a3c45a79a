"""Each start request prepares itself (issue 32 item 2): the admission (host/starts.py
`admit`) asks a request for its `parts` — find its run's view, prepare its planner — and
never what it is, so a new kind of start is its request alone."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from desktop_agent.agent import Agent
from desktop_agent.core.models import RunStatus, RunView, TaskSpec, utcnow
from desktop_agent.core.ports import Planner
from desktop_agent.core.runner import Find, Prepare
from desktop_agent.host import Host
from desktop_agent.host.requests import Ready
from tests.fakes import ScriptedPlanner, done, make_agent, tool


@dataclass(frozen=True, slots=True)
class RunAgain:
    """A kind of start the host was not written for: a goal run again with a planner of its
    own (nothing is asked of a model server)."""

    run_id: str
    goal: str
    ready: Ready | None = None

    def parts(self, agent: Agent) -> tuple[Find, Prepare]:
        spec = TaskSpec(goal=self.goal, allowed_tools=("wait",), model="again")

        async def find() -> RunView:
            return RunView.queued(spec, self.run_id, utcnow())

        async def prepare(run: RunView) -> Planner:
            return ScriptedPlanner([tool("wait", seconds=0)], then=done("again"))

        return find, prepare


async def test_a_new_kind_of_start_is_admitted_by_its_request_alone(tmp_path: Path) -> None:
    host = Host(make_agent(tmp_path))
    try:
        hosted = host.start(RunAgain("again-1", "wait once more"))
        assert hosted.run_id == "again-1"
        final = await asyncio.wait_for(hosted.final(), 10)
    finally:
        await host.close()

    assert final is not None
    assert (final.id, final.goal) == ("again-1", "wait once more")
    assert final.status is RunStatus.COMPLETED
    assert final.step_count == 2
