"""Where an MCP call's approval is asked: a person at this desktop (the app's dialog, else the
same dialog shown by this process), the MCP client only where the user allowed it, else nobody —
and then it is denied, never approved by itself.

`McpApprovalGate` is the PermissionGate of the `desktop-agent mcp` process: the loop's own
gate (core/loop.py) decides *whether* to ask, exactly as for any run; this only decides
*whom*. The MCP call that started a run lends it its asker for the run's lifetime.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, RunView, StopReason
from desktop_agent.host.person import AskHuman, app_asker, first_of

__all__ = ["AskHuman", "Asker", "McpApprovalGate", "SessionGrants", "app_asker"]

log = logging.getLogger(__name__)


class SessionGrants:
    """The tools the user allowed "for this session" of one MCP client.

    Each call is a run of its own, so a run grant would cover nothing: the session's grants
    are lent to each run it starts (`Permissions.grant_for_run`), where the loop's gate
    weighs them as it weighs any run grant — never for a dangerous tool (launch_app) nor for
    a call that asks every time. A stop-all (hotkey, tray, `stop-all`) revokes them, as it
    revokes every run grant.
    """

    def __init__(self, revocations: Callable[[], int]) -> None:
        """`revocations`: how many times every task grant was revoked so far
        (`Permissions.revocations`)."""
        self._revocations = revocations
        self._since = revocations()
        self._tools: set[str] = set()

    def mark(self) -> int:
        """Where the revocations stand now: note it when a question is asked, give it to
        `grant` with the answer."""
        return self._revocations()

    def after(self, run: RunView | None) -> None:
        """A run of the session ended: a user's stop of it (its own stop from the API, the
        window or the hotkey, not the client's cancellation, which never gets here) revokes
        the session's grants."""
        if run is not None and run.stop_reason is StopReason.USER_STOP:
            self.revoke()

    def grant(self, tool: str, *, asked_at: int | None = None) -> None:
        """Allow `tool` for the session; not when a stop-all came since `asked_at` (the answer
        was on its way as every grant was revoked: it grants nothing)."""
        self._fresh()
        if asked_at is not None and asked_at != self._revocations():
            return
        self._tools.add(tool)

    def tools(self) -> frozenset[str]:
        self._fresh()
        return frozenset(self._tools)

    def revoke(self) -> None:
        """Every grant of the session goes: the user stopped one of its runs (a stop revokes
        the task-level grants it reaches, as a run's end revokes the run's)."""
        self._tools.clear()

    def _fresh(self) -> None:
        now = self._revocations()
        if now != self._since:
            self._since = now
            self._tools.clear()


@dataclass
class Asker:
    """What one MCP call lends the runs it starts: its client's user, and its session's grants."""

    grants: SessionGrants
    #: elicitation to the client; None when the client cannot be asked
    elicit: AskHuman | None = None
    asked: list[ApprovalRequest] = field(default_factory=list)
    #: questions nobody could be asked (so they were denied)
    unasked: int = 0


class McpApprovalGate:
    """The PermissionGate of the MCP server: a person at this desktop, the client only where
    the user allowed it, else deny.

    `ask_app` asks the desktop app running on the same data dir (through the instance
    registry and its API); `ask_desktop` shows the app's approval dialog from this process
    (host/person.py). Each answers None when it could not ask (no app, no display). The MCP
    client cannot be told from a program that accepts every question, so its elicitation
    answers only when `client_approves` (the user's `--client-approves`) and only ordinary
    input calls; a call that asks every time never reaches it. The first answer is final.
    """

    def __init__(
        self,
        ask_app: AskHuman,
        ask_desktop: AskHuman | None = None,
        *,
        client_approves: bool = False,
    ) -> None:
        self._ask_app = ask_app
        self._ask_desktop = ask_desktop
        self.client_approves = client_approves
        self._askers: dict[str, Asker] = {}

    def lend(self, run_id: str, asker: Asker) -> Callable[[], None]:
        """The run `run_id` asks through `asker` until the returned call takes it back."""
        self._askers[run_id] = asker

        def take_back() -> None:
            self._askers.pop(run_id, None)

        return take_back

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        asker = self._askers.get(approval.run_id)
        if asker is not None:
            asker.asked.append(approval)
        asked_at = asker.grants.mark() if asker is not None else 0
        decision = await self._first_answer(approval, asker)
        if decision is ApprovalDecision.RUN and not approval.offer_run_grant:
            decision = ApprovalDecision.ONCE  # a call that asks every time grants nothing
        if decision is ApprovalDecision.RUN and asker is not None:
            asker.grants.grant(approval.tool, asked_at=asked_at)
        return decision

    async def ask_person(self, approval: ApprovalRequest) -> ApprovalDecision | None:
        """Ask a person at this desktop only (the app, else this process's dialog), never a
        client: for what leaves this process (the screen, docs/settings.md). None when nobody
        could be asked."""
        return await first_of(self._person_channels(), approval)

    def _person_channels(self) -> list[AskHuman]:
        return [self._ask_app, *([self._ask_desktop] if self._ask_desktop is not None else [])]

    async def _first_answer(
        self, approval: ApprovalRequest, asker: Asker | None
    ) -> ApprovalDecision:
        channels = self._person_channels()
        client = asker.elicit if asker is not None and self.client_approves else None
        if client is not None and not approval.only_a_person_answers:
            channels.insert(1, client)  # the user chose the client for these, after the app
        answer = await first_of(channels, approval)
        if answer is not None:
            return answer
        if asker is not None:
            asker.unasked += 1
        return ApprovalDecision.DENY
