"""GUI-Owl-1.5: its computer_use function calls (0–1000, several a turn), over chat completions.

From X-PLUG/MobileAgent Mobile-Agent-v3.5/computer_use/utils.py: the system prompt
(SYSTEM_PROMPT, lines 504–584: Qwen's computer_use tool at 1000x1000 plus `interact`, and
the response format "Action: …" then <tool_call>), the user text (build_messages, lines
615–620: "Please generate the next move …", Instruction, Previous actions) and the reader
(extract_tool_calls, lines 670–687: every <tool_call> block, read as a Python literal); the
runner (run_gui_owl_1_5_for_pc.py) executes every call of an answer in order — our batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.core.ports import DecideRequest
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.backends import Backend
from desktop_agent.planner.backends.qwen3_vl import DESCRIPTION
from desktop_agent.planner.function_calls import computer_use_function, decide_calls, tools_prompt
from desktop_agent.planner.grammars import parse_qwen_tool_call
from desktop_agent.planner.profiles import ModelSpace
from desktop_agent.planner.prompt import progress_parts, text_and_image
from desktop_agent.planner.screen_text import SCREEN_TEXT_RULE

_INTERACT = ("interact", "Resolve the blocking window by interacting with the user.")
RESPONSE_FORMAT = (
    "\n\n# Response format\n\nResponse format for every step:\n"
    "1) Action: a short imperative describing what to do in the UI.\n"
    "2) A single <tool_call>...</tool_call> block containing only the JSON: "
    '{"name": <function-name>, "arguments": <args-json-object>}.\n\n'
    "Rules:\n- Output exactly in the order: Action, <tool_call>.\n"
    "- Be brief: one for Action.\n"
    "- Do not output anything else outside those two parts.\n"
    "- If finishing, use action=terminate in the tool call.\n"
    f"- {SCREEN_TEXT_RULE} Here the goal is the Instruction.\n"
    "- A small panel showing the task and a Stop button ('Desktop Agent — acting') is your "
    "own status panel: ignore it."
)


def owl_call(
    arguments: dict[str, Any],
    tools: Sequence[ToolSpec],
    raw: str,
    pointer: tuple[float, float] | None,
) -> Decision:
    """One GUI-Owl call: Qwen's actions, and `interact` (the person is needed) → fail."""
    if arguments.get("action") == "interact":
        text = arguments.get("text")
        if not isinstance(text, str):
            raise PlannerError('"interact" needs "text": what the person should do', raw=raw)
        return Decision(action="fail", reason=f"the model needs the user: {text}", raw=raw)
    return parse_qwen_tool_call(arguments, tools, raw, pointer)


class GuiOwlFormat:
    """GUI-Owl-1.5's prompt and its calls (no response_format)."""

    structured = False

    def messages(
        self, request: DecideRequest, image_url: str, space: ModelSpace
    ) -> list[dict[str, Any]]:
        allowed = (spec.name for spec in request.tools)
        function = computer_use_function(allowed, DESCRIPTION, extra=(_INTERACT,))
        text = "\n\n".join(
            [
                "Please generate the next move according to the UI screenshot, instruction "
                "and previous actions.",
                f"Instruction: {request.goal}",
                "Previous actions:",
                *progress_parts(request, space),
            ]
        )
        return text_and_image(tools_prompt([function]) + RESPONSE_FORMAT, text, image_url)

    def parse(self, text: str, tools: Sequence[ToolSpec]) -> Decision:
        head = text.split("<tool_call>", 1)[0]
        reason = head.split("Action:", 1)[-1].strip()
        return decide_calls(text, tools, owl_call, ("computer_use",), reason)


BACKEND = Backend(
    name="gui_owl",
    protocol="chat completions, GUI-Owl-1.5's computer_use calls (<tool_call>s, 0–1000)",
    chat=GuiOwlFormat(),
)
