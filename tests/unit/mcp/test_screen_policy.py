"""The screen leaves this process only as policies.screen_snapshot says: an MCP `screenshot`
and `get_run screenshots=true` are refused on deny and asked of a person at this desktop on ask
(never of the client, which would get it); a run whose model sees the screen does not start on
deny. Driven by the SDK's own client in process."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from desktop_agent.agent import Agent
from desktop_agent.core.models import ApprovalDecision, Policy, Risk
from desktop_agent.core.tools import SCREEN_DENIED
from desktop_agent.host.starts import RunRequest, store_queued
from desktop_agent.mcp.gate import McpApprovalGate
from desktop_agent.mcp.server import McpFace
from desktop_agent.settings import Settings
from desktop_agent.store import SqliteRunRepository
from tests.fakes import FakeExecutor, FakeObserver, ScriptedPlanner, done, tool
from tests.unit.mcp.conftest import AcceptsEverything, MakeFace, Person


def screen_face(make_face: MakeFace, screen: Policy, person: Person) -> McpFace:
    """A face whose screen_snapshot policy is `screen`; `person` is this process's dialog."""
    gate = McpApprovalGate(Person(None), person, client_approves=True)
    return make_face(gate, policies={"screen_snapshot": screen, "wait": Policy.ALLOW})


def images(result: types.CallToolResult) -> list[types.ImageContent]:
    return [part for part in result.content if isinstance(part, types.ImageContent)]


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, types.TextContent))


async def a_run_with_a_screenshot(face: McpFace) -> str:
    """A finished run of this face with one stored screenshot (an allowed wait, the screen
    allowed for it; the face's own policy again after)."""
    face.host._agent.planner_factory = lambda run: ScriptedPlanner(
        [tool("wait", seconds=0), done()]
    )
    permissions = face.host._agent.permissions
    policy = permissions.policy("screen_snapshot", Risk.SAFE)
    permissions.set_policy("screen_snapshot", Policy.ALLOW)
    async with Client(face.server, mode="legacy") as mcp:
        result = await mcp.call_tool("run_task", {"goal": "wait"})
    permissions.set_policy("screen_snapshot", policy)
    return str(result.structured_content["run_id"])


async def test_deny_hands_out_no_screenshot_and_starts_no_run_a_model_sees(
    make_face: MakeFace,
) -> None:
    here = Person(ApprovalDecision.ONCE)
    face = screen_face(make_face, Policy.DENY, here)
    run_id = await a_run_with_a_screenshot(face)
    accepts = AcceptsEverything()
    async with Client(face.server, mode="legacy", elicitation_callback=accepts) as mcp:
        shot = await mcp.call_tool("screenshot", {})
        shots = await mcp.call_tool("get_run", {"run_id": run_id, "screenshots": True})
        steps = await mcp.call_tool("get_run", {"run_id": run_id})
        task = await mcp.call_tool("run_task", {"goal": "look"})

    for refused in (shot, shots):
        assert refused.is_error and images(refused) == []
        assert "policies.screen_snapshot = deny" in text_of(refused)
    assert not steps.is_error and images(steps) == []  # the steps alone still come
    assert task.is_error and SCREEN_DENIED in text_of(task)
    assert here.asked == [] and accepts.questions == []


@pytest.mark.parametrize("answer", [ApprovalDecision.ONCE, ApprovalDecision.DENY, None])
async def test_ask_hands_out_the_screen_only_when_a_person_here_allows_it(
    make_face: MakeFace, answer: ApprovalDecision | None
) -> None:
    here = Person(answer)
    face = screen_face(make_face, Policy.ASK, here)
    accepts = AcceptsEverything()
    async with Client(face.server, mode="legacy", elicitation_callback=accepts) as mcp:
        shot = await mcp.call_tool("screenshot", {})

    assert accepts.questions == []  # the client, who would get the screen, is never asked
    [asked] = here.asked
    assert asked.tool == "screen_snapshot" and not asked.offer_run_grant
    assert asked.screenshot is not None  # the person sees the very image that would go
    if answer is ApprovalDecision.ONCE:
        assert not shot.is_error and len(images(shot)) == 1
    else:
        assert shot.is_error and images(shot) == []
        why = "denied by the user" if answer else "nobody could be asked"
        assert why in text_of(shot)


async def test_ask_asks_once_for_a_runs_screenshots_showing_the_last(
    make_face: MakeFace,
) -> None:
    here = Person(ApprovalDecision.DENY)
    face = screen_face(make_face, Policy.ASK, here)
    run_id = await a_run_with_a_screenshot(face)
    async with Client(face.server, mode="legacy") as mcp:
        shots = await mcp.call_tool("get_run", {"run_id": run_id, "screenshots": True})
        here.answer = ApprovalDecision.ONCE
        allowed = await mcp.call_tool("get_run", {"run_id": run_id, "screenshots": True})

    assert shots.is_error and images(shots) == []
    assert len(here.asked) == 2 and "screenshot(s) of run" in here.asked[0].caution
    assert not allowed.is_error and len(images(allowed)) >= 1


async def test_a_run_a_model_drives_does_not_start_while_the_screen_is_denied(
    tmp_path: Path,
) -> None:
    from desktop_agent.core.errors import RefusedToStart

    agent = Agent.assemble(
        tmp_path,
        Settings(policies={"screen_snapshot": Policy.DENY}),
        SqliteRunRepository.open(tmp_path),
        observer=FakeObserver(),
        executor=FakeExecutor(),
        check_model=False,
    )
    run = await store_queued(agent, RunRequest("look at the screen"))
    with pytest.raises(RefusedToStart, match="screen_snapshot is denied by policy"):
        await agent.prepare(run)
