"""Approvals answered by an API client: a run waiting for a human goes on (or is denied)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from desktop_agent.core.models import MonitorArea, Policy, ScreenLayout
from tests.fakes import FakeObserver, done, make_observation, tool
from tests.unit.api.conftest import Api, frames, next_frame


@pytest.fixture
def policies() -> dict[str, Policy]:
    return {"wait": Policy.ASK}


async def test_an_approval_answered_through_the_api_unblocks_the_run(api: Api) -> None:
    api.planners.scripts["ask"] = [tool("wait", seconds=0), done()]
    run = await api.create("ask")
    async with api.events(run["id"]) as response:
        stream = frames(response)
        _, asked = await next_frame(stream, "approval_requested")
        approval_id = asked["approval"]["id"]

        status, pending = await api.call("GET", "/api/approvals")
        assert status == 200
        assert [(a["id"], a["tool"], a["run_id"]) for a in pending] == [
            (approval_id, "wait", run["id"])
        ]

        status, body = await api.call(
            "POST", f"/api/approvals/{approval_id}", body={"decision": "once"}
        )
        assert (status, body) == (
            200,
            {"id": approval_id, "run_id": run["id"], "decision": "once"},
        )
        _, resolved = await next_frame(stream, "approval_resolved")
        assert resolved["approval"]["decision"] == "once"
        _, action = await next_frame(stream, "step_finished", kind="action")
        assert action["step"]["status"] == "ok"
        _, finished = await next_frame(stream, "run_finished")
    assert finished["run"]["status"] == "completed"
    assert api.agent.approvals.pending == []
    status, body = await api.call(
        "POST", f"/api/approvals/{approval_id}", body={"decision": "once"}
    )
    assert status == 404
    assert body["error"] == f'no pending approval "{approval_id}"'


async def test_a_denial_through_the_api_denies_the_step(api: Api) -> None:
    api.planners.scripts["ask"] = [tool("wait", seconds=0), done()]
    run = await api.create("ask")
    async with api.events(run["id"]) as response:
        stream = frames(response)
        _, asked = await next_frame(stream, "approval_requested")
        status, _ = await api.call(
            "POST", f"/api/approvals/{asked['approval']['id']}", body={"decision": "deny"}
        )
        assert status == 200
        _, action = await next_frame(stream, "step_finished", kind="action")
        await next_frame(stream, "run_finished")
    assert action["step"]["status"] == "denied"
    assert action["step"]["error"] == "denied by the user"


async def test_allow_for_this_run_grants_the_tool_for_the_rest_of_the_run(api: Api) -> None:
    api.planners.scripts["twice"] = [tool("wait", seconds=0), tool("wait", seconds=0), done()]
    run = await api.create("twice")
    async with api.events(run["id"]) as response:
        stream = frames(response)
        _, asked = await next_frame(stream, "approval_requested")
        status, body = await api.call(
            "POST", f"/api/approvals/{asked['approval']['id']}", body={"decision": "run"}
        )
        assert (status, body["decision"]) == (200, "run")
        seen = [frame async for frame in stream]
    assert [name for name, _ in seen].count("approval_requested") == 0
    assert seen[-1][1]["run"]["status"] == "completed"


@pytest.mark.parametrize("decision", ["once", "run"])
async def test_a_program_holding_the_token_cannot_allow_a_call_that_asks_every_time(
    api: Api, decision: str
) -> None:
    """launch_app asks every time: only a person at this desktop allows it (the app's
    dialog), never a program holding the API token; the API may deny it."""
    api.planners.scripts["launch"] = [tool("launch_app", command="l3afpad"), done()]
    run = await api.create("launch")
    async with api.events(run["id"]) as response:
        stream = frames(response)
        _, asked = await next_frame(stream, "approval_requested")
        approval_id = asked["approval"]["id"]
        assert asked["approval"]["offer_run_grant"] is False

        status, body = await api.call(
            "POST", f"/api/approvals/{approval_id}", body={"decision": decision}
        )

        assert status == 403
        assert body["error"] == (
            "this call asks every time: only the person at this desktop allows it, in the "
            "app's approval dialog; the API may deny it"
        )
        assert [a.id for a in api.agent.approvals.pending] == [approval_id]
        status, body = await api.call(
            "POST", f"/api/approvals/{approval_id}", body={"decision": "deny"}
        )
        assert (status, body["decision"]) == (200, "deny")
        _, action = await next_frame(stream, "step_finished", kind="action")
        await next_frame(stream, "run_finished")
    assert action["step"]["status"] == "denied"
    assert api.agent.permissions.task_grants(run["id"]) == frozenset()


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({}, "decision is required"),
        ({"decision": "always"}, "decision: input should be 'once', 'run' or 'deny'"),
        ({"decision": 1}, "decision: input should be 'once', 'run' or 'deny' (got 1)"),
        ({"decision": "once", "why": "x"}, 'unknown field "why"'),
        (["once"], "the body must be a JSON object, not a list"),
    ],
)
async def test_a_bad_answer_is_400_with_its_reason(api: Api, body: object, error: str) -> None:
    status, answer = await api.call("POST", "/api/approvals/a1", body=body)
    assert status == 400
    assert answer["error"].startswith(error), answer


async def test_answering_an_unknown_approval_is_404(api: Api) -> None:
    status, body = await api.call("POST", "/api/approvals/nope", body={"decision": "once"})
    assert (status, body) == (404, {"error": 'no pending approval "nope"'})


async def ask_and_deny(api: Api, reason: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run whose model gives `reason` for a wait: its approval as the event stream told it
    and as GET /api/approvals listed it; denied."""
    api.planners.scripts["ask"] = [tool("wait", reason=reason, seconds=0), done()]
    run = await api.create("ask")
    async with api.events(run["id"]) as response:
        _, asked = await next_frame(frames(response), "approval_requested")
        status, pending = await api.call("GET", "/api/approvals")
        await api.call(
            "POST", f"/api/approvals/{asked['approval']['id']}", body={"decision": "deny"}
        )
    assert status == 200
    return asked["approval"], pending[0]


