"""The TaskLoopEvent union: what a run tells its consumer, live or replayed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, RunView, StepView


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


@dataclass(frozen=True, slots=True)
class RunPaused:
    run: RunView
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


TaskLoopEvent = (
    RunStarted
    | StepStarted
    | StepFinished
    | RunPaused
    | RunResumed
    | ApprovalRequested
    | ApprovalResolved
    | RunFinished
)


def event_run_id(event: TaskLoopEvent) -> str:
    if isinstance(event, StepStarted | StepFinished):
        return event.step.run_id
    if isinstance(event, ApprovalRequested | ApprovalResolved):
        return event.approval.run_id
    return event.run.id


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
    else:
        body["run"] = event.run.to_json()
    return body
