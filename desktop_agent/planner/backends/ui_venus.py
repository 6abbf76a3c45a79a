"""UI-Venus-1.5: its <think>/<action>/<conclusion> answer and action calls, over chat completions.

From inclusionAI/UI-Venus models/navigation/utils.py: the prompt (WEB_USER_PROMPT, lines
4–47 — the web one, whose action space has the desktop's hotkeys, hover and double click),
the reader (parse_answer, lines 138–219: `Name(key=value, …)`, points `(x,y)`) and
models/navigation/ui_venus_navi_agent.py (lines 125–155: the action is the text inside
<action>; points are pixels of the screenshot after smart_resize, factor 28, with the
3136 … 12845056 pixel bounds of scripts/run_navi.sh). Its navigation runner sends a plain
"You are a helpful assistant." system message and the prompt as the user's text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.core.ports import DecideRequest
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.backends import Backend
from desktop_agent.planner.backends.ui_tars import UI_TARS_SCROLL_CLICKS
from desktop_agent.planner.grammars import checked, snippet, xy
from desktop_agent.planner.profiles import ModelSpace
from desktop_agent.planner.prompt import progress_parts, text_and_image
from desktop_agent.planner.screen_text import SCREEN_TEXT_RULE

_CALL = re.compile(r"^(\w+)\((.*)\)$", re.DOTALL)
_POINT = re.compile(r"^\(\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*\)$")
_KEY = re.compile(r"""['"]([^'"]+)['"]""")
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_ACTION = re.compile(r"<action>(.*?)</action>", re.DOTALL)
WAIT_S = 1.0

#: the web prompt's action lines → the tool each needs; "" for every run
_ACTIONS: tuple[tuple[str, str], ...] = (
    ("Click(box=(x1,y1))", "click"),
    ("DoubleClick(box=(x1,y1))", "click"),
    ("Drag(start=(x1,y1), end=(x2,y2))", "drag"),
    ("Scroll(direction='down or up')", "scroll"),
    ("Type(content='')", "type_text"),
    ("Hover(box=(x1,y1))", "move_mouse"),
    ("PressEnter()", "hotkey"),
    (
        "Hotkey(keys=['ctrl', 'c']) # Split keys with comma and wrap each key in single "
        "quotes. Do not use more than 3 keys in one Hotkey action.",
        "hotkey",
    ),
    ("Wait()", "wait"),
    ("Finished(content='')", ""),
    ("CallUser(content='')", ""),
)


def user_prompt(request: DecideRequest, space: ModelSpace) -> str:
    allowed = {spec.name for spec in request.tools}
    actions = "\n".join(f"- {line}" for line, tool in _ACTIONS if not tool or tool in allowed)
    previous = "\n\n".join(progress_parts(request, space))
    return (
        "**You are a GUI Agent.**\nYour task is to analyze a given user task, review current "
        "screenshot and previous actions, and determine the next action to complete the "
        "task.\n\n### Available Actions\nYou may execute one of the following functions:\n"
        f"{actions}\n\n### User Task\n{request.goal}\n\n### Previous Actions\n{previous}\n\n"
        "### Output Format\n<think> your thinking process </think>\n"
        "<action> the next action </action>\n"
        "<conclusion> the conclusion about the next action </conclusion>\n\n"
        "### Instruction\n- Make sure you understand the task goal to avoid wrong actions.\n"
        "- Make sure you carefully examine the the current screenshot. Sometimes the "
        "summarized history might not be reliable, over-claiming some effects.\n"
        "- To input text: first `Click(box=...)` on the textbox, then `Type(content='...')`; "
        "press Enter only with `PressEnter()`.\n"
        "- When the task asks a question, answer it with `CallUser(content='...')` at the end.\n"
        "- Execute only one action per step.\n"
        f"- {SCREEN_TEXT_RULE} Here the goal is the User Task.\n"
        "- A small panel showing the task and a Stop button ('Desktop Agent — acting') is "
        "your own status panel: ignore it."
    )


def _split(params: str) -> list[str]:
    """`params` split at the commas outside quotes, parentheses and brackets (as
    parse_answer's _split_parameters, which also counts brackets for Hotkey's list)."""
    parts, current, quote, depth = [], "", "", 0
    for char in params:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def venus_call(action: str, raw: str) -> tuple[str, dict[str, str]]:
    """`Name(key=value, …)` → (Name, {key: value with its quotes taken off})."""
    match = _CALL.match(action.strip())
    if match is None:
        raise PlannerError(f"cannot read the action {snippet(action)}", raw=raw)
    params: dict[str, str] = {}
    for pair in _split(match.group(2).strip()):
        key, _, value = pair.partition("=")
        params[key.strip()] = value.strip().strip("'\"")
    return match.group(1), params


def _point(params: dict[str, str], name: str, raw: str) -> tuple[float, float]:
    match = _POINT.match(params.get(name, "").replace(" ", ""))
    if match is None:
        raise PlannerError(f"{name} must be (x,y), not {snippet(params.get(name, ''))}", raw=raw)
    return float(match.group(1)), float(match.group(2))


def parse_venus(text: str, tools: Sequence[ToolSpec]) -> Decision:
    """A UI-Venus answer → Decision in the model's coordinates."""
    found = _ACTION.search(text)
    if found is None:
        raise PlannerError(
            f"the answer has no <action>: {snippet(text)}; answer with <think>, <action> "
            "and <conclusion>",
            raw=text,
        )
    thought = _THINK.search(text)
    reason = thought.group(1).strip() if thought else ""
    name, params = venus_call(found.group(1), text)
    if name in ("Click", "DoubleClick"):
        args: dict[str, Any] = xy(_point(params, "box", text))
        if name == "DoubleClick":
            args["clicks"] = 2
        return checked("click", args, tools, reason, text)
    if name == "Hover":
        return checked("move_mouse", xy(_point(params, "box", text)), tools, reason, text)
    if name == "Drag":
        end = _point(params, "end", text)
        args = {**xy(_point(params, "start", text)), "to_x": max(0, round(end[0]))}
        args["to_y"] = max(0, round(end[1]))
        return checked("drag", args, tools, reason, text)
    if name == "Scroll":
        direction = params.get("direction", "").lower()
        if direction not in ("up", "down"):
            raise PlannerError("Scroll needs direction='up' or 'down'", raw=text)
        amount = UI_TARS_SCROLL_CLICKS if direction == "up" else -UI_TARS_SCROLL_CLICKS
        return checked("scroll", {"amount": amount}, tools, reason, text)
    if name == "Type":
        if "content" not in params:
            raise PlannerError("Type needs content='…'", raw=text)
        return checked("type_text", {"text": params["content"]}, tools, reason, text)
    if name == "Hotkey":
        keys = _KEY.findall(params.get("keys", ""))
        if not keys:
            raise PlannerError("Hotkey needs keys=['ctrl', 'c']", raw=text)
        return checked("hotkey", {"keys": keys}, tools, reason, text)
    if name == "PressEnter":
        return checked("hotkey", {"keys": ["enter"]}, tools, reason, text)
    if name == "Wait":
        return checked("wait", {"seconds": WAIT_S}, tools, reason, text)
    if name in ("Finished", "CallUser"):
        # CallUser is how the prompt has the model reply with its answer
        message = params.get("content", "") or reason
        return Decision(action="done", message=message, reason=reason, raw=text)
    raise PlannerError(f"unknown UI-Venus action {name}()", raw=text)


class UiVenusFormat:
    """UI-Venus-1.5's prompt and action text (no response_format)."""

    structured = False

    def messages(
        self, request: DecideRequest, image_url: str, space: ModelSpace
    ) -> list[dict[str, Any]]:
        text = f"{user_prompt(request, space)}\n\nPoints are {space.text} of the screenshot."
        return text_and_image("You are a helpful assistant.", text, image_url)

    def parse(self, text: str, tools: Sequence[ToolSpec]) -> Decision:
        return parse_venus(text, tools)


BACKEND = Backend(
    name="ui_venus",
    protocol="chat completions, UI-Venus-1.5's <action> calls (pixels of its resized image)",
    chat=UiVenusFormat(),
)
