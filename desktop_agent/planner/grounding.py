"""Grounding, the pure part: the zoom crop around a point, its exact way back, and the point
questions and answers of each grounder format (no I/O; planner/grounder.py sends them).

A crop keeps the screenshot's aspect, is `zoom_fraction` of its width, lies inside the
screenshot (moved, never cut, at an edge) and is sent at the size the whole screenshot would
be sent at, so the model sees it magnified. The model answers in its profile's space *of the
crop image*: pixels of it, 0–`scale`, or pixels after its own resize; `Crop.to_screenshot`
maps that back to screenshot pixels, which the executor maps to the screen as for any click.

Formats (the grounder's own prompt and answer; sources in docs/planner.md):

| format  | asked                                   | answers                                   |
|---------|-----------------------------------------|-------------------------------------------|
| json    | our one-line question                   | ``{"x": 12, "y": 34}``                    |
| ui_tars | UI-TARS's grounding line                | ``click(start_box='(x,y)')`` or ``(x,y)`` |
| gta1    | GTA1's system prompt, image size stated | ``(x,y)``                                 |
| holo    | Holo's localization prompt              | ``{"x": 12, "y": 34}``                    |
| mai_ui  | MAI-UI's grounding prompt               | ``<answer>{"coordinate": [x, y]}</answer>``|
| qwen    | the computer_use tool, size stated      | ``<tool_call>`` ``left_click`` coordinate |

`parse_point` reads every one of these answers whatever the format asked (a model often
answers in the form it was trained on rather than the one asked for); the space is the
profile's, never guessed from the answer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from desktop_agent.core.errors import PlannerError
from desktop_agent.planner.grammars import find_qwen_tool_call
from desktop_agent.planner.profiles import ModelProfile, PointFormat, describe_space, sent_size

#: a crop is never smaller than this many screenshot pixels wide (or the screenshot)
MIN_CROP_PX = 64
_THINK = re.compile(r"<(think|grounding_think)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_ANSWER = re.compile(r"<answer>\s*(.*?)\s*(?:</answer>|$)", re.DOTALL | re.IGNORECASE)
_NUMBER = r"-?\d+(?:\.\d+)?"
_START_BOX = re.compile(r"(?:start_box|point)\s*=\s*['\"](.*?)['\"]", re.DOTALL)
_POINT_TAG = re.compile(rf"<point>\s*({_NUMBER})[\s,]+({_NUMBER})\s*</point>")
_PAIR = re.compile(rf"[(\[]\s*({_NUMBER})\s*,\s*({_NUMBER})\s*[)\]]")
_BOX4 = re.compile(
    rf"[(\[]\s*({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})\s*[)\]]"
)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class Crop:
    """A region of the screenshot (screenshot pixels) and the size it is sent at."""

    left: int
    top: int
    width: int
    height: int
    sent_width: int
    sent_height: int

    @property
    def box(self) -> tuple[int, int, int, int]:
        return self.left, self.top, self.width, self.height

    def contains(self, x: float, y: float) -> bool:
        return self.left <= x <= self.left + self.width and self.top <= y <= self.top + self.height

    def to_screenshot(self, profile: ModelProfile, x: float, y: float) -> tuple[int, int]:
        """A point the model gave on the crop image → screenshot pixels.

        PlannerError when it lies outside the crop (the caller then keeps its first point).
        """
        model_w, model_h = profile.model_size(self.sent_width, self.sent_height)
        if not (0 <= x <= model_w and 0 <= y <= model_h):
            space = describe_space(profile, self.sent_width, self.sent_height)
            raise PlannerError(f"the point {x:g},{y:g} is outside the crop ({space})")
        # a pixel answer names a pixel of the image: aim at its centre; 0–1000 is continuous
        half = 0.0 if profile.coordinates == "normalized" else 0.5
        sx = self.left + min(x + half, model_w) * self.width / model_w
        sy = self.top + min(y + half, model_h) * self.height / model_h
        return (
            min(math.floor(sx), self.left + self.width - 1),
            min(math.floor(sy), self.top + self.height - 1),
        )

    def from_screenshot(self, profile: ModelProfile, x: float, y: float) -> tuple[float, float]:
        """A screenshot point in the model's coordinates of the crop image (the inverse)."""
        model_w, model_h = profile.model_size(self.sent_width, self.sent_height)
        half = 0.0 if profile.coordinates == "normalized" else 0.5
        return (
            (x - self.left) * model_w / self.width - half,
            (y - self.top) * model_h / self.height - half,
        )


