"""Another process (`desktop-agent mcp`) asks the app's person: POST /api/approvals/ask shows
its question as the app's own (an approval_requested on the runner's events, which the app's
dialog follows) and answers with the person's decision."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import aiohttp

from desktop_agent.core.events import ApprovalRequested, ApprovalResolved, TaskLoopEvent
from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Risk
from desktop_agent.instances.registry import ask_app_instance
from tests.unit.api.conftest import close_api, open_api, until


def question(timeout_s: float = 30.0) -> ApprovalRequest:
    return ApprovalRequest(
        id="r1-1",
        run_id="r1",
        index=1,
        tool="click",
        args={"element": 7},
        shown_args={"element": 7, "button": "left"},
        reason="called by the MCP client",
        risk=Risk.INPUT,
        offer_run_grant=True,
        timeout_s=timeout_s,
        screenshot="runs/r1/0001.jpg",
        target=(10, 20),
    )


async def test_the_apps_person_answers_another_processs_question(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    api = await open_api(tmp_path, session, pid=os.getpid(), face="app")
    seen: list[TaskLoopEvent] = []
    api.agent.runner.subscribe(seen.append)
    try:
        asking = asyncio.ensure_future(ask_app_instance(tmp_path, question(), exclude_pid=None))
        await until(lambda: bool(api.agent.approvals.pending), what="the question in the app")
        [shown] = [event for event in seen if isinstance(event, ApprovalRequested)]
        assert (shown.approval.tool, shown.approval.args) == ("click", {"element": 7})
        assert shown.approval.to_show == {"element": 7, "button": "left"}
        assert shown.approval.target == (10, 20)
        api.agent.approvals.resolve("r1-1", ApprovalDecision.RUN)  # the dialog's answer

        assert await asking is ApprovalDecision.RUN
        resolved = [event for event in seen if isinstance(event, ApprovalResolved)]
        assert [(r.decision, r.by) for r in resolved] == [(ApprovalDecision.RUN, "user")]
    finally:
        await close_api(api)


async def test_an_asker_that_goes_away_closes_the_question_in_the_app(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    api = await open_api(tmp_path, session, pid=os.getpid(), face="app")
    seen: list[TaskLoopEvent] = []
    api.agent.runner.subscribe(seen.append)
    try:
        asking = asyncio.ensure_future(ask_app_instance(tmp_path, question(), exclude_pid=None))
        await until(lambda: bool(api.agent.approvals.pending), what="the question in the app")
        asking.cancel()  # the MCP call was stopped: its run no longer waits

        await until(
            lambda: any(isinstance(event, ApprovalResolved) for event in seen),
            what="the question to close",
        )
        assert api.agent.approvals.pending == []
        [closed] = [event for event in seen if isinstance(event, ApprovalResolved)]
        assert (closed.decision, closed.by) == (ApprovalDecision.DENY, "cancelled")
    finally:
        await close_api(api)


async def test_an_unanswered_question_is_denied_when_its_time_runs_out(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    api = await open_api(tmp_path, session, pid=os.getpid(), face="app")
    try:
        decision = await ask_app_instance(tmp_path, question(timeout_s=0.2), exclude_pid=None)
    finally:
        await close_api(api)
    assert decision is ApprovalDecision.DENY


async def test_only_the_app_is_asked_another_processs_questions(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    api = await open_api(tmp_path, session, pid=os.getpid(), face="serve")
    try:
        status, body = await api.call("POST", "/api/approvals/ask", body={**question().to_json()})
        asked = await ask_app_instance(tmp_path, question(), exclude_pid=None)
    finally:
        await close_api(api)
    assert status == 403
    assert "no approval dialog" in body["error"]
    assert asked is None  # no app on this data dir: the caller asks elsewhere


async def test_a_question_that_does_not_validate_is_a_400(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    api = await open_api(tmp_path, session, pid=os.getpid(), face="app")
    try:
        outside = {**question().to_json(), "screenshot": "../../etc/passwd"}
        status, body = await api.call("POST", "/api/approvals/ask", body=outside)
    finally:
        await close_api(api)
    assert status == 400
    assert "screenshot" in body["error"]


async def test_the_app_shows_the_text_the_asking_process_will_type(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    """The stored arguments hide the text; the app's dialog shows what will be typed."""
    api = await open_api(tmp_path, session, pid=os.getpid(), face="app")
    seen: list[TaskLoopEvent] = []
    api.agent.runner.subscribe(seen.append)
    typed = ApprovalRequest(
        id="r1-2",
        run_id="r1",
        index=2,
        tool="type_text",
        args={"text": "•••"},
        shown_args={"text": "rm -rf ~/src"},
        secret="not sent",
        reason="called by the MCP client",
        risk=Risk.INPUT,
        offer_run_grant=False,
        timeout_s=30.0,
    )
    try:
        asking = asyncio.ensure_future(ask_app_instance(tmp_path, typed, exclude_pid=None))
        await until(lambda: bool(api.agent.approvals.pending), what="the question in the app")
        [shown] = [event for event in seen if isinstance(event, ApprovalRequested)]
        assert shown.approval.args == {"text": "•••"}
        assert shown.approval.to_show == {"text": "rm -rf ~/src"}
        assert shown.approval.secret == ""  # a password never leaves its process
        api.agent.approvals.resolve("r1-2", ApprovalDecision.DENY)
        assert await asking is ApprovalDecision.DENY
    finally:
        await close_api(api)


async def test_a_program_holding_the_token_cannot_allow_another_processs_question(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    # an MCP client that reads the data dir's token and answers the question its own call
    # raised in the app (issue 28 item 1's sibling): only the dialog allows it
    api = await open_api(tmp_path, session, pid=os.getpid(), face="app")
    try:
        asking = asyncio.ensure_future(ask_app_instance(tmp_path, question(), exclude_pid=None))
        await until(lambda: bool(api.agent.approvals.pending), what="the question in the app")
        answers = [
            await api.call("POST", "/api/approvals/r1-1", body={"decision": decision})
            for decision in ("once", "run")
        ]
        still_pending = [a.id for a in api.agent.approvals.pending]
        denied = await api.call("POST", "/api/approvals/r1-1", body={"decision": "deny"})

        assert await asking is ApprovalDecision.DENY
    finally:
        await close_api(api)
    assert [status for status, _ in answers] == [403, 403]
    assert "only the person at this desktop allows it" in answers[0][1]["error"]
    assert still_pending == ["r1-1"]
    assert denied[0] == 200  # a denial is always welcome
