"""A desktop tool call from an MCP client is a one-step run through the loop's own gate:
policy, grants, calls that ask every time, the breaker, the stop — and whom it asks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.agent import Agent
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Element,
    Policy,
    RunStatus,
    StepStatus,
    StopReason,
)
from desktop_agent.host.host import Host
from desktop_agent.mcp.calls import CallOutcome, ElementMemory, run_one_call
from desktop_agent.mcp.gate import Asker, McpApprovalGate, SessionGrants
from desktop_agent.settings import Settings
from desktop_agent.store import SqliteRunRepository
from tests.fakes import FakeExecutor, FakeObserver, make_observation

EDIT = Element(1, "text", "Body", (0, 40, 600, 400), focused=True)
DELETE = Element(2, "push button", "Delete", (10, 10, 60, 24))
PASSWORD = Element(3, "password text", "Password", (0, 40, 600, 24), focused=True, password=True)


class Human:
    """A channel to a person: answers in order; None in the answers: nobody there."""

    def __init__(self, answers: Iterable[ApprovalDecision | None] = ()) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []
        self.waiting = asyncio.Event()

    async def __call__(self, approval: ApprovalRequest) -> ApprovalDecision | None:
        self.asked.append(approval)
        if not self.answers:
            self.waiting.set()
            await asyncio.Event().wait()  # never answers
        return self.answers.pop(0)


class Calls:
    """An Agent (real store, fake screen and tools) whose gate is the MCP server's."""

    def __init__(
        self, agent: Agent, executor: FakeExecutor, app: Human, desktop: Human, client: Human
    ) -> None:
        self.agent = agent
        self.host = Host(agent)
        self.executor = executor
        self.app = app
        self.desktop = desktop
        self.client = client
        self.gate = agent.runner.services.gate
        permissions = agent.permissions
        self.asker = Asker(SessionGrants(lambda: permissions.revocations), client)
        self.memory = ElementMemory()

    async def call(self, tool: str, **args: Any) -> CallOutcome:
        assert isinstance(self.gate, McpApprovalGate)
        return await run_one_call(self.host, self.gate, tool, args, self.asker, self.memory)


@pytest.fixture
async def make_calls(tmp_path: Path) -> AsyncIterator[Any]:
    made: list[Calls] = []

    def make(
        elements: Iterable[Element] = (EDIT,),
        *,
        app: Iterable[ApprovalDecision | None] = (None,) * 10,
        desktop: Iterable[ApprovalDecision | None] = (None,) * 10,
        client: Iterable[ApprovalDecision | None] = (),
        policies: Mapping[str, Policy] | None = None,
    ) -> Calls:
        # the client may answer ordinary calls here (`--client-approves`); the desktop is
        # this process's own dialog (None: no display)
        app_human, desktop_human, client_human = Human(app), Human(desktop), Human(client)
        gate = McpApprovalGate(app_human, desktop_human, client_approves=True)
        executor = FakeExecutor()
        agent = Agent.assemble(
            tmp_path,
            Settings(policies=dict(policies or {}), approval_timeout_s=30),
            SqliteRunRepository.open(tmp_path),
            observer=FakeObserver(make_observation(elements)),
            executor=executor,
            gate=gate,
            check_model=False,
        )
        calls = Calls(agent, executor, app_human, desktop_human, client_human)
        made.append(calls)
        return calls

    yield make
    for calls in made:
        await calls.host.close()


async def test_each_call_is_a_run_in_the_history_and_an_allowed_one_acts(make_calls: Any) -> None:
    calls = make_calls(client=[ApprovalDecision.ONCE])

    outcome = await calls.call("type_text", text="hello")

    assert (outcome.run.status, outcome.run.stop_reason) == (RunStatus.COMPLETED, StopReason.DONE)
    assert outcome.run.goal == "MCP: type_text"
    assert [name for name, _ in calls.executor.calls] == ["type_text"]
    stored = await calls.agent.repo.get_run(outcome.run.id)
    assert stored is not None and stored.status is RunStatus.COMPLETED
    assert outcome.run.prompt_tokens == 0 and not outcome.run.tokens_estimated


async def test_a_tool_denied_by_the_settings_policy_asks_nobody_and_does_not_run(
    make_calls: Any,
) -> None:
    calls = make_calls(policies={"click": Policy.DENY})

    outcome = await calls.call("click", x=10, y=10)

    assert outcome.action is not None and outcome.action.status is StepStatus.DENIED
    assert outcome.action.error == "click is denied by policy"
    assert calls.executor.calls == [] and calls.app.asked == [] and calls.client.asked == []


async def test_nobody_to_ask_denies_and_nothing_runs(make_calls: Any) -> None:
    calls = make_calls()  # no app, and a client that cannot be asked
    calls.asker.elicit = None

    outcome = await calls.call("type_text", text="hello")

    assert outcome.run.status is RunStatus.FAILED
    assert outcome.action is not None and outcome.action.status is StepStatus.DENIED
    assert calls.executor.calls == []


async def test_the_apps_answer_is_final_and_the_client_is_not_asked(make_calls: Any) -> None:
    calls = make_calls(app=[ApprovalDecision.DENY], client=[ApprovalDecision.ONCE])

    outcome = await calls.call("click", x=10, y=10)

    assert outcome.action is not None and outcome.action.error == "denied by the user"
    assert len(calls.app.asked) == 1 and calls.client.asked == []
    assert calls.executor.calls == []


