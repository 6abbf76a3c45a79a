"""Our own JSON answer (DESIGN §3) over chat completions, asked for with a response_format.

The prompt is planner/prompt.py's, the answer is read by planner/parsing.py (which also takes
a Qwen ``<tool_call>``): both are shared with the other formats' history and grounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desktop_agent.core.models import Decision
from desktop_agent.core.ports import DecideRequest
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.backends import Backend
from desktop_agent.planner.parsing import parse_decision
from desktop_agent.planner.profiles import ModelSpace
from desktop_agent.planner.prompt import build_messages


class JsonFormat:
    """Our JSON decision, `json_schema` → `json_object` → text as the server allows."""

    structured = True

    def messages(
        self, request: DecideRequest, image_url: str, space: ModelSpace
    ) -> list[dict[str, Any]]:
        return build_messages(request, image_url_=image_url, space=space)

    def parse(self, text: str, tools: Sequence[ToolSpec]) -> Decision:
        return parse_decision(text, tools)


BACKEND = Backend(
    name="chat_json",
    protocol="chat completions, our JSON decision (json_schema response format)",
    chat=JsonFormat(),
)
