"""Tools describe themselves: a tool added by its spec alone is treated by its traits by the
gate, the own-window check, the effect check and the MCP list (issue 32 item 3)."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

import desktop_agent
from desktop_agent.core.builtin_tools import BUILTIN_TOOLS, builtin_registry, spec_of
from desktop_agent.core.call_risk import assess_call
from desktop_agent.core.effect import StuckDetector
from desktop_agent.core.gate import SCREEN_CHANGED
from desktop_agent.core.models import (
    ApprovalDecision,
    Effect,
    Element,
    Policy,
    Risk,
    RunStatus,
    StepStatus,
    StopReason,
)
from desktop_agent.core.own_windows import own_window_refusal
from desktop_agent.core.targets import acts_in_a_window, element_ref
from desktop_agent.core.tools import ToolRegistry, ToolSpec
from desktop_agent.mcp.tools import GATE_NOTE, mcp_tools
from tests.fakes import ScriptedPlanner, done, grey_signature, make_observation, tool
from tests.unit.core.conftest import Harness, make_harness
from tests.unit.core.test_grounding_landing import (
    DELETE_CAUTION,
    DIALOG,
    PAGE,
    action_of,
    asked_while,
)


class PokeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    at_x: int = Field(ge=0)
    at_y: int = Field(ge=0)


class PonderArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    about: str = ""


#: a new pointer tool that presses at its point (named unlike x/y), known only by its spec
POKE = ToolSpec(
    "poke",
    "Poke a point of the screenshot.",
    PokeArgs,
    Risk.INPUT,
    points=(("at_x", "at_y"),),
    presses=True,
    settles=True,
    mcp_name="poke_at",
)
#: a new tool that does not act on the screen
PONDER = ToolSpec("ponder", "Think a while.", PonderArgs, Risk.SAFE, passive=True, windowless=True)

WINDOW = Element(1, "window", "Shop — Browser", (0, 0, 1280, 720), focused=True)
DELETE = Element(2, "button", "Delete account", (600, 500, 100, 30))
OWN = Element(9, "window", "Desktop Agent", (0, 600, 400, 120))


def with_tools(h: Harness, *specs: ToolSpec) -> None:
    h.runner.services.registry = ToolRegistry((*BUILTIN_TOOLS, *specs))


def test_the_gate_judges_a_new_pointer_tool_at_its_own_point_arguments() -> None:
    screen = make_observation([WINDOW, DELETE])

    risk = assess_call(POKE, {"at_x": 650, "at_y": 515}, screen)
    elsewhere = assess_call(POKE, {"at_x": 100, "at_y": 100}, screen)

    assert risk.always_ask == 'the target button "Delete account" is sensitive ("delete")'
    assert elsewhere.always_ask == ""


def test_the_own_window_check_refuses_a_new_pointer_tool_on_the_apps_window() -> None:
    screen = make_observation([WINDOW]).with_(own_windows=(OWN,))

    refusal = own_window_refusal(POKE, {"at_x": 100, "at_y": 650}, screen)

    assert refusal.startswith('the point (100, 650) is on the app\'s own window "Desktop Agent"')
    assert own_window_refusal(POKE, {"at_x": 100, "at_y": 100}, screen) == ""


def test_targets_know_a_new_tool_by_its_traits() -> None:
    screen = make_observation([WINDOW, DELETE])

    ref = element_ref(POKE, {"at_x": 650, "at_y": 515}, screen)

    assert acts_in_a_window(POKE) and not acts_in_a_window(PONDER)
    assert element_ref(PONDER, {"about": "it"}, screen) is None
    # a pointer tool whose point arguments are not x/y is still known to aim: at its window
    assert ref is not None and ref.window == WINDOW.name


def test_the_effect_check_counts_a_new_tool_and_not_a_passive_one() -> None:
    stuck = StuckDetector()

    for _ in range(3):
        stuck.record(PONDER, {"about": "it"}, Effect.NO_CHANGE)
    counts = [stuck.record(POKE, {"at_x": 1, "at_y": 2}, Effect.NO_CHANGE) for _ in range(3)]

    assert counts == [1, 2, 3]
    assert list(stuck.counts) == ['poke {"at_x": 1, "at_y": 2}']


def test_mcp_lists_a_new_tool_by_its_mcp_name_with_the_gates_note() -> None:
    danger = ToolSpec("wipe", "Wipe it.", PonderArgs, Risk.DANGEROUS, mcp_name="wipe")

    tools = mcp_tools((*BUILTIN_TOOLS, POKE, PONDER, danger))

    assert tools["poke_at"].builtin == "poke"
    assert tools["poke_at"].description == POKE.description + GATE_NOTE
    assert tools["poke_at"].input_schema() == POKE.json_schema()
    assert not tools["poke_at"].read_only and not tools["poke_at"].destructive
    assert tools["wipe"].destructive and not tools["screenshot"].destructive
    assert "ponder" not in tools  # no MCP name: not listed
    assert next(iter(tools)) == "screenshot"


async def test_a_run_asks_before_a_new_tool_presses_a_sensitive_target_under_allow() -> None:
    h = make_harness(answers=[ApprovalDecision.DENY], policies={"poke": Policy.ALLOW})
    with_tools(h, POKE)
    h.observer.observation = make_observation([WINDOW, DELETE])
    run = await h.create(allowed_tools=("poke",))

    await h.collect(run, ScriptedPlanner([tool("poke", at_x=650, at_y=515)], then=done()))

    (asked,) = h.gate.requests
    assert asked.tool == "poke"
    assert asked.caution == 'the target button "Delete account" is sensitive ("delete")'
    assert asked.target == (650, 515)
    assert h.executor.calls == []
    assert action_of(h, run.id).status is StepStatus.DENIED


async def test_a_run_ends_stuck_on_a_new_tool_and_not_on_a_passive_one() -> None:
    h = make_harness(policies={"poke": Policy.ALLOW, "ponder": Policy.ALLOW})
    with_tools(h, POKE, PONDER)
    h.runner.services.effect_wait_s = 0
    h.observer.observation = make_observation([WINDOW], signature=grey_signature(40))
    ponders = [tool("ponder", about="it") for _ in range(4)]
    pokes = [tool("poke", at_x=10, at_y=10) for _ in range(3)]
    run = await h.create(allowed_tools=("poke", "ponder"), max_steps=20)

    await h.collect(run, ScriptedPlanner([*ponders, *pokes], then=done()))

    final = h.stored(run.id)
    assert (final.status, final.stop_reason) == (RunStatus.FAILED, StopReason.STUCK)
    assert [name for name, _ in h.executor.calls] == ["ponder"] * 4 + ["poke"] * 3


async def test_a_mouse_down_approved_then_a_delete_button_came_up_under_it_is_not_done() -> None:
    # a press held is a press: judged again at its point once the person answered, as a
    # click is (on old main only click and drag were)
    h, action = await asked_while(PAGE, DIALOG, tool("mouse_down", x=650, y=515))

    assert (action.status, action.error) == (
        StepStatus.SKIPPED,
        SCREEN_CHANGED.format(why=DELETE_CAUTION),
    )
    assert h.executor.calls == []


async def test_a_mouse_up_approved_then_a_delete_button_came_up_under_it_is_not_done() -> None:
    h, action = await asked_while(PAGE, DIALOG, tool("mouse_up", x=650, y=515))

    assert (action.status, action.error) == (
        StepStatus.SKIPPED,
        SCREEN_CHANGED.format(why=DELETE_CAUTION),
    )
    assert h.executor.calls == []


def test_a_dropping_or_grounded_tool_without_points_is_refused_at_its_spec() -> None:
    with pytest.raises(ValueError, match="'lift': a dropping or grounded tool has points"):
        ToolSpec("lift", "Lift.", PonderArgs, Risk.INPUT, drops=True)


@pytest.mark.parametrize(
    ("traits", "named"),
    [
        ({"text_field": "message"}, "message"),
        ({"window_field": "title"}, "title"),
        ({"command_field": "argv"}, "argv"),
        ({"element": True}, "element"),
        ({"presses_keys": True}, "keys"),
        ({"points": (("x", "y"), ("to_x", "to_y"))}, "x, y, to_x, to_y"),
    ],
)
def test_a_trait_naming_no_argument_is_refused_at_its_spec(
    traits: dict[str, Any], named: str
) -> None:
    # the gate reads the text, window, command and points by these names: a name that is not
    # an argument would leave what the call does unjudged (or crash the gate mid-run)
    with pytest.raises(ValueError, match=f"'ponder': its traits name {named}, which are not"):
        ToolSpec("ponder", "Ponder.", PonderArgs, Risk.INPUT, **traits)


def test_a_name_is_known_by_its_builtin_spec_and_an_unknown_one_by_no_trait() -> None:
    assert spec_of("click") is builtin_registry().get("click")
    unknown = spec_of("teleport")
    assert (unknown.pointer, unknown.keyboard, unknown.passive, unknown.windowless) == (
        False,
        False,
        False,
        False,
    )


#: the ToolSpec fields that are not traits
_NOT_TRAITS = {"name", "description", "args_model", "risk", "offered"}
_TRAIT_FILES = {"tools.py", "builtin_tools.py"}


def test_every_trait_has_a_reader_outside_the_specs() -> None:
    """A trait nothing reads is a promise nothing keeps: each one is read (`.trait`) by some
    module of the app other than the ones that declare the specs."""
    package = Path(desktop_agent.__file__).parent
    sources = "\n".join(
        path.read_text(encoding="utf-8")
        for path in package.rglob("*.py")
        if not (path.parent.name == "core" and path.name in _TRAIT_FILES)
    )
    traits = [f.name for f in fields(ToolSpec) if f.name not in _NOT_TRAITS]
    traits += ["pointer", "aims", "judged_at_point"]

    unread = [name for name in traits if not re.search(rf"\.{name}\b", sources)]

    assert traits and unread == []


def test_every_builtin_trait_combination_is_one_the_readers_know() -> None:
    # a text tool names its field in its arguments; a pointer tool's points are arguments
    for spec in BUILTIN_TOOLS:
        names = set(spec.args_model.model_fields)
        for x_name, y_name in spec.points:
            assert {x_name, y_name} <= names, spec.name
        for field_name in (spec.text_field, spec.window_field, spec.command_field):
            assert not field_name or field_name in names, spec.name
        assert not spec.element or "element" in names, spec.name
        assert not spec.presses_keys or "keys" in names, spec.name
