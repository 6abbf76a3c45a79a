"""A stop wins and takes the grants with it: the cases a hand-made mutation run found no test
for (issue #36 item 1)."""

from __future__ import annotations

import asyncio

from desktop_agent.core.control import RunControl
from desktop_agent.core.events import RunFinished, TaskLoopEvent
from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Risk, RunStatus
from desktop_agent.core.ports import Planner
from desktop_agent.mcp.gate import Asker, McpApprovalGate, SessionGrants
from tests.fakes import ScriptedPlanner
from tests.unit.core.conftest import Consumer, make_harness

# ── RunControl: `halted` is what input in a thread watches ────────────────────


def test_a_stop_halts_input_in_threads() -> None:
    control = RunControl()
    control.stop()
    # the executor's Halt (typing, a drag) looks at `halted` alone
    assert control.halted.is_set() and control.cancelled.is_set()


def test_a_resume_after_a_stop_keeps_input_halted() -> None:
    control = RunControl()
    control.stop()
    control.resume()
    assert control.halted.is_set()


def test_a_resume_after_a_pause_then_a_stop_keeps_input_halted() -> None:
    control = RunControl()
    control.pause()
    control.stop()
    control.resume()  # the window's Resume, clicked as the stop landed
    assert control.halted.is_set() and control.stop_requested


def test_a_resume_after_a_pause_lets_input_go_on() -> None:
    control = RunControl()
    control.pause()
    assert control.halted.is_set()
    control.resume()
    assert not control.halted.is_set()


# ── a stop-all revokes the MCP session's grants ───────────────────────────────


def test_a_stop_all_with_no_mcp_call_in_flight_revokes_the_sessions_grants() -> None:
    h = make_harness()
    grants = SessionGrants(lambda: h.permissions.revocations)
    grants.grant("click")
    assert grants.tools() == frozenset({"click"})

    assert h.runner.stop_all() == 0  # nothing runs: the hotkey between two calls

    assert grants.tools() == frozenset()


def approval(tool: str = "click") -> ApprovalRequest:
    return ApprovalRequest("a1", "r1", 1, tool, {}, "", Risk.INPUT, True, 60)


async def test_an_allow_for_the_session_answered_across_a_stop_all_grants_nothing() -> None:
    h = make_harness()
    grants = SessionGrants(lambda: h.permissions.revocations)

    async def app_answers_after_a_stop_all(_: ApprovalRequest) -> ApprovalDecision:
        h.runner.stop_all()  # the user's stop lands while the answer is on its way
        return ApprovalDecision.RUN

    gate = McpApprovalGate(app_answers_after_a_stop_all)
    gate.lend("r1", Asker(grants))

    assert await gate.request(approval()) is ApprovalDecision.RUN
    assert grants.tools() == frozenset()


def test_a_grant_asked_before_a_stop_all_grants_nothing() -> None:
    h = make_harness()
    grants = SessionGrants(lambda: h.permissions.revocations)
    asked_at = grants.mark()
    h.runner.stop_all()
    grants.grant("click", asked_at=asked_at)
    assert grants.tools() == frozenset()
    grants.grant("click", asked_at=grants.mark())  # asked after it: granted
    assert grants.tools() == frozenset({"click"})


# ── a run stopped while it is prepared leaves no grant behind ─────────────────


async def test_a_run_stopped_while_prepared_leaves_none_of_its_grants_behind() -> None:
    h = make_harness()
    run = await h.create()
    preparing = asyncio.Event()

    async def prepare(_: object) -> Planner:
        # a routine's grants are given as it is prepared, before the model check
        h.permissions.grant_for_run(run.id, "click")
        preparing.set()
        await asyncio.Event().wait()  # the model check that never answers
        return ScriptedPlanner([])

    handle = h.runner.admit(run, prepare)
    consumer = Consumer(handle.events)
    await asyncio.wait_for(preparing.wait(), 5)
    assert h.permissions.task_grants(run.id) == frozenset({"click"})

    h.runner.stop(run.id)
    events: list[TaskLoopEvent] = await consumer.finished()

    last = events[-1]
    assert isinstance(last, RunFinished) and last.run.status is RunStatus.STOPPED
    assert h.permissions.task_grants(run.id) == frozenset()
