"""A stop always wins, attacked where two things land in the same step of the loop: a person's
answer and a stop-all, a pause and a stop, a routine's hand-over and a stop from another
process. Real store, real loop, a loopback model server that counts what it is asked; fakes
only for the screen and the tools (ports)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from desktop_agent.agent import Agent
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Element,
    RunStatus,
    StopReason,
)
from desktop_agent.host.host import Host
from desktop_agent.mcp.calls import CallOutcome, ElementMemory, run_one_call
from desktop_agent.mcp.gate import Asker, McpApprovalGate, SessionGrants
from desktop_agent.settings import Settings
from desktop_agent.store import SqliteRunRepository
from tests.fakes import FakeExecutor, FakeObserver, make_observation

EDIT = Element(1, "text", "Body", (0, 40, 600, 400), focused=True)


class HeldAnswer:
    """A person asked through one channel, who answers when the test says (`answer`)."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []
        self.waiting = asyncio.Event()
        self._answer: asyncio.Future[ApprovalDecision] | None = None

    async def __call__(self, approval: ApprovalRequest) -> ApprovalDecision | None:
        self.asked.append(approval)
        self._answer = asyncio.get_running_loop().create_future()
        self.waiting.set()
        return await self._answer

    def answer(self, decision: ApprovalDecision) -> None:
        assert self._answer is not None
        self.waiting.clear()
        self._answer.set_result(decision)


# ── MCP: a session grant given in the step of a stop-all ─────────────────────


@pytest.fixture
async def mcp(tmp_path: Path) -> AsyncIterator[tuple[Host, McpApprovalGate, FakeExecutor]]:
    async def no_app(_: ApprovalRequest) -> None:
        return None

    gate = McpApprovalGate(no_app)
    executor = FakeExecutor()
    agent = Agent.assemble(
        tmp_path,
        Settings(approval_timeout_s=30),
        await asyncio.to_thread(SqliteRunRepository.open, tmp_path),
        observer=FakeObserver(make_observation([EDIT])),
        executor=executor,
        gate=gate,
        check_model=False,
    )
    host = Host(agent)
    yield host, gate, executor
    await host.close()


async def test_allow_for_the_session_answered_in_the_step_of_a_stop_all_grants_nothing(
    mcp: tuple[Host, McpApprovalGate, FakeExecutor],
) -> None:
    """The client's "session" arrives as the stop-all lands (the hotkey, `stop-all`): the
    call is stopped, and the next call of the same session asks again — the stop-all
    revoked every grant, including one whose answer was on its way."""
    host, gate, executor = mcp
    client = HeldAnswer()
    permissions = host.agent.permissions
    asker = Asker(SessionGrants(lambda: permissions.revocations), client)
    memory = ElementMemory()

    def click() -> asyncio.Future[CallOutcome]:
        return asyncio.ensure_future(
            run_one_call(host, gate, "click", {"x": 5, "y": 5}, asker, memory)
        )

    call = click()
    await asyncio.wait_for(client.waiting.wait(), 5)

    client.answer(ApprovalDecision.RUN)  # the answer is in; its coroutine has not run yet
    host.stop_everything()
    outcome = await asyncio.wait_for(call, 5)

    assert outcome.run is not None
    assert (outcome.run.status, outcome.run.stop_reason) == (RunStatus.STOPPED,
                                                             StopReason.USER_STOP)  # fmt: skip
    assert executor.calls == []
    assert asker.grants.tools() == frozenset()
    after = click()
    await asyncio.wait_for(client.waiting.wait(), 5)  # asked again
    client.answer(ApprovalDecision.ONCE)
    assert (await asyncio.wait_for(after, 5)).run.status is RunStatus.COMPLETED  # type: ignore[union-attr]
    assert len(client.asked) == 2
