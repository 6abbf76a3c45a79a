"""AskApproval: an approval question from another process (its ApprovalRequest.to_json),
checked before this app's dialog shows it — one wire format, by HTTP (the API's
/api/approvals/ask) or by pipe (the approval dialog's own process, ui/approval_prompt.py)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from desktop_agent.core.models import (
    ApprovalRequest,
    ElementRef,
    MonitorArea,
    Risk,
    SafetyCheck,
    SuspiciousText,
)

#: a run's or an approval's id as the API and another process may name it
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")


class AskApproval(BaseModel):
    """POST /api/approvals/ask: another process's approval request (ApprovalRequest.to_json),
    to be shown in this app's dialog."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: str = Field(pattern=f"^{ID_PATTERN.pattern}$")
    run_id: str = Field(pattern=f"^{ID_PATTERN.pattern}$")
    index: int = Field(ge=0)
    tool: str = Field(min_length=1, max_length=64)
    args: dict[str, Any]
    shown_args: dict[str, Any] | None = None
    reason: str = Field(max_length=20000)
    risk: Literal["safe", "input", "dangerous"]
    offer_run_grant: bool
    timeout_s: float = Field(gt=0, le=3600)
    screenshot: str | None = Field(default=None, max_length=500)
    target: list[int] | None = Field(default=None, min_length=2, max_length=2)
    created_at: str | None = None
    caution: str = Field(default="", max_length=2000)
    #: the model's provider's safety check: {code, message}
    safety_check: dict[str, str] | None = None
    #: the question's text as the asking process worded it: ignored, the dialog words its own
    question: str | None = Field(default=None, max_length=50000)
    #: the screen's texts that look like orders to an AI: [{text, where, rule}]
    suspicious_text: list[dict[str, str]] = Field(default_factory=list, max_length=200)
    #: what the call acts on ({how, role, name, window, box, …}): the words of its sentence
    element: dict[str, Any] | None = None
    #: the sentence as the asking process worded it: ignored, the dialog words its own
    sentence: str | None = Field(default=None, max_length=50000)
    #: the monitor the action is on ({number, left, top, width, height, primary}): the
    #: dialog opens there and says which
    monitor: dict[str, Any] | None = None
    #: the fields the asking process marked as text from outside: ignored, this process
    #: marks its own
    untrusted: list[str] | None = Field(default=None, max_length=20)

    @field_validator("screenshot")
    @classmethod
    def _inside_the_data_dir(cls, value: str | None) -> str | None:
        if value is not None and (value.startswith(("/", "\\")) or ".." in value or ":" in value):
            raise ValueError("screenshot: a path inside the data dir is needed")
        return value

    def request(self) -> ApprovalRequest:
        return ApprovalRequest(
            id=self.id,
            run_id=self.run_id,
            index=self.index,
            tool=self.tool,
            args=dict(self.args),
            shown_args=dict(self.shown_args) if self.shown_args is not None else None,
            reason=self.reason,
            risk=Risk(self.risk),
            offer_run_grant=self.offer_run_grant,
            timeout_s=self.timeout_s,
            screenshot=self.screenshot,
            target=(self.target[0], self.target[1]) if self.target else None,
            caution=self.caution,
            safety_check=_safety_check(self.safety_check),
            suspicious_text=tuple(
                SuspiciousText(
                    text=note.get("text", "")[:2000],
                    where=note.get("where", "")[:2000],
                    rule=note.get("rule", "")[:200],
                )
                for note in self.suspicious_text
            ),
            element=_element(self.element),
            monitor=_monitor(self.monitor),
        )


def _safety_check(value: dict[str, str] | None) -> SafetyCheck | None:
    if value is None:
        return None
    # the id is the asking process's to acknowledge, never this app's: not sent
    return SafetyCheck(
        id="", code=value.get("code", "")[:200], message=value.get("message", "")[:2000]
    )


def _element(data: dict[str, Any] | None) -> ElementRef | None:
    """The element of a question from another process; one that does not read leaves only
    the sentence's words poorer (the point is said instead), never the question unasked."""
    if data is None:
        return None
    try:
        return ElementRef.from_json(data)
    except (KeyError, TypeError, ValueError):
        return None


def _monitor(data: dict[str, Any] | None) -> MonitorArea | None:
    """The monitor of a question from another process; one that does not read leaves the
    dialog where it would open without one (and saying nothing of a monitor), never the
    question unasked."""
    if data is None:
        return None
    numbers = [data.get(key) for key in ("number", "left", "top", "width", "height")]
    primary = data.get("primary", False)
    ints = [n for n in numbers if type(n) is int]
    if len(ints) != len(numbers) or not isinstance(primary, bool):
        return None
    number, left, top, width, height = ints
    if number < 1 or width < 1 or height < 1:
        return None
    return MonitorArea(number, left, top, width, height, primary=primary)
