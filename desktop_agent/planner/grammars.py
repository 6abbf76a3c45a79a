"""Answers in the model families' own formats → our Decision (coordinates still the model's).

- UI-TARS action text: ``Thought: …`` then ``Action: click(start_box='(x,y)')`` (bytedance/UI-TARS,
  codes/ui_tars/action_parser.py and its prompts), with the box forms ``(x,y)``,
  ``<|box_start|>(x,y)<|box_end|>``, ``[x1, y1, x2, y2]``, ``<point>x y</point>`` and
  ``<bbox>x1 y1 x2 y2</bbox>``.
- Qwen2.5-VL / Qwen3-VL computer use: ``<tool_call>{"name": "computer_use", "arguments":
  {"action": "left_click", "coordinate": [x, y]}}</tool_call>`` (the Qwen cookbooks'
  computer_use / mobile_agent function).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

from desktop_agent.core.errors import InvalidArguments, PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.core.tools import ToolSpec

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_NUMBER = r"-?\d+(?:\.\d+)?"
_NUMBERS = re.compile(_NUMBER)
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
#: UI-TARS scrolls by "one screen side"; ours counts wheel clicks
UI_TARS_SCROLL_CLICKS = 5
UI_TARS_WAIT_S = 5.0


def _snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _point(box: Any, raw: str) -> tuple[float, float]:
    """The centre of a UI-TARS box or point in any of its spellings."""
    numbers = [float(n) for n in _NUMBERS.findall(str(box))] if box is not None else []
    if len(numbers) == 2:
        return numbers[0], numbers[1]
    if len(numbers) == 4:
        return (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
    raise PlannerError(f"cannot read a point from {_snippet(str(box))}", raw=raw)


def validated_args(spec: ToolSpec, args: dict[str, Any], raw: str) -> dict[str, Any]:
    """`args` as they will run: validated by the tool's model and dumped (the fields the model
    gave, converted), so everything after the planner sees what the executor gets."""
    try:
        return spec.validate(args).model_dump(exclude_unset=True)
    except InvalidArguments as error:
        raise PlannerError(str(error), raw=raw) from None


def _checked(
    tool: str, args: dict[str, Any], tools: Sequence[ToolSpec], reason: str, raw: str
) -> Decision:
    spec = next((spec for spec in tools if spec.name == tool), None)
    if spec is None:
        names = ", ".join(spec.name for spec in tools)
        raise PlannerError(
            f"the answer asks for {tool}, which this run does not allow; the tools you may "
            f"use are: {names}",
            raw=raw,
        )
    return Decision(
        action="tool", tool=tool, args=validated_args(spec, args, raw), reason=reason, raw=raw
    )


def _xy(point: tuple[float, float]) -> dict[str, int]:
    return {"x": max(0, round(point[0])), "y": max(0, round(point[1]))}


# ── UI-TARS ──────────────────────────────────────────────────────────────────


def _ui_tars_call(action: str, raw: str) -> tuple[str, dict[str, Any]]:
    """(function name, keyword arguments) of one action call, e.g. click(start_box='(1,2)')."""
    text = action.strip()
    if not text.endswith(")"):
        text += ")"  # the model stopped right before the closing parenthesis
    try:
        node = ast.parse(text.replace("\n", "\\n"), mode="eval").body
    except SyntaxError:
        raise PlannerError(f"cannot read the action {_snippet(action)}", raw=raw) from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise PlannerError(f"the action is not a call: {_snippet(action)}", raw=raw)
    kwargs: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None or not isinstance(keyword.value, ast.Constant):
            raise PlannerError(f"cannot read the action {_snippet(action)}", raw=raw)
        kwargs[keyword.arg] = keyword.value.value
    return node.func.id, kwargs


def parse_ui_tars(text: str, tools: Sequence[ToolSpec]) -> Decision:
    """A UI-TARS answer ("Thought: …\\nAction: …") → Decision in the model's coordinates."""
    body = _THINK.sub("", text).strip()
    if "Action:" not in body:
        raise PlannerError(
            f"the answer has no 'Action:' line: {_snippet(body)}; answer with "
            "'Thought: …' and one 'Action: …'",
            raw=text,
        )
    head, action = body.rsplit("Action:", 1)
    thought = head.strip()
    for label in ("Thought:", "Action_Summary:", "Reflection:"):
        thought = thought.removeprefix(label).strip()
    calls = [part for part in action.strip().split(")\n\n") if part.strip()]
    if len(calls) > 1:
        raise PlannerError(
            f"the answer holds {len(calls)} actions; give exactly one action per turn", raw=text
        )
    name, kwargs = _ui_tars_call(calls[0] if calls else "", text)
    box = kwargs.get("start_box", kwargs.get("point"))
    if name in ("click", "left_single", "left_double", "right_single", "middle_single"):
        args: dict[str, Any] = _xy(_point(box, text))
        if name == "left_double":
            args["clicks"] = 2
        elif name == "right_single":
            args["button"] = "right"
        elif name == "middle_single":
            args["button"] = "middle"
        return _checked("click", args, tools, thought, text)
    if name in ("drag", "select"):
        start = _point(box, text)
        end = _point(kwargs.get("end_box", kwargs.get("end_point")), text)
        args = {**_xy(start), "to_x": max(0, round(end[0])), "to_y": max(0, round(end[1]))}
        return _checked("drag", args, tools, thought, text)
    if name == "hotkey":
        keys = str(kwargs.get("key", kwargs.get("hotkey", ""))).split()
        if not keys:
            raise PlannerError("hotkey() names no key", raw=text)
        return _checked("hotkey", {"keys": keys}, tools, thought, text)
    if name == "type":
        content = str(kwargs.get("content", ""))
        enter = content.endswith("\n")
        args = {"text": content.rstrip("\n")}
        if enter:
            args["enter"] = True
        return _checked("type_text", args, tools, thought, text)
    if name == "scroll":
        direction = str(kwargs.get("direction", "down")).strip().lower()
        if direction not in ("up", "down"):
            raise PlannerError(
                f"scrolling {direction} is not supported; scroll up or down", raw=text
            )
        amount = UI_TARS_SCROLL_CLICKS if direction == "up" else -UI_TARS_SCROLL_CLICKS
        args = {"amount": amount}
        if box is not None:
            args.update(_xy(_point(box, text)))
        return _checked("scroll", args, tools, thought, text)
    if name == "wait":
        return _checked("wait", {"seconds": UI_TARS_WAIT_S}, tools, thought, text)
    if name == "finished":
        message = str(kwargs.get("content", "")) or thought
        return Decision(action="done", message=message, reason=thought, raw=text)
    if name == "call_user":
        return Decision(
            action="fail", reason=thought or "the model asks for the user's help", raw=text
        )
    raise PlannerError(f"unknown UI-TARS action {name}()", raw=text)


