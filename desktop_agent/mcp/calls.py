"""A desktop tool call from an MCP client as a one-step run: the loop's own turn, gate included.

The client has decided already, so the run's planner is `OneCall`: its first turn answers with
the client's call (or, for `screenshot`, with "done" on the observation), its second turn says
how the call went. Everything between — the observation the gate judges, the allowed tools,
the breaker, the policy, the questions that ask every time, the stop — is the loop's own code
(core/loop.py), exactly as for a run the model drives. Each call is a run of its own in the
history ("MCP: click"), so it can be read, replayed and stopped like any other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from desktop_agent.core.errors import ToolError
from desktop_agent.core.events import RunFinished, StartRefused, StepFinished, TaskLoopEvent
from desktop_agent.core.models import (
    Decision,
    Element,
    Observation,
    RunView,
    StepKind,
    StepStatus,
    StepView,
    TokenUsage,
)
from desktop_agent.core.ports import DecideRequest
from desktop_agent.host.host import RunRequest
from desktop_agent.mcp.gate import Asker, McpApprovalGate

if TYPE_CHECKING:
    from desktop_agent.host.host import Host, HostedRun

OBSERVE_ONLY = "screen_snapshot"
#: what decided the calls, in the run's model column
CALLER = "MCP client"
#: no model was asked: the run's token count stays 0 (not an estimate)
_NO_TOKENS = TokenUsage(prompt_tokens=0, completion_tokens=0)


class ElementMemory:
    """The elements of the last screenshot one MCP session was given, by id.

    A call naming an element that is something else on the screen now (the ids are those of
    a fresh inventory) fails before it acts, and says to take a new screenshot.
    """

    def __init__(self) -> None:
        self._seen: dict[int, tuple[str, str]] = {}

    def remember(self, elements: tuple[Element, ...]) -> None:
        self._seen = {element.id: (element.role, element.name) for element in elements}

    def changed(self, element_id: int, now: Observation) -> str | None:
        """Why `element_id` is not what the client saw; None when it is (or none was seen)."""
        seen = self._seen.get(element_id)
        if seen is None:
            return None
        current = now.element(element_id)
        if current is not None and (current.role, current.name) == seen:
            return None
        was = f'{seen[0]} "{seen[1]}"'
        is_now = f'{current.role} "{current.name}"' if current else "gone"
        return (
            f"element {element_id} was {was} in your last screenshot and is {is_now} now: "
            "take a new screenshot"
        )


class OneCall:
    """The planner of a one-step run (see the module docstring).

    Attributes:
        observation: the screen the call was judged and done on (turn 1's).
    """

    def __init__(self, tool: str, args: dict[str, Any], memory: ElementMemory) -> None:
        self.tool = tool
        self.args = args
        self.memory = memory
        self.observation: Observation | None = None

    async def decide(self, request: DecideRequest) -> Decision:
        if request.turn > 1:
            return _outcome(request.steps)
        self.observation = request.observation
        if self.tool == OBSERVE_ONLY:
            shown = request.observation
            message = f"screenshot {shown.width}x{shown.height}, {len(shown.elements)} elements"
            return Decision("done", message=message, usage=_NO_TOKENS)
        element = self.args.get("element")
        stale = None
        if isinstance(element, int) and not isinstance(element, bool):
            stale = self.memory.changed(element, request.observation)
        if stale is not None:
            return Decision("fail", reason=stale, usage=_NO_TOKENS)
        return Decision(
            "tool",
            tool=self.tool,
            args=dict(self.args),
            reason="called by the MCP client",
            usage=_NO_TOKENS,
        )


def _as_it_runs(host: Host, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments as the loop will validate them (`"element": "2"` is element 2), so the
    check of the client's element judges the element that is acted on; arguments that do not
    validate go on as they are, for the loop to refuse with its one line."""
    try:
        _, validated = host.registry.validate(tool, args)
    except ToolError:
        return args
    return validated.model_dump(exclude_unset=True)


def _outcome(steps: Sequence[StepView]) -> Decision:
    action = last_action(steps)
    if action is not None and action.status is StepStatus.OK:
        return Decision("done", message=action.summary, usage=_NO_TOKENS)
    why = action.error if action is not None and action.error else "the call did not run"
    return Decision("fail", reason=why, usage=_NO_TOKENS)


def last_action(steps: Sequence[StepView]) -> StepView | None:
    for step in reversed(steps):
        if step.kind is StepKind.ACTION:
            return step
    return None


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """How one run an MCP call followed went: its end (None when its start was refused, and
    then `refused` says why), its last action row (None for a screenshot or a call that never
    acted), and the observation a one-step call was judged on."""

    run: RunView | None
    action: StepView | None = None
    observation: Observation | None = None
    refused: str = ""


EventSink = Callable[[TaskLoopEvent], Awaitable[None]]


async def follow(host: Host, hosted: HostedRun, on_event: EventSink | None = None) -> CallOutcome:
    """Read a hosted run's events to its end for the MCP call that started it. The call owns
    the run: a call that goes away (the client cancelled it, or left) stops it."""
    run, action, refused = None, None, ""
    try:
        async for event in hosted.events():
            if on_event is not None:
                await on_event(event)
            if isinstance(event, StepFinished) and event.step.kind is StepKind.ACTION:
                action = event.step
            elif isinstance(event, RunFinished):
                run = event.run
            elif isinstance(event, StartRefused):
                refused = event.reason
    finally:
        if run is None and not refused:
            host.stop(hosted.run_id)
    return CallOutcome(run, action, refused=refused)


async def run_one_call(
    host: Host,
    gate: McpApprovalGate,
    tool: str,
    args: dict[str, Any],
    asker: Asker,
    memory: ElementMemory,
    on_event: EventSink | None = None,
) -> CallOutcome:
    """Run `tool(args)` as a one-step run the host owns (stoppable like any run) through the
    loop's gate; the approvals it needs go to `asker`'s channels through `gate`."""
    request = RunRequest(
        goal=f"MCP: {tool}",
        model=CALLER,
        max_steps=2,
        max_failures=1,  # a call that is refused or fails ends its run at once
        allowed_tools=(tool,),
    )
    for granted in asker.grants.tools():
        host.permissions.grant_for_run(request.run_id, granted)
    planner = OneCall(tool, _as_it_runs(host, tool, args), memory)
    take_back = gate.lend(request.run_id, asker)
    try:
        outcome = await follow(host, host.start(request, planner=planner), on_event)
    finally:
        take_back()
    asker.grants.after(outcome.run)
    return replace(outcome, observation=planner.observation)
