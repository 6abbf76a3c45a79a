"""`run --approve all` approves for its own run only, and never a dangerous call unless named:
its local API creates, starts and approves nothing (403); the auto gate denies a dangerous
tool or a call that asks every time unless --allow-dangerous names its tool."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest

from desktop_agent.api.routes import CONTROLS_ONLY
from desktop_agent.cli import AutoGate, build_parser
from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Risk, TaskSpec
from tests.unit.api.conftest import close_api, open_api


def approval(tool: str, risk: Risk, caution: str = "") -> ApprovalRequest:
    return ApprovalRequest(
        id="a1",
        run_id="r1",
        index=1,
        tool=tool,
        args={},
        reason="",
        risk=risk,
        # as the loop's gate offers it (core/gate.py `_gate`)
        offer_run_grant=risk is not Risk.DANGEROUS and not caution,
        timeout_s=5,
        caution=caution,
    )


async def test_approve_all_denies_dangerous_calls_unless_their_tool_is_named() -> None:
    gate = AutoGate(ApprovalDecision.ONCE)
    launcher = "a key combination that opens a program launcher"
    assert await gate.request(approval("click", Risk.INPUT)) is ApprovalDecision.ONCE
    assert await gate.request(approval("launch_app", Risk.DANGEROUS)) is ApprovalDecision.DENY
    assert await gate.request(approval("hotkey", Risk.INPUT, launcher)) is ApprovalDecision.DENY
    named = AutoGate(ApprovalDecision.ONCE, ("launch_app",))
    assert await named.request(approval("launch_app", Risk.DANGEROUS)) is ApprovalDecision.ONCE
    assert await named.request(approval("hotkey", Risk.INPUT, launcher)) is ApprovalDecision.DENY


async def test_approve_all_denies_any_question_that_offers_no_run_grant() -> None:
    """`--approve all` reads the one predicate of every face (only_a_person_answers): a
    question with no run grant on offer asks every time, whatever else it says."""
    asks_every_time = replace(approval("click", Risk.INPUT), offer_run_grant=False)
    assert await AutoGate(ApprovalDecision.ONCE).request(asks_every_time) is ApprovalDecision.DENY


def test_run_says_so_in_its_help_and_takes_allow_dangerous() -> None:
    parser = build_parser()
    run = parser._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr, index]
    text = " ".join(run.format_help().split())
    assert "never approves a dangerous call" in text and "--allow-dangerous" in text
    args = parser.parse_args(["run", "x", "--approve", "all", "--allow-dangerous", "launch_app"])
    assert args.allow_dangerous == ("launch_app",)


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as made:
        yield made


async def test_a_run_process_api_lists_shows_and_stops_but_creates_starts_and_approves_nothing(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    api = await open_api(tmp_path, session, controls_only=True)
    try:
        status, body = await api.call("POST", "/api/tasks", body={"goal": "type my password"})
        assert (status, body) == (403, {"error": CONTROLS_ONLY})
        status, body = await api.call("POST", "/api/approvals/a1", body={"decision": "once"})
        assert (status, body) == (403, {"error": CONTROLS_ONLY})
        queued = await api.agent.runner.create(TaskSpec(goal="made by the run itself"))
        status, body = await api.call("GET", f"/api/tasks/{queued.id}/events")
        assert (status, body) == (403, {"error": CONTROLS_ONLY})
        status, runs = await api.call("GET", "/api/tasks")
        assert status == 200 and [run["id"] for run in runs] == [queued.id]
        status, _ = await api.call("GET", f"/api/tasks/{queued.id}")
        assert status == 200
        status, _ = await api.call("POST", f"/api/tasks/{queued.id}/stop")
        assert status == 200
        status, body = await api.call("POST", "/api/tasks/stop-all")
        assert status == 200
        stored = await api.agent.repo.get_run(queued.id)
        assert stored is not None and stored.status.value == "stopped"
    finally:
        await close_api(api)
