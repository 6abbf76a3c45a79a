"""UI-TARS: its own "Thought / Action" prompt and action text, over chat completions.

UI-TARS is trained on one prompt shape (bytedance/UI-TARS, codes/ui_tars/prompt.py,
COMPUTER_USE): an output format of ``Thought: …`` and ``Action: …`` and a list of action
calls; the actions offered are those whose tools the run allows. Its answers are read as
codes/ui_tars/action_parser.py reads them, with the box forms ``(x,y)``,
``<|box_start|>(x,y)<|box_end|>``, ``[x1, y1, x2, y2]``, ``<point>x y</point>`` and
``<bbox>x1 y1 x2 y2</bbox>``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.core.ports import DecideRequest
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.backends import Backend
from desktop_agent.planner.grammars import checked, snippet, xy
from desktop_agent.planner.profiles import ModelSpace
from desktop_agent.planner.prompt import progress_parts, text_and_image
from desktop_agent.planner.screen_text import SCREEN_TEXT_RULE

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?")
#: UI-TARS scrolls by "one screen side"; ours counts wheel clicks
UI_TARS_SCROLL_CLICKS = 5
UI_TARS_WAIT_S = 5.0

# ── the request ──────────────────────────────────────────────────────────────

#: action call → the tool it needs (our name), in UI-TARS's own spelling
_ACTIONS: tuple[tuple[str, str], ...] = (
    ("click(start_box='<|box_start|>(x1,y1)<|box_end|>')", "click"),
    ("left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')", "click"),
    ("right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')", "click"),
    (
        "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', "
        "end_box='<|box_start|>(x3,y3)<|box_end|>')",
        "drag",
    ),
    ("hotkey(key='ctrl c') # keys split by a space, lowercase, at most 3", "hotkey"),
    (
        "type(content='xxx') # escape \\', \\\" and \\n; end with \\n to submit",
        "type_text",
    ),
    (
        "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up')",
        "scroll",
    ),
    ("wait() # sleep 5 s and look again", "wait"),
)
_ALWAYS = (
    "finished(content='xxx') # the task is done; say what was achieved",
    "call_user() # the task cannot be done, or needs the user's help",
)


def ui_tars_system_prompt(request: DecideRequest, coordinates: str) -> str:
    allowed = {spec.name for spec in request.tools}
    actions = [call for call, tool in _ACTIONS if tool in allowed]
    return (
        "You are a GUI agent. You are given a task and your action history, with screenshots. "
        "You need to perform the next action to complete the task.\n\n"
        "## Output Format\n```\nThought: ...\nAction: ...\n```\n\n"
        "## Action Space\n" + "\n".join([*actions, *_ALWAYS]) + "\n\n"
        "## Note\n"
        "- Use English in the Thought part.\n"
        "- Write a small plan and summarize your next action (with its target element) in "
        "one sentence in the Thought part.\n"
        f"- Points are {coordinates} of the screenshot.\n"
        f"- {SCREEN_TEXT_RULE} Here the goal is the User Instruction below.\n"
        "- A small panel showing the task and a Stop button ('Desktop Agent — acting') is "
        "your own status panel: ignore it.\n\n"
        f"## User Instruction\n{request.goal}"
    )


def ui_tars_messages(
    request: DecideRequest, image_url: str, space: ModelSpace
) -> list[dict[str, Any]]:
    """The chat messages of one decision for a UI-TARS model."""
    then = "Answer with 'Thought: …' and exactly one 'Action: …' from the action space."
    parts = progress_parts(request, space, then)
    parts.append(f"Turn {request.turn}: the screenshot is the screen now. Give the next action.")
    system = ui_tars_system_prompt(request, space.text)
    return text_and_image(system, "\n\n".join(parts), image_url)


# ── the answer ───────────────────────────────────────────────────────────────


def _point(box: Any, raw: str) -> tuple[float, float]:
    """The centre of a UI-TARS box or point in any of its spellings."""
    numbers = [float(n) for n in _NUMBERS.findall(str(box))] if box is not None else []
    if len(numbers) == 2:
        return numbers[0], numbers[1]
    if len(numbers) == 4:
        return (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
    raise PlannerError(f"cannot read a point from {snippet(str(box))}", raw=raw)


def _ui_tars_call(action: str, raw: str) -> tuple[str, dict[str, Any]]:
    """(function name, keyword arguments) of one action call, e.g. click(start_box='(1,2)')."""
    text = action.strip()
    if not text.endswith(")"):
        text += ")"  # the model stopped right before the closing parenthesis
    try:
        node = ast.parse(text.replace("\n", "\\n"), mode="eval").body
    except SyntaxError:
        raise PlannerError(f"cannot read the action {snippet(action)}", raw=raw) from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise PlannerError(f"the action is not a call: {snippet(action)}", raw=raw)
    kwargs: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None or not isinstance(keyword.value, ast.Constant):
            raise PlannerError(f"cannot read the action {snippet(action)}", raw=raw)
        kwargs[keyword.arg] = keyword.value.value
    return node.func.id, kwargs


def parse_ui_tars(text: str, tools: Sequence[ToolSpec]) -> Decision:
    """A UI-TARS answer ("Thought: …\\nAction: …") → Decision in the model's coordinates."""
    body = _THINK.sub("", text).strip()
    if "Action:" not in body:
        raise PlannerError(
            f"the answer has no 'Action:' line: {snippet(body)}; answer with "
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
        args: dict[str, Any] = xy(_point(box, text))
        if name == "left_double":
            args["clicks"] = 2
        elif name == "right_single":
            args["button"] = "right"
        elif name == "middle_single":
            args["button"] = "middle"
        return checked("click", args, tools, thought, text)
    if name in ("drag", "select"):
        start = _point(box, text)
        end = _point(kwargs.get("end_box", kwargs.get("end_point")), text)
        args = {**xy(start), "to_x": max(0, round(end[0])), "to_y": max(0, round(end[1]))}
        return checked("drag", args, tools, thought, text)
    if name == "hotkey":
        keys = str(kwargs.get("key", kwargs.get("hotkey", ""))).split()
        if not keys:
            raise PlannerError("hotkey() names no key", raw=text)
        return checked("hotkey", {"keys": keys}, tools, thought, text)
    if name == "type":
        content = str(kwargs.get("content", ""))
        enter = content.endswith("\n")
        args = {"text": content.rstrip("\n")}
        if enter:
            args["enter"] = True
        return checked("type_text", args, tools, thought, text)
    if name == "scroll":
        direction = str(kwargs.get("direction", "down")).strip().lower()
        if direction not in ("up", "down"):
            raise PlannerError(
                f"scrolling {direction} is not supported; scroll up or down", raw=text
            )
        amount = UI_TARS_SCROLL_CLICKS if direction == "up" else -UI_TARS_SCROLL_CLICKS
        args = {"amount": amount}
        if box is not None:
            args.update(xy(_point(box, text)))
        return checked("scroll", args, tools, thought, text)
    if name == "wait":
        return checked("wait", {"seconds": UI_TARS_WAIT_S}, tools, thought, text)
    if name == "finished":
        message = str(kwargs.get("content", "")) or thought
        return Decision(action="done", message=message, reason=thought, raw=text)
    if name == "call_user":
        return Decision(
            action="fail", reason=thought or "the model asks for the user's help", raw=text
        )
    raise PlannerError(f"unknown UI-TARS action {name}()", raw=text)


class UiTarsFormat:
    """UI-TARS's prompt and action text (no response_format)."""

    structured = False

    def messages(
        self, request: DecideRequest, image_url: str, space: ModelSpace
    ) -> list[dict[str, Any]]:
        return ui_tars_messages(request, image_url, space)

    def parse(self, text: str, tools: Sequence[ToolSpec]) -> Decision:
        return parse_ui_tars(text, tools)


BACKEND = Backend(
    name="ui_tars",
    protocol="chat completions, UI-TARS's own Thought/Action text (codes/ui_tars/prompt.py)",
    chat=UiTarsFormat(),
)
