"""OpenAI's computer actions (a `computer_call`'s `actions` or `action`) → validated Decisions.

The shapes are the openai SDK's (openai/types/responses/computer_action.py, and
response_computer_tool_call.py's `Action*` for the legacy `action`): click (button left,
right, wheel, back, forward), double_click, drag (`path`), move, scroll (`scroll_x`,
`scroll_y` pixels), keypress (`keys`), type (`text`), wait, screenshot; the pointer actions
may name `keys` held (our `hold`: pressed around the action, the gate asks every time).
Coordinates are pixels of the screenshot the model was sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.grammars import checked, snippet

#: a wheel notch scrolls about this many pixels in most toolkits
SCROLL_PX_PER_NOTCH = 100
#: OpenAI's `wait` names no duration; its reference loop (openai-cua-sample-app) waits 1 s
WAIT_S = 1.0
#: the click buttons we press, by OpenAI's name (no back/forward: our input has none)
_BUTTONS = {"left": "left", "right": "right", "wheel": "middle"}
#: OpenAI's key names (the reference loop's CUA_KEY_TO_PLAYWRIGHT_KEY) → ours, where they differ
_KEYS = {
    "arrowup": "up",
    "arrowdown": "down",
    "arrowleft": "left",
    "arrowright": "right",
    "meta": "win",
    "/": "/",
    "\\": "\\",
}


def _int(action: dict[str, Any], name: str, raw: str) -> int:
    value = action.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        kind = action.get("type")
        raise PlannerError(
            f"the {kind} action needs {name!r} as a number, not {snippet(json.dumps(value))}",
            raw=raw,
        )
    return round(value)


def _point(action: dict[str, Any], size: tuple[int, int], raw: str) -> dict[str, int]:
    return _inside({"x": _int(action, "x", raw), "y": _int(action, "y", raw)}, size, action, raw)


def _inside(
    point: dict[str, int], size: tuple[int, int], action: dict[str, Any], raw: str
) -> dict[str, int]:
    width, height = size
    x, y = point["x"], point["y"]
    if not (0 <= x < width and 0 <= y < height):
        raise PlannerError(
            f"the {action.get('type')} point {x},{y} is outside the {width}x{height} screenshot",
            raw=raw,
        )
    return point


def _held(action: dict[str, Any], raw: str) -> dict[str, list[str]]:
    """The keys a pointer action holds down, as our `hold` argument ({} for none)."""
    held = action.get("keys")
    if not held:
        return {}
    if not isinstance(held, list):
        raise PlannerError(f"the {action.get('type')} action's keys must be a list", raw=raw)
    return {"hold": [key_name(key) for key in held]}


def key_name(key: Any) -> str:
    """OpenAI's name of a key → ours (core/keys.py validates it)."""
    name = str(key).strip().lower()
    return _KEYS.get(name, name)


def _scroll_notches(action: dict[str, Any], raw: str) -> int:
    dx, dy = _int(action, "scroll_x", raw), _int(action, "scroll_y", raw)
    if dy == 0:
        if dx:
            raise PlannerError("horizontal scrolling is not supported; scroll up or down", raw=raw)
        raise PlannerError("the scroll action scrolls by 0 pixels", raw=raw)
    notches = max(1, min(100, round(abs(dy) / SCROLL_PX_PER_NOTCH)))
    # OpenAI's scroll_y is positive downwards; our amount is positive upwards
    return -notches if dy > 0 else notches


def action_decision(
    action: Any, tools: Sequence[ToolSpec], size: tuple[int, int], reason: str, raw: str
) -> Decision | None:
    """One computer action → a validated Decision (screenshot pixels of `size`); None for a
    `screenshot`, which the call's output answers. PlannerError says why it cannot run."""
    if not isinstance(action, dict):
        raise PlannerError(f"a computer action is not an object: {snippet(str(action))}", raw=raw)
    kind = action.get("type")
    if kind == "screenshot":
        return None
    if kind == "click":
        button = _BUTTONS.get(str(action.get("button", "left")))
        if button is None:
            raise PlannerError(
                f"the {action.get('button')!r} mouse button is not supported "
                "(left, right and wheel are)",
                raw=raw,
            )
        args = {**_point(action, size, raw), "button": button, **_held(action, raw)}
        return checked("click", args, tools, reason, raw)
    if kind == "double_click":
        args = {**_point(action, size, raw), "clicks": 2, **_held(action, raw)}
        return checked("click", args, tools, reason, raw)
    if kind == "move":
        args = {**_point(action, size, raw), **_held(action, raw)}
        return checked("move_mouse", args, tools, reason, raw)
    if kind == "drag":
        path = action.get("path")
        if not isinstance(path, list) or len(path) < 2:
            raise PlannerError("the drag action needs a path of at least two points", raw=raw)
        start = _point({"type": "drag", **path[0]}, size, raw) if isinstance(path[0], dict) else {}
        end = _point({"type": "drag", **path[-1]}, size, raw) if isinstance(path[-1], dict) else {}
        if not start or not end:
            raise PlannerError("the drag path's points must be {x, y} objects", raw=raw)
        between = [
            _point({"type": "drag", **point}, size, raw) if isinstance(point, dict) else {}
            for point in path[1:-1]
        ]
        if not all(between):
            raise PlannerError("the drag path's points must be {x, y} objects", raw=raw)
        args = {**start, "to_x": end["x"], "to_y": end["y"], **_held(action, raw)}
        if between:
            args["via"] = [[point["x"], point["y"]] for point in between]
        return checked("drag", args, tools, reason, raw)
    if kind == "scroll":
        args = {
            "amount": _scroll_notches(action, raw),
            **_point(action, size, raw),
            **_held(action, raw),
        }
        return checked("scroll", args, tools, reason, raw)
    if kind == "keypress":
        keys = action.get("keys")
        if not isinstance(keys, list) or not keys:
            raise PlannerError('the keypress action needs "keys": a list of key names', raw=raw)
        return checked("hotkey", {"keys": [key_name(k) for k in keys]}, tools, reason, raw)
    if kind == "type":
        text = action.get("text")
        if not isinstance(text, str):
            raise PlannerError('the type action needs "text"', raw=raw)
        return checked("type_text", {"text": text}, tools, reason, raw)
    if kind == "wait":
        return checked("wait", {"seconds": WAIT_S}, tools, reason, raw)
    raise PlannerError(f"unknown computer action type {snippet(str(kind))}", raw=raw)


def batch_decision(
    actions: Sequence[Any], tools: Sequence[ToolSpec], size: tuple[int, int], reason: str, raw: str
) -> Decision:
    """A computer_call's actions → its first Decision, the rest in `batch`. A call of
    screenshots only is a wait of 0 s (the output's screenshot answers it)."""
    decisions = [
        decision
        for action in actions
        if (decision := action_decision(action, tools, size, reason, raw)) is not None
    ]
    if not decisions:
        return checked("wait", {"seconds": 0}, tools, reason or "a screenshot", raw)
    first, *rest = decisions
    return Decision(
        action="tool",
        tool=first.tool,
        args=first.args,
        reason=first.reason,
        raw=raw,
        batch=tuple(rest),
    )
