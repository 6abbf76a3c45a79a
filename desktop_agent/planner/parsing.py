"""parse_decision: the model's text → a validated Decision, or a PlannerError that says why not."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.grammars import (
    find_qwen_tool_call,
    parse_qwen_tool_call,
    validated_args,
)

ACTIONS = ("tool", "done", "fail")
TOO_DEEP = "the answer nests its JSON too deeply to read; answer with one flat JSON object"
#: an answer longer than this is not scanned for objects (max_tokens keeps real ones far below)
_MAX_SCAN = 50_000
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCED = re.compile(r"```[\w-]*[ \t]*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def _snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _objects_in(text: str) -> list[dict[str, Any]]:
    """The top-level JSON objects found in `text`, in order."""
    found: list[dict[str, Any]] = []
    index = text.find("{")
    while index != -1:
        try:
            value, end = _DECODER.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        index = text.find("{", end)
    return found


def extract_object(text: str) -> dict[str, Any]:
    """The one JSON object of an answer: strict JSON, in a code fence, or amid prose."""
    body = _THINK.sub("", text).strip()
    if not body:
        raise PlannerError("the answer was empty; answer with one JSON object", raw=text)
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        pass
    else:
        if isinstance(value, dict):
            return value
        kind = _JSON_KINDS.get(type(value), "value")
        raise PlannerError(
            f"the answer is a JSON {kind}, not an object; answer with one JSON object", raw=text
        )
    if len(body) > _MAX_SCAN:
        raise PlannerError(f"the answer is not JSON ({len(body)} characters of text)", raw=text)
    blocks = _FENCED.findall(body) or [body]
    objects = [obj for block in blocks for obj in _objects_in(block)]
    if len(objects) == 1:
        return objects[0]
    if len(objects) > 1:
        raise PlannerError(
            f"the answer holds {len(objects)} JSON objects; give exactly one action per turn",
            raw=text,
        )
    raise PlannerError(f"the answer is not JSON: {_snippet(body)}", raw=text)


def _text_field(obj: dict[str, Any], name: str, raw: str) -> str:
    value = obj.get(name, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise PlannerError(f'"{name}" must be a string, not {_dumps(value)}', raw=raw)
    return value


def _dumps(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def decision_from_object(obj: dict[str, Any], tools: Sequence[ToolSpec], raw: str) -> Decision:
    """Check an answer object against the answer format and the run's tools."""
    names = [spec.name for spec in tools]
    if "action" not in obj:
        raise PlannerError('missing "action": it must be "tool", "done" or "fail"', raw=raw)
    action = obj["action"]
    if action not in ACTIONS:
        if isinstance(action, str) and action in names:
            raise PlannerError(
                f'"action" must be "tool", "done" or "fail", not {_dumps(action)}; '
                f'to use {action}, answer {{"action": "tool", "tool": "{action}", ...}}',
                raw=raw,
            )
        raise PlannerError(
            f'"action" must be "tool", "done" or "fail", not {_dumps(action)}', raw=raw
        )
    reason = _text_field(obj, "reason", raw)
    message = _text_field(obj, "message", raw)
    if action != "tool":
        return Decision(action=action, reason=reason, message=message, raw=raw)
    tool = obj.get("tool")
    if not tool:
        raise PlannerError(f'missing "tool": name one of the tools: {", ".join(names)}', raw=raw)
    spec = next((spec for spec in tools if spec.name == tool), None)
    if spec is None:
        raise PlannerError(
            f"unknown tool {_dumps(tool)}; the tools you may use are: {', '.join(names)}",
            raw=raw,
        )
    args = obj.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise PlannerError(f'"args" must be a JSON object, not {_dumps(args)}', raw=raw)
    return Decision(
        action="tool", tool=spec.name, args=validated_args(spec, args, raw), reason=reason, raw=raw
    )


def parse_decision(text: str, tools: Sequence[ToolSpec]) -> Decision:
    """The Decision in a model's answer; PlannerError with a precise message when there is none.

    Tolerated: strict JSON, a ```json fence, prose around exactly one JSON object, a
    leading <think> block, and a Qwen-VL ``<tool_call>`` of its computer_use function (what
    Qwen2.5-VL / Qwen3-VL were trained to answer). Never guessed: an action described in
    prose only. Points stay in the model's coordinates (see profiles.decision_to_screenshot).
    """
    try:
        call = find_qwen_tool_call(text)
        if call is not None:
            return parse_qwen_tool_call(call, tools, text)
        return decision_from_object(extract_object(text), tools, text)
    except RecursionError:
        # json's C scanner recurses per level: a deep answer is the model's mistake, not a fault
        raise PlannerError(TOO_DEEP, raw=text) from None
