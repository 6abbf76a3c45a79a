"""Qwen3-VL: its computer_use function call (0–1000 coordinates), over chat completions.

The system prompt is qwen-agent's function-call template offering the cookbooks'
computer_use tool (QwenLM/Qwen3-VL cookbooks/utils/agent_function_call.py, the ComputerUse
class) with "The screen's resolution is 1000x1000", followed by the cookbook's response
format (Thought, Action, one <tool_call>; cookbooks/mobile_agent.ipynb). The user message
carries the query and the task progress as the cookbook's does, and the screenshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desktop_agent.core.models import Decision
from desktop_agent.core.ports import DecideRequest
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.backends import Backend
from desktop_agent.planner.function_calls import computer_use_function, decide_calls, tools_prompt
from desktop_agent.planner.grammars import parse_qwen_tool_call
from desktop_agent.planner.profiles import ModelSpace
from desktop_agent.planner.prompt import progress_parts, text_and_image
from desktop_agent.planner.screen_text import SCREEN_TEXT_RULE

#: the ComputerUse description of agent_function_call.py (lines 150–158), at 0–1000
DESCRIPTION = (
    "Use a mouse and keyboard to interact with a computer, and take screenshots.\n"
    "* This is an interface to a desktop GUI. You do not have access to a terminal or "
    "applications menu. You must click on desktop icons to start applications.\n"
    "* Some applications may take time to start or process actions, so you may need to wait "
    "and take successive screenshots to see the results of your actions. E.g. if you click "
    "on Firefox and a window doesn't open, try wait and taking another screenshot.\n"
    "* The screen's resolution is 1000x1000.\n"
    "* Whenever you intend to move the cursor to click on an element like an icon, you "
    "should consult a screenshot to determine the coordinates of the element before moving "
    "the cursor.\n"
    "* Make sure to click any buttons, links, icons, etc with the cursor tip in the center "
    "of the element. Don't click boxes on their edges."
)
#: the cookbook's response format (mobile_agent.ipynb's system prompt), and our rules
RESPONSE_FORMAT = (
    "\n\n# Response format\n\nResponse format for every step:\n"
    "1) Thought: one concise sentence explaining the next move (no multi-step reasoning).\n"
    "2) Action: a short imperative describing what to do in the UI.\n"
    "3) A single <tool_call>...</tool_call> block containing only the JSON: "
    '{"name": <function-name>, "arguments": <args-json-object>}.\n\n'
    "Rules:\n- Output exactly in the order: Thought, Action, <tool_call>.\n"
    "- Be brief: one sentence for Thought, one for Action.\n"
    "- Do not output anything else outside those three parts.\n"
    "- If finishing, use action=terminate in the tool call.\n"
    f"- {SCREEN_TEXT_RULE} Here the goal is the user query.\n"
    "- A small panel showing the task and a Stop button ('Desktop Agent — acting') is your "
    "own status panel: ignore it."
)


class Qwen3ComputerUse:
    """Qwen3-VL's computer_use function call (no response_format)."""

    structured = False

    def messages(
        self, request: DecideRequest, image_url: str, space: ModelSpace
    ) -> list[dict[str, Any]]:
        function = computer_use_function((spec.name for spec in request.tools), DESCRIPTION)
        system = tools_prompt([function]) + RESPONSE_FORMAT
        text = "\n\n".join(
            [
                f"The user query: {request.goal}.",
                "Task progress (what you have done so far on the computer):",
                *progress_parts(request, space),
                f"Turn {request.turn}: the screenshot is the screen now.",
            ]
        )
        return text_and_image(system, text, image_url)

    def parse(self, text: str, tools: Sequence[ToolSpec]) -> Decision:
        thought = text.split("<tool_call>", 1)[0].strip()
        return decide_calls(text, tools, parse_qwen_tool_call, ("computer_use",), thought)


BACKEND = Backend(
    name="qwen3_vl",
    protocol="chat completions, Qwen3-VL's computer_use function call (<tool_call>, 0–1000)",
    chat=Qwen3ComputerUse(),
)
