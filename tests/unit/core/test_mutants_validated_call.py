"""Where a question says the call acts, and what it shows of the text (mutants of
core/validated_call.py that lived)."""

from __future__ import annotations

import json

from pydantic import BaseModel

from desktop_agent.core.builtin_tools import spec_of
from desktop_agent.core.call_risk import CallRisk, Sensitivity
from desktop_agent.core.errors import InvalidArguments, ToolNotAllowed
from desktop_agent.core.models import REDACTED, Element, Risk
from desktop_agent.core.tools import ToolSpec
from desktop_agent.core.validated_call import Call, Decided, target_of, what_to_show
from tests.fakes import make_observation, tool

SCREEN = make_observation([Element(2, "button", "OK", (40, 600, 80, 30))])


def _args(name: str, **values: object) -> BaseModel:
    return spec_of(name).validate(values)


def test_an_element_not_on_the_screen_has_no_place_to_show() -> None:
    assert target_of(spec_of("click"), _args("click", element=99), SCREEN) is None
    assert target_of(spec_of("click"), _args("click", element=2), SCREEN) == (80, 615)


def test_half_a_point_is_no_place_to_show() -> None:
    assert target_of(spec_of("scroll"), _args("scroll", amount=-3, x=100), SCREEN) is None
    assert target_of(spec_of("scroll"), _args("scroll", amount=-3, y=100), SCREEN) is None


class _MarkArgs(BaseModel):
    x: int
    y: int
    label: str


def test_a_tool_without_points_is_shown_at_its_x_and_y() -> None:
    # its spec names no points (it does not press there), yet it says where it acts
    mark = ToolSpec("mark", "Put a label at a place.", _MarkArgs, Risk.INPUT)
    assert target_of(mark, _MarkArgs(x=10, y=20, label="here"), SCREEN) == (10, 20)


def test_a_call_with_nothing_hidden_shows_nothing_beside_its_arguments() -> None:
    decided = Decided.redacted(
        tool("click", x=5, y=5), Call(spec_of("click"), _args("click", x=5, y=5)), Sensitivity.PLAIN
    )
    assert what_to_show(decided, CallRisk()) == {}


def test_a_refused_empty_text_is_stored_as_it_is_and_hides_nothing() -> None:
    # an empty secret would "hide" the empty string between every two letters
    refused = Decided.refused(tool("type_text", text=""), InvalidArguments("too short"), "text")
    assert refused.stored_args == {"text": ""} and refused.secrets == ()
    assert refused.redact("the model's words") == "the model's words"


def test_a_hidden_text_is_hidden_in_each_form_the_models_raw_output_may_hold() -> None:
    secret = 'Grüße "x"'
    call = Call(spec_of("type_text"), _args("type_text", text=secret))
    decided = Decided.redacted(tool("type_text", text=secret), call, Sensitivity.UNKNOWN)
    assert decided.stored_args == {"text": REDACTED}
    for raw in (
        json.dumps({"text": secret}),  # \\u00fc, \\"
        json.dumps({"text": secret}, ensure_ascii=False),  # ü, \\"
        f"typing {secret} now",
    ):
        assert secret not in decided.redact(raw)
    assert decided.redact(json.dumps({"text": secret})) == f'{{"text": "{REDACTED}"}}'
    assert decided.redact(json.dumps({"text": secret}, ensure_ascii=False)) == (
        f'{{"text": "{REDACTED}"}}'
    )
    assert decided.redact(f"typing {secret} now, full stop") == f"typing {REDACTED} now, full stop"


def test_a_text_inside_its_own_escaped_form_is_hidden_whole() -> None:
    # a backslash: JSON doubles it, so the raw text is found inside its JSON form; the
    # longer form goes first, or the raw one would leave a backslash of it behind
    secret = "\\b"
    call = Call(spec_of("type_text"), _args("type_text", text=secret))
    decided = Decided.redacted(tool("type_text", text=secret), call, Sensitivity.UNKNOWN)
    assert decided.redact(json.dumps({"text": secret})) == f'{{"text": "{REDACTED}"}}'


def test_a_refused_call_keeps_why_it_was_refused_when_it_hides_a_text() -> None:
    why = ToolNotAllowed("tool 'type_text' is not allowed in this run")
    refused = Decided.refused(tool("type_text", text="s3cret"), why, "text")
    assert refused.refusal is why and refused.call is None
    assert refused.stored_args == {"text": REDACTED} and refused.secrets == ("s3cret",)


def test_a_refused_call_of_a_tool_that_types_nothing_hides_nothing() -> None:
    # no text field: even an argument the model named "" is stored as it was sent
    # (validated_call refused 3)
    refused = Decided.refused(tool("click", **{"": "s3cret"}), ToolNotAllowed("no"), "")
    assert refused.stored_args == {"": "s3cret"} and refused.secrets == ()
