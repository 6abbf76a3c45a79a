"""The TaskLoopEvent union: everything the engine tells a face (window, CLI, API), live or replayed.

A run's own events (run_started … run_finished) come from the loop; the host adds what
happens around runs (a start refused, a stop of everything, the run's totals), so every
face follows one stream and needs no side channel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, RunView, StepView
from desktop_agent.core.text import printable_json


@dataclass(frozen=True, slots=True)
class RunStarted:
    run: RunView
    type: Literal["run_started"] = "run_started"


@dataclass(frozen=True, slots=True)
class StepStarted:
    step: StepView
    type: Literal["step_started"] = "step_started"


@dataclass(frozen=True, slots=True)
class StepFinished:
    step: StepView
    type: Literal["step_finished"] = "step_finished"


#: why a run paused: someone asked (window, tray, API), or the user took over the desktop
PauseReason = Literal["request", "user"]


@dataclass(frozen=True, slots=True)
class RunPaused:
    run: RunView
    reason: PauseReason = "request"
    type: Literal["run_paused"] = "run_paused"


@dataclass(frozen=True, slots=True)
class RunResumed:
    run: RunView
    type: Literal["run_resumed"] = "run_resumed"


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    approval: ApprovalRequest
    type: Literal["approval_requested"] = "approval_requested"


@dataclass(frozen=True, slots=True)
class ApprovalResolved:
    approval: ApprovalRequest
    decision: ApprovalDecision
    by: str = "user"
    type: Literal["approval_resolved"] = "approval_resolved"


@dataclass(frozen=True, slots=True)
class RunFinished:
    run: RunView
    type: Literal["run_finished"] = "run_finished"


@dataclass(frozen=True, slots=True)
class RunTotals:
    """The run's model tokens and cost after a turn (the window's totals; no store read)."""

    run_id: str
    prompt_tokens: int
    completion_tokens: int
    tokens_estimated: bool
    cost: float | None
    type: Literal["run_totals"] = "run_totals"


@dataclass(frozen=True, slots=True)
class StartRefused:
    """A run was refused before it started (its model does not answer or cannot see, …);
    `reason` is one line, `advice` the way forward when there is one (a model server found
    on this machine, how to get one). The run is forgotten, or stays queued (the API's)."""

    run_id: str
    reason: str
    advice: str = ""
    type: Literal["start_refused"] = "start_refused"


@dataclass(frozen=True, slots=True)
class StoppedEverything:
    """Stop-everything was carried out: runs stopped in this process and in the other
    instances on the data dir."""

    here: int
    elsewhere: int
    type: Literal["stopped_everything"] = "stopped_everything"


@dataclass(frozen=True, slots=True)
class StopHotkeyChanged:
    """Whether the global stop hotkey is armed now, and why not (one line; "" when armed):
    said when it is grabbed (or could not be) and when its listener ends by itself."""

    armed: bool
    why: str
    type: Literal["stop_hotkey_changed"] = "stop_hotkey_changed"


@dataclass(frozen=True, slots=True)
class UserTookOver:
    """The user's own mouse or keyboard input asked this run to pause (at once, while a
    model request may still be on its way); `RunPaused(reason="user")` follows when the run
    reaches its pause point. It resumes when the user says so."""

    run_id: str
    type: Literal["user_took_over"] = "user_took_over"


@dataclass(frozen=True, slots=True)
class TakeoverUnavailable:
    """The user's own input cannot be watched (no XInput 2, hooks refused, …): runs go on
    unpaused by it; said once per process."""

    why: str
    type: Literal["takeover_unavailable"] = "takeover_unavailable"


TaskLoopEvent = (
    RunStarted
    | StepStarted
    | StepFinished
    | RunPaused
    | RunResumed
    | ApprovalRequested
    | ApprovalResolved
    | RunFinished
    | RunTotals
    | StartRefused
    | StoppedEverything
    | StopHotkeyChanged
    | UserTookOver
    | TakeoverUnavailable
)


def event_run_id(event: TaskLoopEvent) -> str:
    """The run an event is about; "" for one about every run (stopped_everything)."""
    if isinstance(event, StepStarted | StepFinished):
        return event.step.run_id
    if isinstance(event, ApprovalRequested | ApprovalResolved):
        return event.approval.run_id
    if isinstance(event, RunTotals | StartRefused | UserTookOver):
        return event.run_id
    if isinstance(event, StoppedEverything | StopHotkeyChanged | TakeoverUnavailable):
        return ""
    return event.run.id


def event_line(event: TaskLoopEvent) -> str:
    """The event's JSON on one line, as the CLI's `--json` prints it and the API's SSE frame
    carries it (`data:`), the same text for both: characters that would act on a terminal
    (the screen's and the model's text) are JSON \\u escapes, the same value for a parser."""
    return printable_json(json.dumps(event_to_json(event), ensure_ascii=False))


def event_to_json(event: TaskLoopEvent) -> dict[str, Any]:
    """The JSON of one event, as the CLI's `--json` lines and the API's SSE frames carry it."""
    body: dict[str, Any] = {"type": event.type, "run_id": event_run_id(event)}
    if isinstance(event, StepStarted | StepFinished):
        body["step"] = event.step.to_json()
    elif isinstance(event, ApprovalRequested):
        body["approval"] = event.approval.to_json()
    elif isinstance(event, ApprovalResolved):
        body["approval"] = {
            **event.approval.to_json(),
            "decision": event.decision.value,
            "by": event.by,
        }
    elif isinstance(event, RunTotals):
        body.update(
            prompt_tokens=event.prompt_tokens,
            completion_tokens=event.completion_tokens,
            tokens_estimated=event.tokens_estimated,
            cost=event.cost,
        )
    elif isinstance(event, StartRefused):
        body.update(reason=event.reason, advice=event.advice)
    elif isinstance(event, StoppedEverything):
        del body["run_id"]
        body.update(here=event.here, elsewhere=event.elsewhere)
    elif isinstance(event, StopHotkeyChanged):
        del body["run_id"]
        body.update(armed=event.armed, why=event.why)
    elif isinstance(event, TakeoverUnavailable):
        del body["run_id"]
        body["why"] = event.why
    elif isinstance(event, UserTookOver):
        pass  # the run id says it all
    else:
        body["run"] = event.run.to_json()
        if isinstance(event, RunPaused):
            body["reason"] = event.reason
    return body