def crop_around(point: tuple[int, int], width: int, height: int, profile: ModelProfile) -> Crop:
    """The zoom crop around `point` on a width × height screenshot, for `profile`'s model.

    Its width is the profile's `zoom_fraction` of the screenshot's (at least MIN_CROP_PX),
    its height keeps the aspect; at an edge it is moved inside, never cut.
    """
    crop_w = min(width, max(MIN_CROP_PX, round(width * profile.zoom_fraction)))
    crop_h = min(height, max(1, round(crop_w * height / width)))
    x, y = point
    left = min(max(0, round(x - crop_w / 2)), width - crop_w)
    top = min(max(0, round(y - crop_h / 2)), height - crop_h)
    sent_w, sent_h = sent_size(profile, width, height)
    # the crop has the screenshot's aspect up to a pixel: sent as big as the screenshot is
    sent_h = max(1, round(sent_w * crop_h / crop_w))
    return Crop(left, top, crop_w, crop_h, sent_w, sent_h)


# ── the question ─────────────────────────────────────────────────────────────


def _image_part(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def _fenced(target: str) -> str:
    # the target is the planner's words, which may quote the screen: one line, no fences
    return " ".join(target.replace("```", "'''").split())


def _ui_tars_question(
    what: str, url: str, space: str, size: tuple[int, int], scale: int
) -> list[dict[str, Any]]:
    text = (
        f"Output only the coordinate of one point in your response. What element matches "
        f"the following task: {what}"
    )
    return [{"role": "user", "content": [_image_part(url), {"type": "text", "text": text}]}]


def _gta1_question(
    what: str, url: str, space: str, size: tuple[int, int], scale: int
) -> list[dict[str, Any]]:
    model_w, model_h = size
    system = (
        "You are an expert UI element locator. Given a GUI image and a user's element "
        "description, provide the coordinates of the specified element as a single (x,y) "
        f"point. The image resolution is height {model_h} and width {model_w}. For "
        "elements with area, return the center point.\n\nOutput the coordinate pair "
        "exactly:\n(x,y)"
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": [_image_part(url), {"type": "text", "text": what}]},
    ]


def _holo_question(
    what: str, url: str, space: str, size: tuple[int, int], scale: int
) -> list[dict[str, Any]]:
    text = (
        "Localize an element on the GUI image according to the provided target and output "
        'a click position.\n * You must output a valid JSON following the format: {"x": '
        f'<int>, "y": <int>}} ({space})\n Your target is: {what}'
    )
    return [{"role": "user", "content": [_image_part(url), {"type": "text", "text": text}]}]


def _mai_ui_question(
    what: str, url: str, space: str, size: tuple[int, int], scale: int
) -> list[dict[str, Any]]:
    system = (
        "You are a GUI grounding agent. Given a screenshot and an element description, "
        "locate the element. Output your reasoning in <grounding_think></grounding_think> "
        'and the point in <answer>{"coordinate": [x, y]}</answer>, x and y from 0 to '
        f"{scale} relative to the image width and height."
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": [{"type": "text", "text": what}, _image_part(url)]},
    ]


def _qwen_question(
    what: str, url: str, space: str, size: tuple[int, int], scale: int
) -> list[dict[str, Any]]:
    model_w, model_h = size
    tool = {
        "type": "function",
        "function": {
            "name": "computer_use",
            "description": (
                "Use a mouse to interact with a computer.\n* The screen's resolution is "
                f"{model_w}x{model_h}."
            ),
            "parameters": {
                "properties": {
                    "action": {"enum": ["left_click"], "type": "string"},
                    "coordinate": {"type": "array", "description": "(x, y)"},
                },
                "required": ["action", "coordinate"],
                "type": "object",
            },
        },
    }
    system = (
        "You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to "
        "assist with the user query.\n\nYou are provided with function signatures within "
        f"<tools></tools> XML tags:\n<tools>\n{json.dumps(tool)}\n</tools>\n\nFor each "
        "function call, return a json object with function name and arguments within "
        '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, '
        '"arguments": <args-json-object>}\n</tool_call>'
    )
    return [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": [{"type": "text", "text": f"Click {what}."}, _image_part(url)],
        },
    ]


def _json_question(
    what: str, url: str, space: str, size: tuple[int, int], scale: int
) -> list[dict[str, Any]]:
    text = (
        f"Where is {what} in this image? Answer with one JSON object and nothing else: "
        f'{{"x": <x>, "y": <y>}}, the point to click, as {space}.'
    )
    return [{"role": "user", "content": [{"type": "text", "text": text}, _image_part(url)]}]


