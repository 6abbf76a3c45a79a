"""Who may run which tool: per-tool policy, task grants, persistent grants, and approvals."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterable, Mapping

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Policy, Risk

DEFAULT_POLICY: dict[Risk, Policy] = {
    Risk.SAFE: Policy.ALLOW,
    Risk.INPUT: Policy.ASK,
    Risk.DANGEROUS: Policy.ASK,
}


def decide_policy(policy: Policy, risk: Risk, *, sensitive: bool, granted: bool) -> Policy:
    """Allow / ask / deny for one call. Only `deny` is stronger than a call that asks every
    time: a dangerous tool, or a sensitive call (core/call_risk.py) asks before an `allow`
    policy and every grant; an ordinary call is allowed by its policy or a grant."""
    if policy is Policy.DENY:
        return policy
    if sensitive or risk is Risk.DANGEROUS:
        return Policy.ASK
    if policy is Policy.ALLOW or granted:
        return Policy.ALLOW
    return Policy.ASK


class Permissions:
    """Decides allow / ask / deny for a tool call.

    Task grants last for one run and are revoked by stop_all; persistent grants
    outlive the process (the caller stores them). A dangerous tool is never
    covered by a grant nor by an `allow` policy: it asks at every call. A sensitive call
    (core/call_risk.py) asks at every call likewise. A run decides by `for_run`: the
    policies and persistent grants as they were when it started.
    """

    def __init__(
        self,
        policies: Mapping[str, Policy] | None = None,
        persistent_grants: Iterable[str] = (),
    ) -> None:
        self._policies = dict(policies or {})
        self._task_grants: dict[str, set[str]] = {}
        self._persistent = set(persistent_grants)
        #: how many times every task grant was revoked (stop-all): grants kept elsewhere for
        #: a run not started yet (an MCP session's) end with them
        self.revocations = 0

    def set_policy(self, tool: str, policy: Policy) -> None:
        self._policies[tool] = policy

    def policy(self, tool: str, risk: Risk) -> Policy:
        return self._policies.get(tool, DEFAULT_POLICY[risk])

    def decide(self, run_id: str, tool: str, risk: Risk, *, sensitive: bool = False) -> Policy:
        """By the policies and grants of this moment; `sensitive` marks a call that asks
        every time (a password field, a launcher key, a line into a terminal)."""
        granted = tool in self._persistent or tool in self._task_grants.get(run_id, set())
        return decide_policy(self.policy(tool, risk), risk, sensitive=sensitive, granted=granted)

    def for_run(self, run_id: str) -> RunPermissions:
        """The permissions one run decides by, frozen at its start (see RunPermissions)."""
        return RunPermissions(self, run_id)

    def grant_for_run(self, run_id: str, tool: str) -> None:
        self._task_grants.setdefault(run_id, set()).add(tool)

    def task_grants(self, run_id: str) -> frozenset[str]:
        return frozenset(self._task_grants.get(run_id, set()))

    def revoke_run(self, run_id: str) -> None:
        self._task_grants.pop(run_id, None)

    def revoke_all_task_grants(self) -> None:
        self._task_grants.clear()
        self.revocations += 1

    def grant_persistent(self, tool: str) -> None:
        self._persistent.add(tool)

    def revoke_persistent(self, tool: str) -> None:
        self._persistent.discard(tool)

    @property
    def persistent_grants(self) -> frozenset[str]:
        return frozenset(self._persistent)


class RunPermissions:
    """One run's permissions: the policies and persistent grants as they were at its start,
    so a change made while it runs (the settings dialog — which the agent itself might reach)
    applies to the next run; the run's own task grants live in the shared Permissions, where
    stop_all revokes them."""

    def __init__(self, shared: Permissions, run_id: str) -> None:
        self._shared = shared
        self.run_id = run_id
        self._policies = dict(shared._policies)
        self._persistent = frozenset(shared._persistent)

    def policy(self, tool: str, risk: Risk) -> Policy:
        return self._policies.get(tool, DEFAULT_POLICY[risk])

    def decide(self, tool: str, risk: Risk, *, sensitive: bool = False) -> Policy:
        granted = tool in self._persistent or tool in self._shared.task_grants(self.run_id)
        return decide_policy(self.policy(tool, risk), risk, sensitive=sensitive, granted=granted)

    def grant_for_run(self, tool: str) -> None:
        self._shared.grant_for_run(self.run_id, tool)


class ApprovalBroker:
    """A PermissionGate whose questions anyone may answer: a dialog, a terminal, an API client.

    Listeners hear of every new request (to open a dialog); `resolve` answers it.
    The loop awaits the answer with a timeout that denies.
    """

    def __init__(self) -> None:
        self._pending: dict[str, tuple[ApprovalRequest, asyncio.Future[ApprovalDecision]]] = {}
        self._listeners: list[Callable[[ApprovalRequest], None]] = []
        self._ids = itertools.count(1)

    def next_id(self) -> str:
        return f"a{next(self._ids)}"

    def subscribe(self, listener: Callable[[ApprovalRequest], None]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    @property
    def pending(self) -> list[ApprovalRequest]:
        return [request for request, _ in self._pending.values()]

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._pending[approval.id] = (approval, future)
        try:
            for listener in list(self._listeners):
                listener(approval)
            return await future
        finally:
            self._pending.pop(approval.id, None)

    def resolve(self, approval_id: str, decision: ApprovalDecision) -> bool:
        entry = self._pending.get(approval_id)
        if entry is None or entry[1].done():
            return False
        request, future = entry
        if decision is ApprovalDecision.RUN and not request.offer_run_grant:
            decision = ApprovalDecision.ONCE
        future.set_result(decision)
        return True
