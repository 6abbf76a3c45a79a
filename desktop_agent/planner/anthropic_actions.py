"""Anthropic's computer actions (a `computer` tool_use's `input`) → validated Decisions.

The shapes are the anthropic SDK's (anthropic/types/beta/, 2.17): the single tool
(beta_tool_computer_use_20250124.py, _20251124.py) takes `{"action": …}` with the fields of
the toolset members' inputs (beta_computer_*_input.py): `coordinate` [x, y],
`start_coordinate` (left_click_drag), `text` (key, type, hold_key; on a click, drag or
scroll the keys held meanwhile: our `hold`), `scroll_direction` up/down/left/right and
`scroll_amount`, `duration` (wait, hold_key), `repeat` (key), `region` [x0, y0, x1, y1]
(zoom). A click, scroll or mouse_down without `coordinate` acts where the pointer is: the
last point this conversation put it at (the gate judges that point, never "wherever the
pointer is").
Coordinates are pixels of the image the model was sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.grammars import checked, snippet

#: what is answered without a step: the screen (the next turn's screenshot) and a crop
SCREEN_ACTIONS = frozenset({"screenshot", "zoom"})
#: a `key` with `repeat` is this many hotkey steps at most
MAX_REPEAT = 20
#: xdotool's key names (the reference implementation's `xdotool key`) → ours where they differ
_KEYS = {
    "return": "enter",
    "kp_enter": "enter",
    "page_up": "pageup",
    "prior": "pageup",
    "page_down": "pagedown",
    "next": "pagedown",
    "super_l": "win",
    "super_r": "win",
    "control_l": "ctrl",
    "control_r": "ctrl",
    "alt_l": "alt",
    "alt_r": "alt",
    "shift_l": "shift",
    "shift_r": "shift",
    "meta": "win",
    "minus": "-",
    "plus": "+",
    "period": ".",
    "comma": ",",
    "slash": "/",
    "backslash": "\\",
    "kp_add": "+",
}
_CLICKS: dict[str, dict[str, Any]] = {
    "left_click": {},
    "right_click": {"button": "right"},
    "middle_click": {"button": "middle"},
    "double_click": {"clicks": 2},
    "triple_click": {"clicks": 3},
}


@dataclass(frozen=True, slots=True)
class Parsed:
    """One action read: its Decisions (several for a repeated key), or none (screenshot,
    zoom: `zoom` holds the region then), and where the pointer is after it."""

    decisions: tuple[Decision, ...]
    pointer: tuple[int, int] | None
    zoom: tuple[int, int, int, int] | None = None


def key_names(text: Any, raw: str, action: str = "key") -> list[str]:
    """A key or combination ("ctrl+s", "Return", "alt+Tab") → our key names."""
    if not isinstance(text, str) or not text.strip():
        raise PlannerError(f'the {action} action needs "text": the key or combination', raw=raw)
    keys = []
    for part in text.replace(" ", "").split("+"):
        if not part:
            raise PlannerError(f"the key combination {snippet(text)} has an empty key", raw=raw)
        name = part.lower()
        keys.append(_KEYS.get(name, name))
    return keys


def _point(value: Any, name: str, size: tuple[int, int], raw: str, action: str) -> tuple[int, int]:
    if not (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        raise PlannerError(
            f"the {action} action needs {name!r} as [x, y], not {snippet(json.dumps(value))}",
            raw=raw,
        )
    x, y = round(value[0]), round(value[1])
    width, height = size
    if not (0 <= x < width and 0 <= y < height):
        raise PlannerError(
            f"the {action} point {x},{y} is outside the {width}x{height} screenshot", raw=raw
        )
    return x, y


def _at(
    action: dict[str, Any], size: tuple[int, int], pointer: tuple[int, int] | None, raw: str
) -> tuple[int, int]:
    """The action's coordinate, else where this conversation left the pointer."""
    kind = str(action.get("action"))
    if action.get("coordinate") is not None:
        return _point(action["coordinate"], "coordinate", size, raw, kind)
    if pointer is None:
        raise PlannerError(
            f"the {kind} action has no coordinate and the pointer's place is not known yet: "
            "give a coordinate",
            raw=raw,
        )
    return pointer


def _held(action: dict[str, Any], raw: str) -> dict[str, list[str]]:
    """The keys a click, drag or scroll holds down (its `text`, e.g. "shift" or "ctrl+shift")
    as our `hold` argument ({} for none): pressed around it, and the gate asks every time."""
    if action.get("text") is None:
        return {}
    return {"hold": key_names(action["text"], raw, f"{action.get('action')} with keys held")}


