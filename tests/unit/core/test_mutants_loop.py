"""What the loop hands the tool it runs (mutants of core/loop.py's gate part that lived)."""

from __future__ import annotations

from pydantic import BaseModel

from desktop_agent.core.models import ApprovalDecision, ToolResult
from desktop_agent.core.ports import ToolContext
from tests.fakes import ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import make_harness


async def test_the_tool_is_told_which_run_it_acts_for_and_on_what_screen() -> None:
    # an executor behind the port knows the run by ToolContext.run_id (core/ports.py)
    # (loop _execute 4)
    h = make_harness(answers=[ApprovalDecision.RUN])
    h.observer.observation = make_observation()
    contexts: list[ToolContext] = []

    async def click(_args: BaseModel, context: ToolContext) -> ToolResult:
        contexts.append(context)
        return ToolResult.success("clicked")

    h.executor.handlers["click"] = click
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=1, y=1)], then=done()))
    [context] = contexts
    assert context.run_id == run.id
    assert context.observation is not None
    assert context.observation.image == h.observer.observation.image
