"""Records (host/records.py): the history and the routines as the window asks for them, over a
real SQLite store: runs and steps, a replay in batches, a routine saved from a run."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from desktop_agent.agent import Agent
from desktop_agent.core.errors import RunNotFound
from desktop_agent.core.events import RunFinished, RunStarted, StepFinished, TaskLoopEvent
from desktop_agent.core.models import Policy
from desktop_agent.core.permissions import Permissions
from desktop_agent.host import records
from desktop_agent.host.records import Records
from desktop_agent.host.starts import RunRequest, admit
from desktop_agent.settings import Settings
from desktop_agent.store import SqliteRunRepository
from tests.fakes import (
    FakeExecutor,
    FakeObserver,
    ScriptedPlanner,
    done,
    final_run,
    make_observation,
    tool,
)


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[Agent]:
    repo = await asyncio.to_thread(SqliteRunRepository.open, tmp_path)
    made = Agent.assemble(
        tmp_path,
        Settings(),
        repo,
        observer=FakeObserver(make_observation()),
        executor=FakeExecutor(),
        permissions=Permissions({"wait": Policy.ALLOW}),
        planner_factory=lambda run: ScriptedPlanner(
            [tool("wait", seconds=0), tool("wait", seconds=0)], then=done("waited")
        ),
        check_model=False,
    )
    yield made
    await made.close()


async def a_finished_run(agent: Agent) -> str:
    final = await final_run(admit(agent, RunRequest("wait twice", allowed_tools=("wait",))))
    assert final is not None and final.status.is_terminal
    return str(final.id)


async def read_all(batches: AsyncIterator[list[TaskLoopEvent]]) -> list[list[TaskLoopEvent]]:
    return [batch async for batch in batches]


async def test_a_replay_comes_in_batches_of_the_same_events_as_the_stores_replay(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = await a_finished_run(agent)
    whole = [event async for event in agent.replay(run_id)]
    monkeypatch.setattr(records, "REPLAY_BATCH", 3)

    batches = await read_all(Records(agent).replay(run_id))

    assert [event for batch in batches for event in batch] == whole
    assert all(len(batch) == 3 for batch in batches[:-1]) and len(batches[-1]) <= 3
    assert isinstance(whole[0], RunStarted) and isinstance(whole[-1], RunFinished)
    assert any(isinstance(event, StepFinished) for event in whole)


async def test_a_replay_that_fails_hands_over_what_it_read_then_raises(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = await a_finished_run(agent)
    whole = [event async for event in agent.replay(run_id)]

    async def two_then_a_fault(run: str) -> AsyncIterator[TaskLoopEvent]:
        for event in whole[:2]:
            yield event
        raise OSError("disk I/O error")

    monkeypatch.setattr(agent, "replay", two_then_a_fault)
    got: list[TaskLoopEvent] = []

    with pytest.raises(OSError, match="disk I/O error"):
        async for batch in Records(agent).replay(run_id):
            got.extend(batch)

    assert got == whole[:2]


async def test_a_replay_of_a_run_the_store_does_not_have_is_run_not_found(agent: Agent) -> None:
    with pytest.raises(RunNotFound):
        await read_all(Records(agent).replay("no-such-run"))


async def test_a_run_saved_as_a_routine_is_listed_and_its_grants_can_be_revoked(
    agent: Agent,
) -> None:
    run_id = await a_finished_run(agent)
    desk = Records(agent)
    assert [run.id for run in await desk.list_runs()] == [run_id]
    assert [step.kind.value for step in await desk.list_steps(run_id)][:3] == [
        "observe",
        "decide",
        "action",
    ]

    saved = await desk.save_routine(run_id, "wait-twice", {}, ["wait"])
    revoked = await desk.set_routine_grants("wait-twice", ())

    assert [r.name for r in await desk.list_routines()] == ["wait-twice"]
    assert saved.grants == ("wait",) and revoked.grants == ()
    assert (await agent.repo.get_routine("wait-twice")).grants == ()  # type: ignore[union-attr]
