"""The OpenAI-compatible planner: prompt, answer parsing, transport, and the vision check."""

from __future__ import annotations

from desktop_agent.planner.capabilities import (
    VisionCache,
    VisionVerdict,
    check_reachable,
    resolve_vision,
)
from desktop_agent.planner.client import OpenAIPlanner, ResponseFormatMemory
from desktop_agent.planner.parsing import parse_decision

__all__ = [
    "OpenAIPlanner",
    "ResponseFormatMemory",
    "VisionCache",
    "VisionVerdict",
    "check_reachable",
    "parse_decision",
    "resolve_vision",
]
