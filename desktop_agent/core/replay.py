"""Replay: the events of a terminal run rebuilt from the store, in the shapes of a live run."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from desktop_agent.core.errors import RefusedToStart, RunNotFound
from desktop_agent.core.events import RunFinished, RunStarted, StepFinished, TaskLoopEvent
from desktop_agent.core.models import RunStatus, RunView
from desktop_agent.core.ports import RunRepository


def started_view(final: RunView) -> RunView:
    """The run as its run_started event showed it live."""
    return final.with_(
        status=RunStatus.RUNNING,
        stop_reason=None,
        finished_at=None,
        step_count=0,
        message="",
        prompt_tokens=0,
        completion_tokens=0,
        tokens_estimated=False,
        cost=None,
    )


async def replay_run(repo: RunRepository, run_id: str) -> AsyncGenerator[TaskLoopEvent, None]:
    """run_started, one step_finished per stored step in order, then run_finished."""
    run = await repo.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run {run_id!r}")
    if not run.status.is_terminal:
        raise RefusedToStart(f"run {run_id} has not ended ({run.status.value}); nothing to replay")
    steps = await repo.list_steps(run_id)
    yield RunStarted(started_view(run))
    for step in steps:
        yield StepFinished(step)
    yield RunFinished(run)
