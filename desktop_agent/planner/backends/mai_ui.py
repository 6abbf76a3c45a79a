"""MAI-UI as a planner: its mobile_use calls (<thinking>, <tool_call>, 0–999) over chat.

From Tongyi-MAI/MAI-UI: the system prompt src/prompt.py (MAI_MOBILE_SYS_PROMPT, lines
18–50, with the ask_user/double_click action space of lines 101–112) and the reader
src/mai_naivigation_agent.py (parse_tagged_text, lines 61–104: the <thinking> and the one
<tool_call> JSON; coordinates over SCALE_FACTOR = 999, line 38). The phone's actions that
have no desktop meaning (long_press, open, the back/home/menu buttons) are not offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.core.ports import DecideRequest
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.backends import Backend
from desktop_agent.planner.backends.ui_tars import UI_TARS_SCROLL_CLICKS
from desktop_agent.planner.function_calls import decide_calls
from desktop_agent.planner.grammars import checked, parse_qwen_tool_call, snippet, xy
from desktop_agent.planner.profiles import ModelSpace
from desktop_agent.planner.prompt import progress_parts, text_and_image
from desktop_agent.planner.screen_text import SCREEN_TEXT_RULE

#: MAI-UI's action lines (src/prompt.py) → the tool each needs; "" for every run
_ACTIONS: tuple[tuple[str, str], ...] = (
    ('{"action": "click", "coordinate": [x, y]}', "click"),
    ('{"action": "double_click", "coordinate": [x, y]}', "click"),
    ('{"action": "type", "text": ""}', "type_text"),
    (
        '{"action": "swipe", "direction": "up or down or left or right", "coordinate": [x, y]}'
        ' # "coordinate" is optional. Use the "coordinate" if you want to swipe a specific '
        "UI element.",
        "scroll",
    ),
    ('{"action": "drag", "start_coordinate": [x1, y1], "end_coordinate": [x2, y2]}', "drag"),
    ('{"action": "system_button", "button": "enter"}', "hotkey"),
    ('{"action": "wait"}', "wait"),
    ('{"action": "terminate", "status": "success or fail"}', ""),
    (
        '{"action": "answer", "text": "xxx"} # Use escape characters \\\\\', \\\\", and '
        "\\\\n in text part to ensure we can parse the text in normal python string format.",
        "",
    ),
    (
        '{"action": "ask_user", "text": "xxx"} # you can ask user for more information to '
        "complete the task.",
        "",
    ),  # fmt: skip
)


def system_prompt(allowed: set[str]) -> str:
    actions = "\n".join(line for line, tool in _ACTIONS if not tool or tool in allowed)
    return (
        "You are a GUI agent. You are given a task and your action history, with "
        "screenshots. You need to perform the next action to complete the task.\n\n"
        "## Output Format\nFor each function call, return the thinking process in "
        "<thinking> </thinking> tags, and a json object with function name and arguments "
        "within <tool_call></tool_call> XML tags:\n```\n<thinking>\n...\n</thinking>\n"
        '<tool_call>\n{"name": "mobile_use", "arguments": <args-json-object>}\n'
        "</tool_call>\n```\n\n"
        f"## Action Space\n\n{actions}\n\n\n"
        "## Note\n- Write a small plan and finally summarize your next action (with its "
        "target element) in one sentence in <thinking></thinking> part.\n"
        "- The screen is a computer's desktop; x and y run from 0 to 999 across it.\n"
        f"- {SCREEN_TEXT_RULE} Here the goal is the task below.\n"
        "- A small panel showing the task and a Stop button ('Desktop Agent — acting') is "
        "your own status panel: ignore it.\n"
        "- You must follow the Action Space strictly, and return the correct json object "
        "within <thinking> </thinking> and <tool_call></tool_call> XML tags."
    )


def _point(arguments: dict[str, Any], name: str, raw: str) -> tuple[float, float]:
    value = arguments.get(name)
    if isinstance(value, list) and len(value) == 2:
        x, y = value
        if all(isinstance(n, int | float) and not isinstance(n, bool) for n in (x, y)):
            return float(x), float(y)
    raise PlannerError(f'"{name}" must be [x, y], not {snippet(str(value))}', raw=raw)


def mai_call(
    arguments: dict[str, Any],
    tools: Sequence[ToolSpec],
    raw: str,
    pointer: tuple[float, float] | None,
) -> Decision:
    """One mobile_use call of MAI-UI → Decision in its 0–999 coordinates."""
    action = arguments.get("action")
    if action == "swipe":
        direction = arguments.get("direction")
        # a finger swiping up drags the content up: what lies below comes into view
        amounts = {"up": -UI_TARS_SCROLL_CLICKS, "down": UI_TARS_SCROLL_CLICKS}
        if direction not in amounts:
            raise PlannerError(
                f"swiping {snippet(str(direction))} is not supported; swipe up or down", raw=raw
            )
        args: dict[str, Any] = {"amount": amounts[direction]}
        if "coordinate" in arguments:
            args.update(xy(_point(arguments, "coordinate", raw)))
        return checked("scroll", args, tools, "", raw)
    if action == "drag":
        start = _point(arguments, "start_coordinate", raw)
        end = _point(arguments, "end_coordinate", raw)
        args = {**xy(start), "to_x": max(0, round(end[0])), "to_y": max(0, round(end[1]))}
        return checked("drag", args, tools, "", raw)
    if action == "system_button":
        if str(arguments.get("button", "")).lower() != "enter":
            raise PlannerError(
                f"the button {snippet(str(arguments.get('button')))} is a phone's; on this "
                "desktop only enter is",
                raw=raw,
            )
        return checked("hotkey", {"keys": ["enter"]}, tools, "", raw)
    if action == "ask_user":
        return Decision(
            action="fail", reason=f"the model asks the user: {arguments.get('text', '')}", raw=raw
        )
    if action in ("long_press", "open"):
        raise PlannerError(f"{action} is a phone's action; it is not offered here", raw=raw)
    return parse_qwen_tool_call(arguments, tools, raw, pointer)


class MaiUiFormat:
    """MAI-UI's navigation prompt and calls (no response_format)."""

    structured = False

    def messages(
        self, request: DecideRequest, image_url: str, space: ModelSpace
    ) -> list[dict[str, Any]]:
        text = "\n\n".join(
            [f"Task: {request.goal}", *progress_parts(request, space), f"Turn {request.turn}."]
        )
        return text_and_image(system_prompt({spec.name for spec in request.tools}), text, image_url)

    def parse(self, text: str, tools: Sequence[ToolSpec]) -> Decision:
        # a thinking model closes with </think> (parse_tagged_text, lines 76–79)
        thinking = text.split("<tool_call>", 1)[0]
        for tag in ("<thinking>", "</thinking>", "<think>", "</think>"):
            thinking = thinking.replace(tag, "")
        return decide_calls(text, tools, mai_call, ("mobile_use",), thinking.strip())


BACKEND = Backend(
    name="mai_ui",
    protocol="chat completions, MAI-UI's mobile_use calls (<thinking>, <tool_call>, 0–999)",
    chat=MaiUiFormat(),
)
