"""The Qwen family's function-call prompt and computer_use tool, and answers of <tool_call>s.

Qwen3-VL, GUI-Owl-1.5 (Qwen3-VL based) and MAI-UI are prompted with qwen-agent's "nous"
function-call template — a ``<tools>`` block of JSON function signatures and the rule to
answer ``<tool_call>{"name": …, "arguments": …}</tool_call>`` — and answer one or more such
calls. Sources (docs/planner.md): QwenLM/Qwen3-VL cookbooks/utils/agent_function_call.py
(the computer_use tool, lines 146–226) and cookbooks/mobile_agent.ipynb (the system prompt);
X-PLUG/MobileAgent Mobile-Agent-v3.5/computer_use/utils.py (GUI-Owl-1.5's, lines 504–584).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.grammars import (
    MAX_CALLS,
    batch_of,
    last_point,
    read_call,
    snippet,
    tool_call_bodies,
)

#: qwen-agent's nous template around the functions, as the vendors' prompts spell it
_TOOLS_HEAD = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
)
_TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)

#: computer_use's actions: (name, its description in agent_function_call.py, our tool; ""
#: for an action every run has: ending the task or answering)
_AT = "at a specified (x, y) pixel coordinate on the screen."
COMPUTER_USE_ACTIONS: tuple[tuple[str, str, str], ...] = (
    (
        "key",
        "Performs key down presses on the arguments passed in order, then performs key "
        "releases in reverse order.",
        "hotkey",
    ),
    ("type", "Type a string of text on the keyboard.", "type_text"),
    (
        "mouse_move",
        "Move the cursor to a specified (x, y) pixel coordinate on the screen.",
        "move_mouse",
    ),
    ("left_click", f"Click the left mouse button {_AT}", "click"),
    (
        "left_click_drag",
        "Click and drag the cursor to a specified (x, y) pixel coordinate on the screen.",
        "drag",
    ),
    ("right_click", f"Click the right mouse button {_AT}", "click"),
    ("middle_click", f"Click the middle mouse button {_AT}", "click"),
    ("double_click", f"Double-click the left mouse button {_AT}", "click"),
    ("triple_click", f"Triple-click the left mouse button {_AT}", "click"),
    ("scroll", "Performs a scroll of the mouse scroll wheel.", "scroll"),
    ("wait", "Wait specified seconds for the change to happen.", "wait"),
    ("terminate", "Terminate the current task and report its completion status.", ""),
    ("answer", "Answer a question.", ""),
)
#: computer_use's parameters but `action` (agent_function_call.py, lines 198–224)
_PARAMETERS: dict[str, dict[str, Any]] = {
    "keys": {"description": "Required only by `action=key`.", "type": "array"},
    "text": {
        "description": "Required only by `action=type` and `action=answer`.",
        "type": "string",
    },
    "coordinate": {
        "description": "(x, y): The x (pixels from the left edge) and y (pixels from the top "
        "edge) coordinates to move the mouse to.",
        "type": "array",
    },
    "pixels": {
        "description": "The amount of scrolling to perform. Positive values scroll up, "
        "negative values scroll down. Required only by `action=scroll`.",
        "type": "number",
    },
    "time": {
        "description": "The seconds to wait. Required only by `action=wait`.",
        "type": "number",
    },
    "status": {
        "description": "The status of the task. Required only by `action=terminate`.",
        "type": "string",
        "enum": ["success", "failure"],
    },
}


def tools_prompt(functions: Iterable[dict[str, Any]]) -> str:
    """The nous ``# Tools`` section offering `functions` (OpenAI function objects)."""
    lines = (json.dumps({"type": "function", "function": f}, ensure_ascii=False) for f in functions)
    return _TOOLS_HEAD + "\n".join(lines) + _TOOLS_TAIL


def computer_use_function(
    allowed: Iterable[str],
    description: str,
    extra: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """The computer_use function offering the actions whose tools the run allows (and
    `extra`: (action, description) every run has)."""
    names = set(allowed)
    actions = [(a, text) for a, text, tool in COMPUTER_USE_ACTIONS if not tool or tool in names]
    actions += list(extra)
    listing = "\n".join(f"* `{action}`: {text}" for action, text in actions)
    return {
        "name": "computer_use",
        "description": description,
        "parameters": {
            "properties": {
                "action": {
                    "description": f"The action to perform. The available actions are:\n{listing}",
                    "enum": [action for action, _ in actions],
                    "type": "string",
                },
                **_PARAMETERS,
            },
            "required": ["action"],
            "type": "object",
        },
    }


#: one call's arguments → its Decision; `pointer` is where the answer's earlier calls left it
CallReader = Callable[
    [dict[str, Any], Sequence[ToolSpec], str, "tuple[float, float] | None"], Decision
]


def decide_calls(
    text: str,
    tools: Sequence[ToolSpec],
    read: CallReader,
    names: Sequence[str],
    reason: str = "",
) -> Decision:
    """Every ``<tool_call>`` of an answer, read by `read` → one Decision and its batch.

    `names` are the function names the prompt offered; PlannerError naming why when the
    answer holds no usable call."""
    bodies = tool_call_bodies(text)
    if not bodies:
        raise PlannerError(
            f"the answer has no <tool_call>: {snippet(text)}; answer with one "
            '<tool_call>{"name": …, "arguments": …}</tool_call>',
            raw=text,
        )
    if len(bodies) > MAX_CALLS:
        raise PlannerError(
            f"the answer holds {len(bodies)} tool calls; give at most {MAX_CALLS}", raw=text
        )
    decisions: list[Decision] = []
    pointer: tuple[float, float] | None = None
    for body in bodies:
        call = read_call(body, text)
        if call.get("name") not in names:
            raise PlannerError(
                f"unknown function {snippet(str(call.get('name')))}; call {' or '.join(names)}",
                raw=text,
            )
        decision = read(call["arguments"], tools, text, pointer)
        pointer = last_point(decision) or pointer
        decisions.append(decision)
    return batch_of(decisions, reason)
