"""The MCP tool list: desktop tools from the planner's own tool models, and the task tools.

One source: a desktop tool's name, description, input schema and hints are those of its
ToolSpec in core/builtin_tools.py (what the planner is offered; its `mcp_name`, its risk, its
`passive` trait), so the two lists cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from desktop_agent.core.models import MonitorField, Risk
from desktop_agent.core.tools import SCREEN_TOOL, ToolSpec
from desktop_agent.planner.profiles import ProfileField

#: MCP name → the built-in tool a call of it runs (screenshot is the loop's observation): the
#: built-in tools that have an MCP name
DESKTOP_TOOLS: dict[str, str] = {s.mcp_name: s.name for s in BUILTIN_TOOLS if s.mcp_name}

GATE_NOTE = (
    " Runs as a one-step run through the agent's gate: it may ask the user first "
    "(in the desktop app, else through this client), and a denied or stopped call "
    "returns an error result."
)
SCREENSHOT_NOTE = (
    " Returns the screenshot as an image and the element list as text, one element a line "
    '(`[id] role "name" @ left,top widthxheight`); coordinates and element ids of the other '
    "desktop tools refer to the latest screenshot."
)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunTaskArgs(_Args):
    goal: str = Field(min_length=1, max_length=2000, description="what to do, in words")
    max_steps: int | None = Field(default=None, ge=1, le=500, description="turn limit")
    allowed_tools: list[str] | None = Field(
        default=None,
        min_length=1,
        description="the tools the run may use (default: all built-in; an empty list is none)",
    )
    model_profile: ProfileField = Field(
        default=None,
        max_length=64,
        description="the model's protocol family, e.g. qwen3-vl or anthropic-computer "
        "(default: the settings' choice; auto: by the model's name)",
    )

    monitor: MonitorField = Field(
        default=None,
        description="the monitor the model is shown: auto (the active window's), all (every "
        "monitor as one image) or a number, 1 the primary (default: the settings' choice)",
    )


class RunIdArgs(_Args):
    run_id: str = Field(min_length=1, max_length=64)


class GetRunArgs(RunIdArgs):
    screenshots: bool = Field(
        default=False, description="also return the run's screenshots as images (the last 10)"
    )


class ListRunsArgs(_Args):
    limit: int = Field(default=20, ge=1, le=500)


class NoArgs(_Args):
    pass


@dataclass(frozen=True, slots=True)
class McpTool:
    """One tool of the list: its name, what it says, and the model its arguments validate by."""

    name: str
    description: str
    args_model: type[BaseModel]
    kind: Literal["desktop", "task"]
    #: the built-in tool a desktop tool runs
    builtin: str = ""
    read_only: bool = False
    #: it may destroy or start something beyond the screen (a dangerous tool: launch_app)
    destructive: bool = False

    def input_schema(self) -> dict[str, Any]:
        return self.args_model.model_json_schema()


def _desktop_tool(spec: ToolSpec) -> McpTool:
    note = SCREENSHOT_NOTE if spec.name == SCREEN_TOOL else GATE_NOTE
    return McpTool(
        spec.mcp_name,
        spec.description + note,
        spec.args_model,
        "desktop",
        spec.name,
        read_only=spec.passive,
        destructive=spec.risk is Risk.DANGEROUS,
    )


_TASK_TOOLS = (
    McpTool(
        "run_task",
        "Carry out a whole task on this desktop with the agent's own model (observe, decide, "
        "gate, act until done); progress is reported per step. Returns the final status, stop "
        "reason, summary and run id. The user's stop hotkey ends it at once.",
        RunTaskArgs,
        "task",
    ),
    McpTool("list_runs", "The run history, newest first.", ListRunsArgs, "task", read_only=True),
    McpTool(
        "get_run",
        "One run with its steps as text; screenshots=true adds its screenshots as images.",
        GetRunArgs,
        "task",
        read_only=True,
    ),
    McpTool("pause_run", "Pause a run of this server before its next action.", RunIdArgs, "task"),
    McpTool("resume_run", "Resume a paused run of this server.", RunIdArgs, "task"),
    McpTool(
        "stop_all",
        "Stop every run, of this server and of every other instance on this data dir.",
        NoArgs,
        "task",
    ),
)


def mcp_tools(specs: tuple[ToolSpec, ...] = BUILTIN_TOOLS) -> dict[str, McpTool]:
    """Every tool this server lists, by name: the desktop tools (those with an MCP name, the
    screenshot first), then the task tools."""
    listed = sorted((spec for spec in specs if spec.mcp_name), key=lambda s: s.name != SCREEN_TOOL)
    tools = {spec.mcp_name: _desktop_tool(spec) for spec in listed}
    tools.update({tool.name: tool for tool in _TASK_TOOLS})
    return tools