def _seconds(action: dict[str, Any], raw: str) -> float:
    value = action.get("duration")
    if isinstance(value, bool) or not isinstance(value, int | float):
        kind = action.get("action")
        raise PlannerError(f'the {kind} action needs "duration" in seconds', raw=raw)
    return float(value)


def parse_action(
    action: Any,
    tools: Sequence[ToolSpec],
    size: tuple[int, int],
    pointer: tuple[int, int] | None,
    reason: str,
    raw: str,
) -> Parsed:
    """One action's input → its Decisions in the model's pixels; PlannerError why it cannot
    run (an unknown action, a missing or malformed field, a point outside the image)."""
    if not isinstance(action, dict):
        raise PlannerError(f"a computer action is not an object: {snippet(str(action))}", raw=raw)
    kind = action.get("action")

    def one(tool: str, args: dict[str, Any], at: tuple[int, int] | None = pointer) -> Parsed:
        return Parsed((checked(tool, args, tools, reason, raw),), at)

    if kind == "screenshot":
        return Parsed((), pointer)
    if kind == "zoom":
        region = action.get("region")
        if not (
            isinstance(region, list)
            and len(region) == 4
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in region)
        ):
            raise PlannerError('the zoom action needs "region": [x0, y0, x1, y1]', raw=raw)
        x0, y0 = _point(region[:2], "region", size, raw, "zoom")
        x1, y1 = round(region[2]), round(region[3])
        if not (x0 < x1 <= size[0] and y0 < y1 <= size[1]):
            raise PlannerError(
                f"the zoom region {region} is not a box inside the {size[0]}x{size[1]} screenshot",
                raw=raw,
            )
        return Parsed((), pointer, zoom=(x0, y0, x1, y1))
    if kind in _CLICKS:
        x, y = _at(action, size, pointer, raw)
        return one("click", {"x": x, "y": y, **_CLICKS[kind], **_held(action, raw)}, (x, y))
    if kind == "mouse_move":
        x, y = _point(action.get("coordinate"), "coordinate", size, raw, kind)
        return one("move_mouse", {"x": x, "y": y}, (x, y))
    if kind == "left_click_drag":
        x0, y0 = _point(action.get("start_coordinate"), "start_coordinate", size, raw, kind)
        x1, y1 = _point(action.get("coordinate"), "coordinate", size, raw, kind)
        args = {"x": x0, "y": y0, "to_x": x1, "to_y": y1, **_held(action, raw)}
        return one("drag", args, (x1, y1))
    if kind in ("left_mouse_down", "left_mouse_up"):
        x, y = _at(action, size, pointer, raw)
        tool = "mouse_down" if kind == "left_mouse_down" else "mouse_up"
        return one(tool, {"x": x, "y": y}, (x, y))
    if kind == "scroll":
        direction = action.get("scroll_direction")
        if direction in ("left", "right"):
            raise PlannerError("horizontal scrolling is not supported; scroll up or down", raw=raw)
        if direction not in ("up", "down"):
            raise PlannerError('the scroll action needs "scroll_direction": up or down', raw=raw)
        amount = action.get("scroll_amount", 3)
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
            raise PlannerError('the scroll action needs "scroll_amount": a count ≥ 1', raw=raw)
        x, y = _at(action, size, pointer, raw)
        notches = min(amount, 100) * (1 if direction == "up" else -1)
        args = {"amount": notches, "x": x, "y": y, **_held(action, raw)}
        return one("scroll", args, (x, y))
    if kind == "type":
        text = action.get("text")
        if not isinstance(text, str) or not text:
            raise PlannerError('the type action needs "text"', raw=raw)
        return one("type_text", {"text": text})
    if kind == "key":
        keys = key_names(action.get("text"), raw)
        repeat = action.get("repeat", 1)
        if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= MAX_REPEAT:
            raise PlannerError(f'the key action\'s "repeat" must be 1 to {MAX_REPEAT}', raw=raw)
        press = checked("hotkey", {"keys": keys}, tools, reason, raw)
        return Parsed((press,) * repeat, pointer)
    if kind == "hold_key":
        keys = key_names(action.get("text"), raw, "hold_key")
        return one("hold_key", {"keys": keys, "seconds": _seconds(action, raw)})
    if kind == "wait":
        return one("wait", {"seconds": _seconds(action, raw)})
    if kind == "cursor_position":
        return one("cursor_position", {})
    raise PlannerError(f"unknown computer action {snippet(str(kind))}", raw=raw)
