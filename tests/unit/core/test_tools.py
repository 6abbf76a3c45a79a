"""ToolRegistry and the built-in argument models: everything is checked before anything runs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS, builtin_registry
from desktop_agent.core.errors import InvalidArguments, ToolError, ToolNotAllowed, UnknownTool
from desktop_agent.core.keys import normalize_key
from desktop_agent.core.models import Risk
from desktop_agent.core.tools import ToolRegistry, ToolSpec

REGISTRY = builtin_registry()


def invalid(tool: str, args: dict[str, Any]) -> str:
    with pytest.raises(InvalidArguments) as caught:
        REGISTRY.validate(tool, args)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"invalid arguments for {tool}: ")
    return message.removeprefix(f"invalid arguments for {tool}: ")


def valid(tool: str, args: dict[str, Any]) -> BaseModel:
    spec, model = REGISTRY.validate(tool, args)
    assert spec.name == tool
    return model


# ── the registry ─────────────────────────────────────────────────────────────


def test_an_unknown_tool_is_refused_in_one_line_naming_it_and_the_tools() -> None:
    with pytest.raises(UnknownTool) as caught:
        REGISTRY.validate("teleport", {})
    message = str(caught.value)
    assert message.startswith("unknown tool 'teleport'; the tools are: click, move_mouse")
    assert "screen_snapshot" not in message  # the loop's own tool is not offered
    assert "\n" not in message


def test_a_tool_off_the_allowed_list_is_refused_before_its_arguments_are_looked_at() -> None:
    with pytest.raises(ToolNotAllowed, match="^tool 'click' is not allowed in this run$"):
        REGISTRY.validate("click", {"nonsense": True}, ["wait"])
    spec, _ = REGISTRY.validate("click", {"x": 1, "y": 2}, ["wait", "click"])
    assert spec.name == "click"


def test_every_refusal_is_a_tool_error() -> None:
    for error in (UnknownTool, ToolNotAllowed, InvalidArguments):
        assert issubclass(error, ToolError)


def test_registering_a_name_twice_is_refused() -> None:
    registry = ToolRegistry(BUILTIN_TOOLS)
    with pytest.raises(ValueError, match="'click' is registered already"):
        registry.register(BUILTIN_TOOLS[1])


def test_registries_are_separate_there_is_no_global_one() -> None:
    extra = ToolSpec("beep", "Beep.", BUILTIN_TOOLS[0].args_model, Risk.SAFE)
    mine = builtin_registry()
    mine.register(extra)
    assert "beep" in mine
    assert "beep" not in builtin_registry()


def test_builtin_tools_and_their_risks_follow_design() -> None:
    risks = {spec.name: spec.risk for spec in BUILTIN_TOOLS}
    assert risks == {
        "screen_snapshot": Risk.SAFE,
        "click": Risk.INPUT,
        "move_mouse": Risk.INPUT,
        "drag": Risk.INPUT,
        "scroll": Risk.INPUT,
        "type_text": Risk.INPUT,
        # issue 29 item 4 (docs/architecture.md, Contract changes): Anthropic's actions
        "hold_key": Risk.INPUT,
        "mouse_down": Risk.INPUT,
        "mouse_up": Risk.INPUT,
        "cursor_position": Risk.SAFE,
        "hotkey": Risk.INPUT,
        "launch_app": Risk.DANGEROUS,
        "wait": Risk.SAFE,
        "focus_window": Risk.INPUT,
        "invoke": Risk.INPUT,
        "set_value": Risk.INPUT,
    }
    assert REGISTRY.offered_names() == tuple(name for name in risks if name != "screen_snapshot")
    assert REGISTRY.unknown(["click", "fly", "wait", "swim"]) == ["fly", "swim"]


def test_each_tool_publishes_a_json_schema_of_its_arguments() -> None:
    schema = REGISTRY.get("click").json_schema()
    assert set(schema["properties"]) == {"x", "y", "element", "target", "button", "clicks"}
    assert REGISTRY.get("wait").json_schema()["required"] == ["seconds"]


# ── point-or-element tools ───────────────────────────────────────────────────


@pytest.mark.parametrize("tool", ["click", "move_mouse"])
def test_a_point_or_an_element_is_accepted(tool: str) -> None:
    point = valid(tool, {"x": 10, "y": 20})
    assert (point.x, point.y, point.element) == (10, 20, None)  # type: ignore[attr-defined]
    element = valid(tool, {"element": 3})
    assert (element.x, element.y, element.element) == (None, None, 3)  # type: ignore[attr-defined]


@pytest.mark.parametrize("tool", ["click", "move_mouse"])
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "args: Value error, give either x and y, or element"),
        ({"x": 5}, "args: Value error, give either x and y, or element"),
        ({"y": 5}, "args: Value error, give either x and y, or element"),
        (
            {"x": 1, "y": 2, "element": 3},
            "args: Value error, give either x and y, or element, not both",
        ),
        ({"x": 1, "element": 3}, "args: Value error, give either x and y, or element, not both"),
        ({"x": -1, "y": 2}, "x: Input should be greater than or equal to 0"),
        ({"element": -1}, "element: Input should be greater than or equal to 0"),
        (
            {"x": 1.5, "y": 2},
            "x: Input should be a valid integer, got a number with a fractional part",
        ),
        (
            {"element": "save"},
            "element: Input should be a valid integer, unable to parse string as an integer",
        ),
        ({"element": True}, "element: Value error, expected a number, not true"),
        ({"x": 1, "y": 2, "z": 3}, "z: Extra inputs are not permitted"),
    ],
)
def test_point_or_element_rules(tool: str, args: dict[str, Any], expected: str) -> None:
    assert invalid(tool, args) == expected


def test_click_button_and_click_count_are_checked() -> None:
    click = valid("click", {"x": 1, "y": 2, "button": "right", "clicks": 2})
    assert (click.button, click.clicks) == ("right", 2)  # type: ignore[attr-defined]
    assert invalid("click", {"x": 1, "y": 2, "button": "side"}) == (
        "button: Input should be 'left', 'right' or 'middle'"
    )
    assert invalid("click", {"x": 1, "y": 2, "clicks": 4}) == (
        "clicks: Input should be less than or equal to 3"
    )
    assert invalid("click", {"x": 1, "y": 2, "clicks": 0}) == (
        "clicks: Input should be greater than or equal to 1"
    )


def test_focus_window_takes_a_title_or_an_element_not_both() -> None:
    assert valid("focus_window", {"title": "Untitled"}).title == "Untitled"  # type: ignore[attr-defined]
    assert valid("focus_window", {"element": 4}).element == 4  # type: ignore[attr-defined]
    assert invalid("focus_window", {}) == "args: Value error, give either title or element"
    assert invalid("focus_window", {"title": "a", "element": 1}) == (
        "args: Value error, give either title or element"
    )


def test_drag_needs_both_ends_and_names_every_missing_field() -> None:
    assert invalid("drag", {"x": 1, "y": 1}) == "to_x: Field required; to_y: Field required"
    assert valid("drag", {"x": 1, "y": 1, "to_x": 5, "to_y": 6}).to_y == 6  # type: ignore[attr-defined]


def test_scroll_amount_is_bounded_and_its_point_optional() -> None:
    assert valid("scroll", {"amount": -3}).amount == -3  # type: ignore[attr-defined]
    assert invalid("scroll", {"amount": 500}) == "amount: Input should be less than or equal to 100"


# ── hotkey ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        (["control", "s"], ["ctrl", "s"]),
        (["ctrl", "shift", "Escape"], ["ctrl", "shift", "esc"]),
        (["Return"], ["enter"]),
        (["super"], ["win"]),
        (["cmd", "space"], ["win", "space"]),
        (["alt", "F4"], ["alt", "f4"]),
        ([" Tab "], ["tab"]),
    ],
)
def test_hotkey_accepts_pyautogui_names_and_the_design_aliases(
    given: list[str], canonical: list[str]
) -> None:
    assert valid("hotkey", {"keys": given}).keys == canonical  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["ctrl", "sss"], "keys: Value error, unknown key 'sss'"),
        (["ctrl+s"], "keys: Value error, unknown key 'ctrl+s'"),
        ([], "keys: List should have at least 1 item after validation, not 0"),
        ("ctrl+s", "keys: Input should be a valid list"),
        (
            ["a", "b", "c", "d", "e", "f"],
            "keys: List should have at most 5 items after validation, not 6",
        ),
    ],
)
def test_hotkey_refuses_unknown_keys_in_one_line_naming_them(keys: Any, expected: str) -> None:
    assert invalid("hotkey", {"keys": keys}) == expected


def test_normalize_key_names_the_bad_key() -> None:
    assert normalize_key("Control") == "ctrl"
    with pytest.raises(ValueError, match="^unknown key 'hyper'$"):
        normalize_key("hyper")


# ── wait, type_text, launch_app ──────────────────────────────────────────────


@pytest.mark.parametrize("seconds", [0, 0.25, 1, 29.5, 30, "2.5"])
def test_wait_takes_zero_to_thirty_seconds_fractions_allowed(seconds: Any) -> None:
    assert valid("wait", {"seconds": seconds}).seconds == float(seconds)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (30.01, "seconds: Input should be less than or equal to 30"),
        (-0.5, "seconds: Input should be greater than or equal to 0"),
        ("soon", "seconds: Input should be a valid number, unable to parse string as a number"),
        (True, "seconds: Value error, expected a number, not true"),
        (None, "seconds: Input should be a valid number"),
    ],
)
def test_wait_refuses_what_is_not_zero_to_thirty_seconds(seconds: Any, expected: str) -> None:
    assert invalid("wait", {"seconds": seconds}) == expected
    assert invalid("wait", {}) == "seconds: Field required"


def test_type_text_takes_one_to_two_thousand_characters() -> None:
    assert valid("type_text", {"text": "x" * 2000}).text == "x" * 2000  # type: ignore[attr-defined]
    assert valid("type_text", {"text": "héllo", "enter": True}).enter is True  # type: ignore[attr-defined]
    assert invalid("type_text", {"text": "x" * 2001}) == (
        "text: String should have at most 2000 characters"
    )
    assert invalid("type_text", {"text": ""}) == "text: String should have at least 1 character"
    assert invalid("type_text", {"text": 5}) == "text: Input should be a valid string"


def test_launch_app_needs_a_command() -> None:
    assert valid("launch_app", {"command": "l3afpad"}).command == "l3afpad"  # type: ignore[attr-defined]
    assert invalid("launch_app", {"command": ""}) == (
        "command: String should have at least 1 character"
    )


def test_set_value_and_invoke_need_an_element() -> None:
    assert invalid("invoke", {}) == "element: Field required"
    assert invalid("set_value", {"element": 1}) == "value: Field required"
    assert valid("set_value", {"element": 1, "value": ""}).value == ""  # type: ignore[attr-defined]


def test_arguments_are_frozen_once_validated() -> None:
    click = valid("click", {"x": 1, "y": 2})
    with pytest.raises(ValueError, match="frozen"):
        click.x = 5  # type: ignore[attr-defined]
