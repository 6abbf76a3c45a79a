"""McpApprovalGate asks where a person is: the app, else the calling client, else it denies."""

from __future__ import annotations

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Risk
from desktop_agent.mcp.gate import Asker, McpApprovalGate, SessionGrants


def approval(tool: str = "click", *, grantable: bool = True) -> ApprovalRequest:
    return ApprovalRequest("a1", "r1", 1, tool, {}, "", Risk.INPUT, grantable, 60)


class Channel:
    def __init__(self, answer: ApprovalDecision | None | Exception) -> None:
        self.answer = answer
        self.asked = 0

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision | None:
        self.asked += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def lent(gate: McpApprovalGate, client: Channel | None, stops: list[int]) -> Asker:
    asker = Asker(SessionGrants(lambda: stops[0]), client)
    gate.lend("r1", asker)
    return asker


async def test_without_an_app_the_calling_client_is_asked_where_the_user_let_it() -> None:
    app, client = Channel(None), Channel(ApprovalDecision.ONCE)
    gate = McpApprovalGate(app, client_approves=True)
    lent(gate, client, [0])

    assert await gate.request(approval()) is ApprovalDecision.ONCE
    assert (app.asked, client.asked) == (1, 1)


async def test_nobody_to_ask_is_a_denial_never_an_approval() -> None:
    for client in (None, Channel(None), Channel(RuntimeError("client gone"))):
        gate = McpApprovalGate(Channel(RuntimeError("app gone")))
        lent(gate, client, [0])
        assert await gate.request(approval()) is ApprovalDecision.DENY


async def test_a_run_not_lent_to_any_call_asks_only_the_app() -> None:
    gate = McpApprovalGate(Channel(None))
    assert await gate.request(approval()) is ApprovalDecision.DENY


async def test_allow_for_the_session_grants_only_where_a_grant_is_offered() -> None:
    stops = [0]
    gate = McpApprovalGate(Channel(None), Channel(ApprovalDecision.RUN), client_approves=True)
    asker = lent(gate, Channel(ApprovalDecision.RUN), stops)

    assert await gate.request(approval("launch_app", grantable=False)) is ApprovalDecision.ONCE
    assert asker.grants.tools() == frozenset()
    assert await gate.request(approval("click")) is ApprovalDecision.RUN
    assert asker.grants.tools() == frozenset({"click"})

    stops[0] += 1  # a stop-all
    assert asker.grants.tools() == frozenset()


async def test_a_taken_back_run_is_no_longer_asked_through_its_call() -> None:
    gate = McpApprovalGate(Channel(None))
    client = Channel(ApprovalDecision.ONCE)
    take_back = gate.lend("r1", Asker(SessionGrants(lambda: 0), client))
    take_back()

    assert await gate.request(approval()) is ApprovalDecision.DENY
    assert client.asked == 0


async def test_a_providers_safety_check_is_never_the_clients_to_acknowledge() -> None:
    from dataclasses import replace

    from desktop_agent.core.models import SafetyCheck

    client, here = Channel(ApprovalDecision.ONCE), Channel(ApprovalDecision.DENY)
    gate = McpApprovalGate(Channel(None), here, client_approves=True)
    lent(gate, client, [0])
    checked = replace(approval(), safety_check=SafetyCheck("sc_1", "irrelevant_domain", "away"))

    assert await gate.request(checked) is ApprovalDecision.DENY
    assert (client.asked, here.asked) == (0, 1)