async def test_allow_for_this_session_covers_the_tool_but_launch_app_asks_every_time(
    make_calls: Any,
) -> None:
    run_answer = ApprovalDecision.RUN
    calls = make_calls(client=[run_answer], desktop=[run_answer, run_answer])

    await calls.call("click", x=10, y=10)
    await calls.call("click", x=20, y=20)  # the session's grant: not asked
    first = await calls.call("launch_app", command="l3afpad")
    second = await calls.call("launch_app", command="l3afpad")

    assert [a.tool for a in calls.client.asked] == ["click"]
    assert [a.tool for a in calls.desktop.asked] == ["launch_app", "launch_app"]
    assert [a.offer_run_grant for a in calls.desktop.asked] == [False, False]
    assert calls.asker.grants.tools() == frozenset({"click"})
    assert first.run.status is second.run.status is RunStatus.COMPLETED


async def test_a_sensitive_target_and_a_password_field_ask_even_with_a_session_grant(
    make_calls: Any,
) -> None:
    calls = make_calls([DELETE, PASSWORD], desktop=[ApprovalDecision.ONCE] * 2)
    calls.asker.grants.grant("click")
    calls.asker.grants.grant("type_text")

    await calls.call("click", element=2)
    typed = await calls.call("type_text", text="hunter2")

    assert [a.tool for a in calls.desktop.asked] == ["click", "type_text"]
    assert all(a.caution for a in calls.desktop.asked) and calls.client.asked == []
    assert calls.desktop.asked[1].args["text"] == "•••"
    steps = await calls.agent.repo.list_steps(typed.run.id)
    assert "hunter2" not in repr([step.to_json() for step in steps])


async def test_a_stop_all_while_the_client_is_asked_ends_the_call_stopped_and_revokes_grants(
    make_calls: Any,
) -> None:
    calls = make_calls(client=[])  # the client never answers
    calls.asker.grants.grant("scroll")
    call = asyncio.ensure_future(calls.call("type_text", text="hello"))
    await asyncio.wait_for(calls.client.waiting.wait(), 5)

    calls.agent.stop_all()  # the hotkey, the tray, `stop-all`
    outcome = await asyncio.wait_for(call, 5)

    assert (outcome.run.status, outcome.run.stop_reason) == (
        RunStatus.STOPPED,
        StopReason.USER_STOP,
    )
    assert calls.executor.calls == []
    assert calls.asker.grants.tools() == frozenset()


@pytest.mark.parametrize("element", [2, "2"], ids=["number", "string"])  # both element 2
async def test_an_element_that_changed_since_the_clients_screenshot_fails_before_acting(
    make_calls: Any, element: object
) -> None:
    calls = make_calls([DELETE], client=[ApprovalDecision.ONCE])
    calls.memory.remember((Element(2, "push button", "Save", (10, 10, 60, 24)),))

    outcome = await calls.call("click", element=element)

    assert outcome.run.status is RunStatus.FAILED
    assert 'was push button "Save"' in outcome.run.message
    assert "take a new screenshot" in outcome.run.message
    assert calls.executor.calls == [] and calls.client.asked == []


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("click", {"x": 10, "y": 10}),
        ("type_text", {"text": "hello"}),
        ("hotkey", {"keys": ["ctrl", "s"]}),
        ("scroll", {"amount": -3}),
        ("launch_app", {"command": "l3afpad"}),
        ("focus_window", {"title": "Editor"}),
        ("invoke", {"element": 1}),
    ],
)
async def test_every_desktop_tool_runs_its_builtin_with_the_validated_arguments(
    make_calls: Any, tool: str, args: dict[str, Any]
) -> None:
    calls = make_calls(client=[ApprovalDecision.ONCE], desktop=[ApprovalDecision.ONCE])

    outcome = await calls.call(tool, **args)

    assert outcome.run is not None and outcome.run.status is RunStatus.COMPLETED
    [(ran, validated)] = calls.executor.calls
    assert ran == tool
    assert validated.model_dump(exclude_defaults=True).items() >= args.items()
    # input and dangerous tools ask: launch_app only the person at this desktop
    asked = [a.tool for a in (*calls.client.asked, *calls.desktop.asked)]
    assert asked == [tool]


async def test_a_stop_of_one_call_while_the_client_is_asked_revokes_the_sessions_grants(
    make_calls: Any,
) -> None:
    # the user stops this one run (the API's stop, the window): the grants the session lends
    # every run it starts go with it, as a stop-all's would
    calls = make_calls(client=[])  # the client never answers
    calls.asker.grants.grant("scroll")
    call = asyncio.ensure_future(calls.call("type_text", text="hello"))
    await asyncio.wait_for(calls.client.waiting.wait(), 5)

    [run_id] = calls.agent.runner.active_ids
    calls.host.stop(run_id)
    outcome = await asyncio.wait_for(call, 5)

    assert outcome.run.stop_reason is StopReason.USER_STOP
    assert calls.executor.calls == []
    assert calls.asker.grants.tools() == frozenset()
