"""Where a question says the call acts, and what it shows of the text (mutants of
core/validated_call.py that lived)."""

from __future__ import annotations

from pydantic import BaseModel

from desktop_agent.core.builtin_tools import spec_of
from desktop_agent.core.call_risk import CallRisk, Sensitivity
from desktop_agent.core.models import Element, Risk
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