# ── Qwen computer_use ────────────────────────────────────────────────────────


def find_qwen_tool_call(text: str) -> dict[str, Any] | None:
    """The arguments of a `<tool_call>` of the computer_use function, when the answer has one."""
    match = _TOOL_CALL.search(text)
    if match is None:
        return None
    try:
        call = json.loads(match.group(1))
    except json.JSONDecodeError:
        return None
    if not isinstance(call, dict) or call.get("name") not in ("computer_use", "mobile_use"):
        return None
    arguments = call.get("arguments")
    return arguments if isinstance(arguments, dict) else None


_QWEN_CLICKS: dict[str, dict[str, Any]] = {
    "left_click": {},
    "click": {},
    "right_click": {"button": "right"},
    "middle_click": {"button": "middle"},
    "double_click": {"clicks": 2},
    "triple_click": {"clicks": 3},
}


def _coordinate(arguments: dict[str, Any], name: str, raw: str) -> tuple[float, float]:
    value = arguments.get(name)
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(n, int | float) and not isinstance(n, bool) for n in value)
    ):
        return float(value[0]), float(value[1])
    raise PlannerError(f'"{name}" must be [x, y], not {_snippet(json.dumps(value))}', raw=raw)


def parse_qwen_tool_call(
    arguments: dict[str, Any], tools: Sequence[ToolSpec], raw: str
) -> Decision:
    """A Qwen computer_use call's arguments → Decision in the model's coordinates."""
    action = arguments.get("action")
    if action in _QWEN_CLICKS:
        args = {**_xy(_coordinate(arguments, "coordinate", raw)), **_QWEN_CLICKS[action]}
        return _checked("click", args, tools, "", raw)
    if action == "mouse_move":
        point = _xy(_coordinate(arguments, "coordinate", raw))
        return _checked("move_mouse", point, tools, "", raw)
    if action in ("swipe", "left_click_drag") and "coordinate2" in arguments:
        start = _coordinate(arguments, "coordinate", raw)
        end = _coordinate(arguments, "coordinate2", raw)
        args = {**_xy(start), "to_x": max(0, round(end[0])), "to_y": max(0, round(end[1]))}
        return _checked("drag", args, tools, "", raw)
    if action == "type":
        return _checked("type_text", {"text": str(arguments.get("text", ""))}, tools, "", raw)
    if action == "key":
        keys = arguments.get("keys", arguments.get("text"))
        keys = keys.split("+") if isinstance(keys, str) else keys
        if not isinstance(keys, list) or not keys:
            raise PlannerError('"key" needs "keys": a list of key names', raw=raw)
        return _checked("hotkey", {"keys": [str(k) for k in keys]}, tools, "", raw)
    if action in ("scroll", "hscroll"):
        if action == "hscroll":
            raise PlannerError("horizontal scrolling is not supported; scroll up or down", raw=raw)
        pixels = arguments.get("pixels", 0)
        if not isinstance(pixels, int | float) or isinstance(pixels, bool) or pixels == 0:
            raise PlannerError('"scroll" needs "pixels": a number, + up, - down', raw=raw)
        # a wheel click scrolls about 100 px in most toolkits
        clicks = max(1, min(100, round(abs(pixels) / 100)))
        args = {"amount": clicks if pixels > 0 else -clicks}
        if "coordinate" in arguments:
            args.update(_xy(_coordinate(arguments, "coordinate", raw)))
        return _checked("scroll", args, tools, "", raw)
    if action == "wait":
        seconds = arguments.get("time", 1)
        seconds = min(30.0, float(seconds)) if isinstance(seconds, int | float) else 1.0
        return _checked("wait", {"seconds": seconds}, tools, "", raw)
    if action == "terminate":
        if arguments.get("status") == "failure":
            return Decision(action="fail", reason="the model ended the task as failed", raw=raw)
        return Decision(action="done", message="the model ended the task", raw=raw)
    if action == "answer":
        return Decision(action="done", message=str(arguments.get("text", "")), raw=raw)
    raise PlannerError(f"unsupported computer_use action {_snippet(str(action))}", raw=raw)