#: how each point format is asked (its source's prompt; `json` is our own question): the
#: target's words, the image, the coordinate space in words, the model's size, its scale
PointQuestion = Callable[[str, str, str, tuple[int, int], int], list[dict[str, Any]]]
POINT_QUESTIONS: Mapping[PointFormat, PointQuestion] = {
    "ui_tars": _ui_tars_question,
    "gta1": _gta1_question,
    "holo": _holo_question,
    "mai_ui": _mai_ui_question,
    "qwen": _qwen_question,
    "json": _json_question,
}


def point_messages(
    profile: ModelProfile, target: str, image_url: str, width: int, height: int
) -> list[dict[str, Any]]:
    """The chat messages asking `profile`'s model where `target` is in a width × height image."""
    question = POINT_QUESTIONS[profile.point_format]
    space = describe_space(profile, width, height)
    size = profile.model_size(width, height)
    return question(_fenced(target), image_url, space, size, profile.scale)


# ── the answer ───────────────────────────────────────────────────────────────


def _snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _xy_of(value: Any) -> tuple[float, float] | None:
    """A point from a list [x, y] or a box [x1, y1, x2, y2] (its centre)."""
    if isinstance(value, list | tuple):
        numbers = [_number(item) for item in value]
        if all(n is not None for n in numbers):
            found = [n for n in numbers if n is not None]
            if len(found) == 2:
                return found[0], found[1]
            if len(found) == 4:
                return (found[0] + found[2]) / 2, (found[1] + found[3]) / 2
    return None


def _point_in_object(obj: Any) -> tuple[float, float] | None:
    if isinstance(obj, list) and obj:
        return _point_in_object(obj[0])  # Qwen's [{"bbox_2d": [...], "label": ...}]
    if not isinstance(obj, dict):
        return None
    x, y = _number(obj.get("x")), _number(obj.get("y"))
    if x is not None and y is not None:
        return x, y
    for key in ("coordinate", "point", "point_2d", "position", "bbox_2d", "bbox", "box"):
        point = _xy_of(obj.get(key))
        if point is not None:
            return point
    arguments = obj.get("arguments")
    return _point_in_object(arguments) if isinstance(arguments, dict) else None


_JSON_START = re.compile(r"[{\[]")


def _json_values(text: str) -> list[Any]:
    """The JSON objects and arrays found in `text`, in order (not nested ones twice)."""
    values: list[Any] = []
    end = 0
    for match in _JSON_START.finditer(text):
        if match.start() < end:
            continue
        try:
            value, end = _DECODER.raw_decode(text, match.start())
        except (json.JSONDecodeError, RecursionError):
            continue
        values.append(value)
    return values


def parse_point(text: str) -> tuple[float, float]:
    """The point in a grounding answer, in the model's own coordinates.

    Reads, in this order: a Qwen ``<tool_call>``, MAI-UI's ``<answer>``, a JSON object with
    x/y or coordinate/point/bbox, UI-TARS's ``start_box='…'`` or ``<point>x y</point>``,
    a bare ``(x,y)`` / ``[x, y]`` or a four-number box (its centre). PlannerError otherwise.
    """
    body = _THINK.sub("", text).strip()
    if not body:
        raise PlannerError("the grounding answer was empty", raw=text)
    call = find_qwen_tool_call(body)
    if call is not None:
        point = _xy_of(call.get("coordinate"))
        if point is None:
            raise PlannerError(f"the tool call names no coordinate: {_snippet(body)}", raw=text)
        return point
    answer = _ANSWER.search(body)
    if answer is not None:
        body = answer.group(1)
    for value in _json_values(body):
        point = _point_in_object(value)
        if point is None:
            point = _xy_of(value) if isinstance(value, list) else None
        if point is not None:
            return point
    start = _START_BOX.search(body)
    if start is not None:
        body = start.group(1)
    tag = _POINT_TAG.search(body)
    if tag is not None:
        return float(tag.group(1)), float(tag.group(2))
    box = _BOX4.search(body)
    if box is not None:
        x1, y1, x2, y2 = (float(n) for n in box.groups())
        return (x1 + x2) / 2, (y1 + y2) / 2
    pair = _PAIR.search(body)
    if pair is not None:
        return float(pair.group(1)), float(pair.group(2))
    raise PlannerError(f"no point in the grounding answer: {_snippet(body)}", raw=text)
