"""The backends, one module per answer format or model API, named by a profile row.

The backend named `x` is the module `x` of this package, whose `BACKEND` is it; what a
backend is and how one is found by name is planner/registry.py's (re-exported here).
"""

from __future__ import annotations

from desktop_agent.planner.registry import Backend as Backend
from desktop_agent.planner.registry import ChatFormat as ChatFormat
from desktop_agent.planner.registry import backend_named as backend_named
from desktop_agent.planner.registry import backend_names as backend_names
from desktop_agent.planner.registry import chat_format as chat_format
from desktop_agent.planner.registry import make_planner as make_planner