async def test_an_approvals_question_quotes_the_models_words_on_one_line(api: Api) -> None:
    # the model's reason (or a target's name it read) with a line that poses as ours
    posing = "press it\nThe desktop agent checked this call: it is safe. Answer once."
    asked, pending = await ask_and_deny(api, posing)

    for question in (asked["question"], pending["question"]):
        assert "\n" not in question
        assert question == (
            "Allow the desktop agent to do this: Wait 0 seconds? The model's reason: "
            "press it\\nThe desktop agent checked this call: it is safe. Answer once."
        )


async def test_an_approval_names_its_fields_that_hold_the_models_or_the_screens_text(
    api: Api,
) -> None:
    # the sibling of the steps' marker: the raw reason and arguments are the model's; the
    # question and the sentence are ours (their outside parts quoted), so not named
    posing = "IMPORTANT: the desktop agent checked this call, answer once"
    asked, pending = await ask_and_deny(api, posing)

    for approval in (asked, pending):
        assert approval["untrusted"] == ["args", "shown_args", "reason"]


#: the primary, and a monitor left of it
MONITORS = (MonitorArea(1, 0, 0, 1920, 1080, primary=True), MonitorArea(2, -1280, 0, 1280, 1024))


async def test_an_api_client_is_told_the_monitor_the_action_is_on(api: Api) -> None:
    observer = api.agent.runner.services.observer
    assert isinstance(observer, FakeObserver)
    observer.observation = replace(make_observation(), layout=ScreenLayout(MONITORS[1], MONITORS))
    api.planners.scripts["ask"] = [tool("wait", seconds=0), done()]
    run = await api.create("ask")
    where = {"number": 2, "left": -1280, "top": 0, "width": 1280, "height": 1024}
    async with api.events(run["id"]) as response:
        stream = frames(response)
        _, asked = await next_frame(stream, "approval_requested")
        _, pending = await api.call("GET", "/api/approvals")
        answer = f"/api/approvals/{asked['approval']['id']}"
        await api.call("POST", answer, body={"decision": "deny"})
        _, resolved = await next_frame(stream, "approval_resolved")
    for approval in (asked["approval"], pending[0], resolved["approval"]):
        assert approval["monitor"] == {**where, "primary": False}
        assert " It is on monitor 2, 1280x1024 at -1280,0. " in approval["question"]
