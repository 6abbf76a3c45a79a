"""Who answers a question only a person answers under `desktop-agent serve` (no window of its
own): the app's person when an app runs on the data dir, else the app's dialog in a process of
its own where a display is, else nobody and it is denied; never an API client, who may only
deny it (host/person.py PersonOnlyGate, the gate `serve` opens its Host with). Real loopback
servers, the real registry client; the run's screen and tools are the API tests' fakes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Policy
from desktop_agent.host.person import AskHuman, PersonOnlyGate, person_asker
from tests.fakes import done, tool
from tests.unit.api.conftest import Api, close_api, frames, next_frame, open_api, until

REFUSED = (
    "this call asks every time: only the person at this desktop allows it, in the app's "
    "approval dialog; the API may deny it"
)


async def open_serve(tmp_path: Path, session: aiohttp.ClientSession, person: AskHuman) -> Api:
    """`serve`'s API on `tmp_path` (this process's pid), its gate as `serve` makes it."""
    api = await open_api(
        tmp_path, session, pid=os.getpid(), face="serve", policies={"wait": Policy.ASK}
    )
    services = api.agent.runner.services
    services.gate = PersonOnlyGate(api.agent.approvals, person)
    return api


def launched(api: Api) -> list[str]:
    executor = api.agent.runner.services.executor
    return [name for name, _ in executor.calls]  # type: ignore[attr-defined]


async def test_under_serve_the_apps_person_answers_what_asks_every_time_not_the_api(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    app = await open_api(tmp_path, session, pid=os.getppid(), face="app")
    # the real person channels: the app on the data dir first (no display: no dialog child)
    serve = await open_serve(tmp_path, session, person_asker(tmp_path, env={}))
    try:
        serve.planners.scripts["launch"] = [tool("launch_app", command="l3afpad"), done()]
        run = await serve.create("launch")
        async with serve.events(run["id"]) as response:
            stream = frames(response)
            _, asked = await next_frame(stream, "approval_requested")
            approval_id = asked["approval"]["id"]
            await until(lambda: bool(app.agent.approvals.pending), what="the question in the app")

            status, body = await serve.call(
                "POST", f"/api/approvals/{approval_id}", body={"decision": "once"}
            )
            assert (status, body) == (403, {"error": REFUSED})
            assert launched(serve) == []
            [shown] = app.agent.approvals.pending
            assert (shown.id, shown.tool) == (approval_id, "launch_app")
            app.agent.approvals.resolve(approval_id, ApprovalDecision.ONCE)  # the app's dialog

            _, action = await next_frame(stream, "step_finished", kind="action")
            await next_frame(stream, "run_finished")
        assert action["step"]["status"] == "ok"
        assert launched(serve) == ["launch_app"]
    finally:
        await close_api(serve)
        await close_api(app)


async def test_under_serve_with_nobody_at_this_desktop_what_asks_every_time_is_denied(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    """No app on the data dir, no display for the dialog's own process: denied at once (the
    question does not wait out its time for an API client who may not allow it)."""
    serve = await open_serve(tmp_path, session, person_asker(tmp_path, env={}))
    try:
        serve.planners.scripts["launch"] = [tool("launch_app", command="l3afpad"), done()]
        run = await serve.create("launch")
        frames_ = await serve.stream(run["id"])
    finally:
        await close_api(serve)
    [action] = [
        f for name, f in frames_ if name == "step_finished" and f["step"]["kind"] == "action"
    ]
    assert action["step"]["status"] == "denied"
    assert action["step"]["error"] == "nobody at this desktop could be asked"  # not "by the user"
    assert launched(serve) == []
    assert frames_[-1][1]["run"]["status"] == "completed"


async def test_under_serve_an_api_client_may_deny_what_a_person_is_being_asked(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    asked: list[ApprovalRequest] = []
    cancelled = asyncio.Event()

    async def person(approval: ApprovalRequest) -> ApprovalDecision | None:
        asked.append(approval)
        try:
            await asyncio.Event().wait()  # the person has not answered yet
        finally:
            cancelled.set()
        return None

    serve = await open_serve(tmp_path, session, person)
    try:
        serve.planners.scripts["launch"] = [tool("launch_app", command="l3afpad"), done()]
        run = await serve.create("launch")
        async with serve.events(run["id"]) as response:
            stream = frames(response)
            _, question = await next_frame(stream, "approval_requested")
            await until(lambda: bool(asked), what="the person asked")
            status, body = await serve.call(
                "POST", f"/api/approvals/{question['approval']['id']}", body={"decision": "deny"}
            )
            assert (status, body["decision"]) == (200, "deny")
            _, action = await next_frame(stream, "step_finished", kind="action")
            await next_frame(stream, "run_finished")
        await asyncio.wait_for(cancelled.wait(), 5)  # the person's question is closed
    finally:
        await close_api(serve)
    assert action["step"]["status"] == "denied"
    assert launched(serve) == []


async def test_under_serve_a_stop_while_the_person_is_asked_closes_the_question_and_acts_not(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    asked: list[ApprovalRequest] = []
    closed = asyncio.Event()

    async def person(approval: ApprovalRequest) -> ApprovalDecision | None:
        asked.append(approval)
        try:
            await asyncio.Event().wait()  # the dialog is open
        finally:
            closed.set()
        return ApprovalDecision.ONCE

    serve = await open_serve(tmp_path, session, person)
    try:
        serve.planners.scripts["launch"] = [tool("launch_app", command="l3afpad"), done()]
        run = await serve.create("launch")
        async with serve.events(run["id"]) as response:
            stream = frames(response)
            await next_frame(stream, "approval_requested")
            await until(lambda: bool(asked), what="the person asked")
            status, _ = await serve.call("POST", f"/api/tasks/{run['id']}/stop")
            assert status == 200
            _, finished = await next_frame(stream, "run_finished")
        await asyncio.wait_for(closed.wait(), 5)
    finally:
        await close_api(serve)
    assert (finished["run"]["status"], finished["run"]["stop_reason"]) == ("stopped", "user_stop")
    assert launched(serve) == []
    assert serve.agent.approvals.pending == []


async def test_under_serve_an_ordinary_question_is_the_api_clients_alone(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    asked: list[ApprovalRequest] = []

    async def person(approval: ApprovalRequest) -> ApprovalDecision | None:
        asked.append(approval)
        return ApprovalDecision.DENY

    serve = await open_serve(tmp_path, session, person)
    try:
        serve.planners.scripts["wait"] = [tool("wait", seconds=0), done()]
        run = await serve.create("wait")
        async with serve.events(run["id"]) as response:
            stream = frames(response)
            _, question = await next_frame(stream, "approval_requested")
            status, _ = await serve.call(
                "POST", f"/api/approvals/{question['approval']['id']}", body={"decision": "once"}
            )
            assert status == 200
            _, action = await next_frame(stream, "step_finished", kind="action")
            await next_frame(stream, "run_finished")
    finally:
        await close_api(serve)
    assert action["step"]["status"] == "ok"
    assert asked == []


def test_serve_opens_its_host_with_the_person_at_this_desktop(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`desktop-agent serve` hands its Host the person channels (the app, else the dialog's
    own process), so its questions that ask every time get the PersonOnlyGate above."""
    from desktop_agent.cli import build_parser
    from desktop_agent.cli.commands import _cmd_serve
    from desktop_agent.host.host import Host

    seen: dict[str, Any] = {}

    class Opened(Exception):
        pass

    def serving(data_dir: Path, settings: object, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise Opened

    monkeypatch.setattr(Host, "serving", serving)
    with pytest.raises(Opened):
        _cmd_serve(build_parser().parse_args(["serve"]), tmp_path)
    assert callable(seen["ask_person"])
