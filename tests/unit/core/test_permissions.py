"""Permissions (policy, task and persistent grants) and the ApprovalBroker gate."""

from __future__ import annotations

import asyncio

import pytest

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Policy, Risk
from desktop_agent.core.permissions import ApprovalBroker, Permissions
from desktop_agent.core.ports import PermissionGate
from tests.fakes import ScriptedPlanner, done, tool
from tests.unit.core.conftest import make_harness


def request(approval_id: str, *, offer_run_grant: bool = True) -> ApprovalRequest:
    return ApprovalRequest(
        id=approval_id,
        run_id="run1",
        index=1,
        tool="click" if offer_run_grant else "launch_app",
        args={"x": 1, "y": 2},
        reason="press Save",
        risk=Risk.INPUT if offer_run_grant else Risk.DANGEROUS,
        offer_run_grant=offer_run_grant,
        timeout_s=60,
    )


# ── Permissions ──────────────────────────────────────────────────────────────


def test_default_policy_allows_safe_tools_and_asks_for_input_and_dangerous_ones() -> None:
    permissions = Permissions()
    assert permissions.decide("r", "wait", Risk.SAFE) is Policy.ALLOW
    assert permissions.decide("r", "click", Risk.INPUT) is Policy.ASK
    assert permissions.decide("r", "launch_app", Risk.DANGEROUS) is Policy.ASK


def test_a_policy_per_tool_overrides_the_default() -> None:
    permissions = Permissions({"click": Policy.ALLOW, "wait": Policy.DENY})
    assert permissions.decide("r", "click", Risk.INPUT) is Policy.ALLOW
    assert permissions.decide("r", "wait", Risk.SAFE) is Policy.DENY
    permissions.set_policy("click", Policy.DENY)
    assert permissions.decide("r", "click", Risk.INPUT) is Policy.DENY


def test_a_task_grant_allows_the_tool_in_its_run_only_until_revoked() -> None:
    permissions = Permissions()
    permissions.grant_for_run("r1", "click")
    assert permissions.decide("r1", "click", Risk.INPUT) is Policy.ALLOW
    assert permissions.decide("r2", "click", Risk.INPUT) is Policy.ASK
    assert permissions.decide("r1", "type_text", Risk.INPUT) is Policy.ASK
    permissions.revoke_run("r1")
    assert permissions.decide("r1", "click", Risk.INPUT) is Policy.ASK


def test_revoking_all_task_grants_keeps_persistent_grants() -> None:
    permissions = Permissions(persistent_grants=["scroll"])
    permissions.grant_for_run("r1", "click")
    permissions.grant_for_run("r2", "hotkey")
    permissions.revoke_all_task_grants()
    assert permissions.task_grants("r1") == frozenset()
    assert permissions.task_grants("r2") == frozenset()
    assert permissions.decide("r1", "click", Risk.INPUT) is Policy.ASK
    assert permissions.decide("r3", "scroll", Risk.INPUT) is Policy.ALLOW
    assert permissions.persistent_grants == {"scroll"}
    permissions.revoke_persistent("scroll")
    assert permissions.decide("r3", "scroll", Risk.INPUT) is Policy.ASK


def test_no_grant_covers_a_dangerous_tool_or_a_sensitive_call() -> None:
    permissions = Permissions(persistent_grants=["launch_app", "type_text"])
    permissions.grant_for_run("r1", "launch_app")
    permissions.grant_for_run("r1", "type_text")
    assert permissions.decide("r1", "launch_app", Risk.DANGEROUS) is Policy.ASK
    assert permissions.decide("r1", "type_text", Risk.INPUT) is Policy.ALLOW
    assert permissions.decide("r1", "type_text", Risk.INPUT, sensitive=True) is Policy.ASK


def test_a_deny_policy_holds_even_for_a_granted_tool() -> None:
    permissions = Permissions({"click": Policy.DENY}, persistent_grants=["click"])
    permissions.grant_for_run("r1", "click")
    assert permissions.decide("r1", "click", Risk.INPUT) is Policy.DENY


# ── ApprovalBroker ───────────────────────────────────────────────────────────


def test_the_broker_is_a_permission_gate() -> None:
    assert isinstance(ApprovalBroker(), PermissionGate)


async def test_listeners_hear_each_request_and_resolve_answers_it() -> None:
    broker = ApprovalBroker()
    heard: list[ApprovalRequest] = []
    broker.subscribe(heard.append)
    pending = asyncio.create_task(broker.request(request("a1")))
    await asyncio.sleep(0)
    assert [item.id for item in heard] == ["a1"]
    assert [item.id for item in broker.pending] == ["a1"]

    assert broker.resolve("a1", ApprovalDecision.RUN) is True
    assert await pending is ApprovalDecision.RUN
    assert broker.pending == []
    assert broker.resolve("a1", ApprovalDecision.DENY) is False  # answered already


async def test_a_listener_can_answer_from_inside_its_callback() -> None:
    broker = ApprovalBroker()

    def answer(item: ApprovalRequest) -> None:
        broker.resolve(item.id, ApprovalDecision.DENY)

    broker.subscribe(answer)
    assert await broker.request(request("a1")) is ApprovalDecision.DENY


