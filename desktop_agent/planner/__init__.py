"""The OpenAI-compatible planner: prompt, answer parsing, transport, and the vision check.

The planner itself (`OpenAIPlanner`, `ResponseFormatMemory`: planner/client.py, with its
prompt, grammars and grounding) is imported when first named: the app's model check at start
needs only the vision check, and the client's modules were ~20 ms of CPU on the way to the
window's Start (benchmarks/README.md, "Issue 22, the app usable after its paint").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from desktop_agent.planner.capabilities import (
    VisionCache,
    VisionVerdict,
    check_reachable,
    resolve_vision,
)
from desktop_agent.planner.parsing import parse_decision

if TYPE_CHECKING:
    from desktop_agent.planner.client import OpenAIPlanner, ResponseFormatMemory

__all__ = [
    "OpenAIPlanner",
    "ResponseFormatMemory",
    "VisionCache",
    "VisionVerdict",
    "check_reachable",
    "parse_decision",
    "resolve_vision",
]

#: what is imported from planner/client.py when first named (PEP 562)
_FROM_CLIENT = ("OpenAIPlanner", "ResponseFormatMemory")


def __getattr__(name: str) -> Any:
    if name in _FROM_CLIENT:
        value = getattr(importlib.import_module("desktop_agent.planner.client"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
