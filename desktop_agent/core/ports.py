"""The ports of the core: small Protocols the adapters implement and the tests fake."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import BaseModel

from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Decision,
    Element,
    Grounding,
    MonitorChoice,
    Observation,
    RunStatus,
    RunView,
    StepView,
    StoreWrite,
    TaskSpec,
    ToolResult,
)
from desktop_agent.core.tools import ToolSpec


@dataclass(frozen=True, slots=True)
class DecideRequest:
    goal: str
    run_id: str
    turn: int
    steps: Sequence[StepView]
    observation: Observation
    tools: Sequence[ToolSpec]
    #: the ids of the safety checks the person allowed in this run (the only ones a planner
    #: may acknowledge to its provider)
    acknowledged: frozenset[str] = frozenset()
    #: the screen inside a box (left, top, width, height) of `observation`'s screenshot
    #: pixels, captured anew at the screen's own resolution (a model's zoom); None when the
    #: observer cannot (RegionSource)
    region: Callable[[tuple[int, int, int, int]], Awaitable[bytes]] | None = None


@runtime_checkable
class Planner(Protocol):
    async def decide(self, request: DecideRequest) -> Decision:
        """The next action; raises PlannerError when the model's answer is unusable."""
        ...


@dataclass(frozen=True, slots=True)
class GroundRequest:
    """A coordinate call to refine: its tool, the target it names and the planner's point.

    `region`, when the observer can capture one (RegionSource), gives a box of the
    observation (screenshot pixels) captured anew at the screen's own resolution.
    """

    tool: str
    target: str
    point: tuple[int, int]
    observation: Observation
    region: Callable[[tuple[int, int, int, int]], Awaitable[bytes]] | None = None


@runtime_checkable
class Grounder(Protocol):
    async def ground(self, request: GroundRequest) -> Grounding:
        """The point to act on. Never raises for a bad or missing answer: it keeps the first
        point and says why (`Grounding.refined` False); a stop cancels it."""
        ...


@runtime_checkable
class RegionSource(Protocol):
    async def region(self, observation: Observation, box: tuple[int, int, int, int]) -> bytes:
        """The screen inside `box` (screenshot pixels of `observation`) captured anew at the
        screen's own resolution, encoded (JPEG or PNG)."""
        ...


@runtime_checkable
class OwnWindowsSource(Protocol):
    async def own_windows_now(self, observation: Observation) -> tuple[Element, ...] | None:
        """The parts of the app's own windows no other window covers, now, in `observation`'s
        screenshot pixels (as `Observation.own_windows`); None when this system has no way
        to tell (no backend, no X display); ObservationError when it has one and the read
        failed (the call is then refused: Windows, EnumWindows). Asked at action time: the
        observation a pointer call was decided on may be older than a window of the app
        that popped up since (another run's question)."""
        ...

    async def pointer_now(self, observation: Observation) -> tuple[int, int] | None:
        """Where the pointer is now, in `observation`'s screenshot pixels (a scroll without a
        point scrolls there); None when it cannot be read or is off the screenshot."""
        ...


@runtime_checkable
class WindowsNowSource(Protocol):
    async def window_ids_now(self) -> frozenset[str] | None:
        """The windows on the screen now, identified as `Observation.window_ids` identifies
        them: a cheap read (the X11 window list, a few ms) asked before an input action, so
        that a window that came up since the look it was decided on (a popup, a
        notification) is looked at; None when it cannot be read."""
        ...


@runtime_checkable
class ScreenObserver(Protocol):
    async def observe(self) -> Observation:
        """A screenshot and the element inventory; raises ObservationError."""
        ...


@runtime_checkable
class MonitorChooser(Protocol):
    def showing(self, monitor: MonitorChoice) -> ScreenObserver:
        """This observer as a run that chose its own monitor sees the screen (the run's
        `monitor`: API, MCP, `run --monitor`); everything but the monitor shown is shared."""
        ...


@dataclass(frozen=True, slots=True)
class ToolContext:
    run_id: str
    observation: Observation | None
    #: set when the run is stopped; work in threads checks it between input events
    cancelled: threading.Event
    #: set while the run is paused, and when it is stopped (RunControl.halted): no input event
    #: is sent while it is set; None: only `cancelled` halts
    halted: threading.Event | None = None


@runtime_checkable
class ToolExecutor(Protocol):
    async def execute(self, spec: ToolSpec, args: BaseModel, context: ToolContext) -> ToolResult:
        """Run one tool; raises ToolError (or anything) on failure."""
        ...


@runtime_checkable
class HeldInput(Protocol):
    """An executor whose tools may leave input held between calls (mouse_down)."""

    async def release_held(self) -> str:
        """Let go of whatever a tool left held, whatever the stop or pause say (a release is
        never input to hold back); what was let go in words, "" for nothing."""
        ...


@dataclass(frozen=True, slots=True)
class Focus:
    """Where the keys go now, as the focus probe tells it: the focused control's
    accessibility role ("password text", "terminal", "text", ...) and its place — what
    identifies the active window and the focused control on this desktop (an X11 window id,
    an AT-SPI object path, a UI Automation window handle and runtime id: opaque, only ever
    compared with another Focus's). Each None when it cannot be known."""

    role: str | None = None
    place: str | None = None


@runtime_checkable
class FocusProbe(Protocol):
    async def focused(self) -> Focus:
        """The control that has the keyboard focus now: its role and place (`Focus`), each
        None when it cannot be known.

        Asked at action time, with a deadline the loop sets (a late answer knows nothing).
        """
        ...


@runtime_checkable
class PermissionGate(Protocol):
    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        """Ask a human; the loop awaits the answer with a timeout that denies."""
        ...


@runtime_checkable
class RunRepository(Protocol):
    async def create_run(self, spec: TaskSpec, *, run_id: str | None = None) -> RunView: ...

    async def get_run(self, run_id: str) -> RunView | None: ...

    async def list_runs(
        self, *, limit: int = 100, status: RunStatus | None = None
    ) -> list[RunView]: ...

    async def save_run(self, run: RunView) -> None: ...

    async def list_steps(self, run_id: str) -> list[StepView]: ...

    async def delete_run(self, run_id: str) -> bool:
        """Forget a run and its steps (a start that was refused); True when it existed."""
        ...

    async def write(self, writes: Sequence[StoreWrite]) -> None:
        """Store these as one, off the event loop: the artifact files first, then every row
        in order in one transaction (all of the rows or none); raises StoreError.

        The loop hands over what it holds once before each wait on the outside world (the
        model, a tool, the screen, a person), so a turn costs one or two of these.
        """
        ...

    def artifact_path(self, run_id: str, name: str) -> str:
        """Where `write` puts the Artifact (run_id, name): relative to the data dir, with
        forward slashes; StoreError for a name that is not one plain file name part."""
        ...

    async def list_grants(self) -> set[str]: ...

    async def add_grant(self, tool: str) -> None: ...

    async def remove_grant(self, tool: str) -> None: ...