async def test_run_is_downgraded_to_once_when_a_run_grant_was_not_offered() -> None:
    broker = ApprovalBroker()
    pending = asyncio.create_task(broker.request(request("a1", offer_run_grant=False)))
    await asyncio.sleep(0)
    assert broker.resolve("a1", ApprovalDecision.RUN)
    assert await pending is ApprovalDecision.ONCE


async def test_resolving_an_unknown_request_says_false() -> None:
    assert ApprovalBroker().resolve("nope", ApprovalDecision.ONCE) is False


async def test_an_unsubscribed_listener_hears_nothing_more() -> None:
    broker = ApprovalBroker()
    heard: list[str] = []
    unsubscribe = broker.subscribe(lambda item: heard.append(item.id))
    first = asyncio.create_task(broker.request(request("a1")))
    await asyncio.sleep(0)
    unsubscribe()
    second = asyncio.create_task(broker.request(request("a2")))
    await asyncio.sleep(0)
    assert heard == ["a1"]
    broker.resolve("a1", ApprovalDecision.ONCE)
    broker.resolve("a2", ApprovalDecision.ONCE)
    assert list(await asyncio.gather(first, second)) == [ApprovalDecision.ONCE] * 2


async def test_a_cancelled_request_leaves_no_pending_approval() -> None:
    broker = ApprovalBroker()
    pending = asyncio.create_task(broker.request(request("a1")))
    await asyncio.sleep(0)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert broker.pending == []
    assert broker.resolve("a1", ApprovalDecision.ONCE) is False


async def test_a_request_that_times_out_leaves_no_pending_approval() -> None:
    broker = ApprovalBroker()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await broker.request(request("a1"))
    assert broker.pending == []


def test_ids_are_unique_per_broker() -> None:
    broker = ApprovalBroker()
    assert [broker.next_id() for _ in range(3)] == ["a1", "a2", "a3"]


async def test_the_loop_asks_through_the_broker_and_honours_its_answer() -> None:
    h = make_harness()
    broker = ApprovalBroker()
    h.runner.services.gate = broker
    answers = iter([ApprovalDecision.RUN, ApprovalDecision.DENY])
    heard: list[ApprovalRequest] = []

    def answer(item: ApprovalRequest) -> None:
        heard.append(item)
        broker.resolve(item.id, next(answers))

    broker.subscribe(answer)
    run = await h.create()
    planner = ScriptedPlanner(
        [
            tool("click", x=1, y=1),
            tool("click", x=2, y=2),  # granted for the run: not asked
            tool("launch_app", command="xterm"),  # dangerous: asked, and denied
            done(),
        ]
    )
    await h.collect(run, planner)
    assert [item.tool for item in heard] == ["click", "launch_app"]
    assert len({item.id for item in heard}) == 2
    assert [name for name, _ in h.executor.calls] == ["click", "click"]
    assert broker.pending == []


# ── the agent cannot widen its own permissions (issue #15 item 5) ────────────


def test_an_allow_policy_never_covers_a_dangerous_call() -> None:
    """The settings promise "dangerous: asks at every call"; an `allow` policy or a persistent
    grant of launch_app must not turn that into a silent start of any program."""
    permissions = Permissions({"launch_app": Policy.ALLOW}, persistent_grants=["launch_app"])
    assert permissions.decide("r", "launch_app", Risk.DANGEROUS) is Policy.ASK
    assert permissions.for_run("r").decide("launch_app", Risk.DANGEROUS) is Policy.ASK
    permissions.set_policy("launch_app", Policy.DENY)
    assert permissions.decide("r", "launch_app", Risk.DANGEROUS) is Policy.DENY


async def test_an_allow_policy_for_launch_app_still_asks_in_a_run() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN], policies={"launch_app": Policy.ALLOW})
    run = await h.create()
    planner = ScriptedPlanner([tool("launch_app", command="xterm"), done()])
    await h.collect(run, planner)
    assert [(r.tool, r.offer_run_grant) for r in h.gate.requests] == [("launch_app", False)]


async def test_a_policy_changed_during_a_run_applies_to_the_next_run() -> None:
    """With click and hotkey grants the agent could open the settings and allow a tool; the
    running run keeps the policies it started with."""
    h = make_harness(answers=[ApprovalDecision.ONCE, ApprovalDecision.ONCE])

    async def allow_click_meanwhile(_request: object) -> object:
        h.permissions.set_policy("click", Policy.ALLOW)
        h.permissions.grant_persistent("type_text")
        return tool("click", x=1, y=1)

    run = await h.create()
    planner = ScriptedPlanner(
        [allow_click_meanwhile, tool("type_text", text="x"), done()]  # type: ignore[list-item]
    )
    await h.collect(run, planner)
    assert [r.tool for r in h.gate.requests] == ["click", "type_text"]

    second = await h.create()
    await h.collect(second, ScriptedPlanner([tool("click", x=1, y=1), done()]))
    assert [r.tool for r in h.gate.requests] == ["click", "type_text"]  # nothing more asked
