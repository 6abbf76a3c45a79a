"""McpApprovalGate, case by case (mutants of mcp/gate.py that lived; benchmarks/mutation.md)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest
from desktop_agent.instances import registry
from desktop_agent.mcp.gate import McpApprovalGate, app_asker
from tests.unit.mcp.test_gate import Channel, approval, lent


async def test_an_app_that_fails_to_ask_hands_the_question_to_the_client() -> None:
    app, client = Channel(RuntimeError("app gone")), Channel(ApprovalDecision.ONCE)
    gate = McpApprovalGate(app, client_approves=True)
    lent(gate, client, [0])
    assert await gate.request(approval()) is ApprovalDecision.ONCE
    assert (app.asked, client.asked) == (1, 1)


async def test_a_failed_channel_and_a_denial_for_nobody_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gate = McpApprovalGate(Channel(RuntimeError("app gone")))
    with caplog.at_level(logging.INFO, logger="desktop_agent.host.person"):
        assert await gate.request(approval("click")) is ApprovalDecision.DENY
    failed, denied = caplog.records
    assert (failed.levelno, failed.getMessage()) == (logging.WARNING, "asking about click failed")
    assert failed.exc_info is not None and str(failed.exc_info[1]) == "app gone"
    assert (denied.levelno, denied.getMessage()) == (
        logging.INFO,
        "nobody could be asked about click: denied",
    )


async def test_each_question_nobody_could_be_asked_is_counted_and_each_asked_one_kept() -> None:
    gate = McpApprovalGate(Channel(None))
    asker = lent(gate, None, [0])
    first, second = approval("click"), approval("type_text")
    await gate.request(first)
    await gate.request(second)
    assert asker.unasked == 2
    assert asker.asked == [first, second]


async def test_a_session_grant_asked_for_after_an_earlier_stop_all_holds() -> None:
    stops = [1]  # a stop-all came before the session's question: it revoked nothing of it
    gate = McpApprovalGate(Channel(None), client_approves=True)
    asker = lent(gate, Channel(ApprovalDecision.RUN), stops)
    assert await gate.request(approval("click")) is ApprovalDecision.RUN
    assert asker.grants.tools() == frozenset({"click"})


def test_taking_a_run_back_twice_is_harmless() -> None:
    gate = McpApprovalGate(Channel(None))
    take_back = gate.lend("r1", lent(gate, None, [0]))
    take_back()
    take_back()


async def test_the_app_asker_asks_the_app_on_its_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[tuple[Path, ApprovalRequest]] = []

    async def ask_app_instance(data_dir: Path, request: ApprovalRequest) -> ApprovalDecision:
        seen.append((data_dir, request))
        return ApprovalDecision.ONCE

    # the registry's own client needs a running app: stood in for by what it is called with
    monkeypatch.setattr(registry, "ask_app_instance", ask_app_instance)
    question = approval()
    assert await app_asker(tmp_path)(question) is ApprovalDecision.ONCE
    assert seen == [(tmp_path, question)]


async def test_a_question_with_a_caution_never_reaches_the_client() -> None:
    client = Channel(ApprovalDecision.ONCE)
    gate = McpApprovalGate(Channel(None), client_approves=True)
    lent(gate, client, [0])
    cautious = replace(approval("hotkey"), caution="the keys open a terminal")
    assert await gate.request(cautious) is ApprovalDecision.DENY
    assert client.asked == 0


async def test_a_run_taken_back_no_longer_asks_through_its_call() -> None:
    client = Channel(ApprovalDecision.ONCE)
    gate = McpApprovalGate(Channel(None), client_approves=True)
    asker = lent(gate, client, [0])
    gate.lend("r1", asker)()
    assert await gate.request(approval()) is ApprovalDecision.DENY
    assert (client.asked, asker.asked) == (0, [])
