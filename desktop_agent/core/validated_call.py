"""The validated call: the one object the gate judges, the store keeps, the person asked
sees and the executor runs (never the model's raw arguments), and its hidden text."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel

from desktop_agent.core.call_risk import CallRisk, Sensitivity
from desktop_agent.core.errors import ToolError
from desktop_agent.core.models import REDACTED, Decision, Observation
from desktop_agent.core.tools import ToolSpec


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call as it will run: its spec and validated arguments."""

    spec: ToolSpec
    args: BaseModel
    #: the arguments the gate judges: every field, defaults included
    values: dict[str, Any] = field(init=False)
    #: the arguments as stored and shown: the fields the model gave, converted as they run
    given: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", self.args.model_dump())
        object.__setattr__(self, "given", self.args.model_dump(exclude_unset=True))


@dataclass(frozen=True, slots=True)
class Decided:
    """A tool decision, its validated call (or why it has none), and what may be stored of
    it: arguments with secrets hidden."""

    decision: Decision
    call: Call | None
    #: why the call does not validate (unknown tool, not allowed, bad arguments)
    refusal: ToolError | None
    stored_args: dict[str, Any]
    #: the texts hidden from storage, in every form they may take in the raw output
    secrets: tuple[str, ...]
    #: why what a grounded call lands on cannot be judged ("": it can): the call asks
    unknown_target: str = ""

    @classmethod
    def redacted(cls, decision: Decision, call: Call, sensitivity: Sensitivity) -> Decided:
        field_name = call.spec.text_field
        # a text is hidden only for a tool that types one (Sensitivity.PLAIN otherwise), and
        # the argument it names is one of its arguments (ToolSpec)
        secret = getattr(call.args, field_name) if sensitivity.redact else None
        return cls._hiding(decision, call, None, call.given, field_name, secret)

    @classmethod
    def refused(cls, decision: Decision, refusal: ToolError, field_name: str) -> Decided:
        """Nothing runs; the raw arguments are stored, the text of `field_name` hidden (where
        it would have gone cannot be known)."""
        secret = decision.args.get(field_name) if field_name else None
        return cls._hiding(decision, None, refusal, dict(decision.args), field_name, secret)

    @classmethod
    def _hiding(
        cls,
        decision: Decision,
        call: Call | None,
        refusal: ToolError | None,
        args: dict[str, Any],
        field_name: str,
        secret: object,
    ) -> Decided:
        if not isinstance(secret, str) or not secret:
            return cls(decision, call, refusal, dict(args), ())
        forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
        # longest first, so a form is not left half-replaced by a shorter one inside it
        return cls(
            decision,
            call,
            refusal,
            {**args, field_name: REDACTED},
            tuple(sorted(forms, key=len, reverse=True)),
        )

    def moved_to(self, point: tuple[int, int]) -> Decided:
        """The same call at `point` (x, y; a drag's drop point stays): a grounding's result,
        validated again, so the moved call is the one object judged, stored and run."""
        assert self.call is not None, "only a validated call is grounded"
        x, y = point
        call = Call(self.call.spec, self.call.spec.validate({**self.call.given, "x": x, "y": y}))
        decision = replace(self.decision, args={**self.decision.args, "x": x, "y": y})
        return replace(
            self, decision=decision, call=call, stored_args={**self.stored_args, "x": x, "y": y}
        )

    def unknown(self, why: str) -> Decided:
        """The same call, asked every time: what is under its point cannot be known."""
        return replace(self, unknown_target=why)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text


def what_to_show(decided: Decided, risk: CallRisk) -> dict[str, Any]:
    """The person asked sees what will be typed (the text is stored hidden wherever its field
    is not known to be plain); a known password field's text only behind a "Show" toggle."""
    call = decided.call
    if call is None or not decided.secrets:
        return {}
    if risk.sensitivity is Sensitivity.PASSWORD:
        return {"secret": str(getattr(call.args, call.spec.text_field, ""))}
    return {"shown_args": call.given}


def target_of(spec: ToolSpec, args: BaseModel, observation: Observation) -> tuple[int, int] | None:
    """Where the call acts, as the person asked is shown it: its element's centre, else its
    (first) point."""
    element_id = getattr(args, "element", None)
    if isinstance(element_id, int):
        element = observation.element(element_id)
        return element.center if element else None
    x_name, y_name = spec.points[0] if spec.points else ("x", "y")
    x, y = getattr(args, x_name, None), getattr(args, y_name, None)
    if isinstance(x, int) and isinstance(y, int):
        return x, y
    return None
