"""What the answer formats share (a tool call validated as it will run), and Qwen's tool call.

The formats themselves live in planner/backends/ (UI-TARS's in backends/ui_tars.py).
Qwen2.5-VL / Qwen3-VL computer use, read by the JSON backend and the grounders:
``<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate":
[x, y]}}</tool_call>`` (the Qwen cookbooks' computer_use / mobile_agent function).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from desktop_agent.core.errors import InvalidArguments, PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.core.tools import ToolSpec

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
#: a model's batch is cut here: each call is its own gated step, and a turn stays reviewable
MAX_CALLS = 10


def snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def validated_args(spec: ToolSpec, args: dict[str, Any], raw: str) -> dict[str, Any]:
    """`args` as they will run: validated by the tool's model and dumped (the fields the model
    gave, converted), so everything after the planner sees what the executor gets."""
    try:
        return spec.validate(args).model_dump(exclude_unset=True)
    except InvalidArguments as error:
        raise PlannerError(str(error), raw=raw) from None


def checked(
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


def xy(point: tuple[float, float]) -> dict[str, int]:
    return {"x": max(0, round(point[0])), "y": max(0, round(point[1]))}


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
    raise PlannerError(f'"{name}" must be [x, y], not {snippet(json.dumps(value))}', raw=raw)


def parse_qwen_tool_call(
    arguments: dict[str, Any],
    tools: Sequence[ToolSpec],
    raw: str,
    pointer: tuple[float, float] | None = None,
) -> Decision:
    """A Qwen computer_use call's arguments → Decision in the model's coordinates.

    `pointer`: where an earlier call of the same answer put the pointer (Qwen's
    left_click_drag drags from there to its one `coordinate`)."""
    action = arguments.get("action")
    if action in _QWEN_CLICKS:
        args = {**xy(_coordinate(arguments, "coordinate", raw)), **_QWEN_CLICKS[action]}
        return checked("click", args, tools, "", raw)
    if action == "mouse_move":
        point = xy(_coordinate(arguments, "coordinate", raw))
        return checked("move_mouse", point, tools, "", raw)
    if action in ("swipe", "left_click_drag") and "coordinate2" in arguments:
        start = _coordinate(arguments, "coordinate", raw)
        end = _coordinate(arguments, "coordinate2", raw)
        args = {**xy(start), "to_x": max(0, round(end[0])), "to_y": max(0, round(end[1]))}
        return checked("drag", args, tools, "", raw)
    if action == "left_click_drag":
        # it drags from wherever the pointer is: the gate judges both ends, so the start
        # must be a point this answer named, never "wherever the pointer happens to be"
        if pointer is None:
            raise PlannerError(
                "left_click_drag drags from the pointer: put a mouse_move to the start "
                "before it in the same answer",
                raw=raw,
            )
        end = _coordinate(arguments, "coordinate", raw)
        args = {**xy(pointer), "to_x": max(0, round(end[0])), "to_y": max(0, round(end[1]))}
        return checked("drag", args, tools, "", raw)
    if action == "type":
        return checked("type_text", {"text": str(arguments.get("text", ""))}, tools, "", raw)
    if action == "key":
        keys = arguments.get("keys", arguments.get("text"))
        keys = keys.split("+") if isinstance(keys, str) else keys
        if not isinstance(keys, list) or not keys:
            raise PlannerError('"key" needs "keys": a list of key names', raw=raw)
        return checked("hotkey", {"keys": [str(k) for k in keys]}, tools, "", raw)
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
            args.update(xy(_coordinate(arguments, "coordinate", raw)))
        return checked("scroll", args, tools, "", raw)
    if action == "wait":
        seconds = arguments.get("time", 1)
        seconds = min(30.0, float(seconds)) if isinstance(seconds, int | float) else 1.0
        return checked("wait", {"seconds": seconds}, tools, "", raw)
    if action == "terminate":
        if arguments.get("status") in ("failure", "fail"):
            return Decision(action="fail", reason="the model ended the task as failed", raw=raw)
        return Decision(action="done", message="the model ended the task", raw=raw)
    if action == "answer":
        return Decision(action="done", message=str(arguments.get("text", "")), raw=raw)
    raise PlannerError(f"unsupported computer_use action {snippet(str(action))}", raw=raw)


# ── several calls in one answer ──────────────────────────────────────────────


def tool_call_bodies(text: str) -> list[str]:
    """The text inside each ``<tool_call>`` of an answer, in order (the last may be unclosed)."""
    return [body for body in _TOOL_CALL.findall(text) if body.strip()]


def read_call(body: str, raw: str) -> dict[str, Any]:
    """One call's ``{"name": …, "arguments": {…}}``: JSON, or a Python literal (GUI-Owl's
    own reader uses ast.literal_eval, so its models may answer with single quotes)."""
    call: Any
    try:
        call = json.loads(body)
    except RecursionError:
        raise PlannerError(
            f"the tool call is nested too deeply: {snippet(body)}", raw=raw
        ) from None
    except json.JSONDecodeError:
        try:
            call = ast.literal_eval(body)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise PlannerError(f"cannot read the tool call {snippet(body)}", raw=raw) from None
    arguments = call.get("arguments") if isinstance(call, dict) else None
    if not isinstance(arguments, dict):
        raise PlannerError(
            f'the tool call needs "arguments": an object, not {snippet(body)}', raw=raw
        )
    return {"name": call.get("name"), "arguments": arguments}


def batch_of(decisions: Sequence[Decision], reason: str) -> Decision:
    """An answer's decisions → the first, the later actions in its `batch`.

    A done or fail ends the answer: it stands alone when it comes first, and after actions
    it is left for the next turn (the model sees what its actions did before it ends)."""
    first = decisions[0]
    if first.action != "tool":
        return replace(first, reason=first.reason or reason)
    actions = []
    for decision in decisions[1:]:
        if decision.action != "tool":
            break
        actions.append(decision)
    return replace(first, reason=reason, batch=tuple(actions))


def last_point(decision: Decision) -> tuple[float, float] | None:
    """Where `decision` leaves the pointer, when it names a point."""
    args = decision.args
    for x_name, y_name in (("to_x", "to_y"), ("x", "y")):
        x, y = args.get(x_name), args.get(y_name)
        if isinstance(x, int | float) and isinstance(y, int | float):
            return float(x), float(y)
    return None
