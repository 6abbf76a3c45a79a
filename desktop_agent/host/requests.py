"""What a face asks for when it starts a run — a goal (`RunRequest`) or a run the store holds
queued (`QueuedRun`) here, a saved routine (`RoutineRequest`) in host/routines.py — each with
its own `parts`: what its run does inside its admission (host/starts.py `admit`, which asks
no request what it is). And the one `task_spec` that turns a goal or a routine into the
run's TaskSpec."""

from __future__ import annotations

import concurrent.futures
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from desktop_agent.core.errors import DesktopAgentError, RefusedToStart, RunNotFound
from desktop_agent.core.models import (
    MonitorChoice,
    RunKind,
    RunStatus,
    RunView,
    TaskSpec,
    parse_monitor,
    utcnow,
)
from desktop_agent.core.routine import Routine
from desktop_agent.core.routine_player import PATIENCE_TURNS
from desktop_agent.core.runner import Find, Prepare
from desktop_agent.core.tools import NO_TOOL_ALLOWED

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.core.models import VisionSetting
    from desktop_agent.core.ports import Planner
    from desktop_agent.settings import Settings

#: set by a face on another thread when the run may act (the window is out of the way);
#: awaited inside the run after its model check, raced against a stop like the rest
Ready = concurrent.futures.Future[None]


def new_run_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class RunRequest:
    """A run for a goal. `None` means the settings' value.

    The id is made with the request, by the face, so the face knows it before the run
    exists anywhere: a `Host.stop(run_id)` that lands after `Host.start` reaches the run.
    """

    goal: str
    run_id: str = field(default_factory=new_run_id)
    base_url: str | None = None
    model: str | None = None
    max_steps: int | None = None
    max_failures: int | None = None
    allowed_tools: tuple[str, ...] | None = None
    vision: VisionSetting | None = None
    #: a model profile for this run (planner/profiles.py; None: the settings' choice)
    model_profile: str | None = None
    #: the monitor this run's model is shown: auto, all or N (None: the settings' choice)
    monitor: MonitorChoice | None = None
    ready: Ready | None = field(default=None, compare=False)

    def parts(self, agent: Agent) -> tuple[Find, Prepare]:
        """Its view made now, in memory (RefusedToStart at once: an empty goal, an unknown
        tool); its planner once the model is checked."""
        run = queued_run(agent, self)

        async def made() -> RunView:
            return run

        return made, checked(agent, self.vision)


@dataclass(frozen=True, slots=True)
class QueuedRun:
    """The run the store holds queued under `run_id` (the API's POST made it)."""

    run_id: str
    vision: VisionSetting | None = None
    ready: Ready | None = field(default=None, compare=False)

    def parts(self, agent: Agent) -> tuple[Find, Prepare]:
        """The stored run, read inside the run (RunNotFound; NotQueued for one that ended or
        runs elsewhere); its planner once the model is checked."""
        run_id = self.run_id

        async def find() -> RunView:
            run = await agent.repo.get_run(run_id)
            if run is None:
                raise RunNotFound(f"no run {run_id!r}")
            if run.status is not RunStatus.QUEUED:
                raise NotQueued(run)
            return run

        return find, checked(agent, self.vision)


class StartRequest(Protocol):
    """What a face asks to start: its run's id (made by the face), the face's `ready` (None:
    act at once) and what its run does inside its admission (`parts`: find its view, then
    prepare its planner). RunRequest, QueuedRun, host/routines.py's RoutineRequest."""

    @property
    def run_id(self) -> str: ...

    @property
    def ready(self) -> Ready | None: ...

    def parts(self, agent: Agent) -> tuple[Find, Prepare]: ...


class NotQueued(DesktopAgentError):
    """The stored run is not queued (it has ended, or runs in another process): it does not
    start here. `run` is its view."""

    def __init__(self, run: RunView) -> None:
        super().__init__(f"run {run.id} is {run.status.value}; it cannot start")
        self.run = run


def checked(agent: Agent, vision: VisionSetting | None) -> Prepare:
    """A run's planner once its model server answers and its model can see (Agent.prepare)."""

    async def prepare(run: RunView) -> Planner:
        return await agent.prepare(run, vision)

    return prepare


def queued_run(agent: Agent, request: RunRequest) -> RunView:
    """The request as a queued run view (in memory; the loop stores it)."""
    spec = task_spec(agent.settings, request)
    allowed = spec.allowed_tools or agent.registry.offered_names()
    unknown = agent.registry.unknown(allowed)
    if unknown:
        raise RefusedToStart(f"unknown tool(s): {', '.join(unknown)}")
    spec = replace(spec, allowed_tools=tuple(allowed))
    return RunView.queued(spec, request.run_id, utcnow())


def task_spec(settings: Settings, request: RunRequest | Routine) -> TaskSpec:
    """The TaskSpec of a goal's run (what the request leaves out is the settings') or of a
    saved routine's (every tool: the agent may take over; room for the routine's steps and
    their waits on top of the settings' steps). `allowed_tools` stays empty for "every tool
    offered": the runner names them (core/runner.py `create`, `queued_run`).
    RefusedToStart (one line) for an empty goal or a run that may use no tool."""
    if isinstance(request, Routine):
        return TaskSpec(
            goal=request.goal,
            max_steps=min(500, settings.max_steps + 2 * len(request.steps) + PATIENCE_TURNS),
            max_failures=settings.max_failures,
            model=settings.model,
            base_url=settings.base_url,
            kind=RunKind.ROUTINE,
            routine=request.name,
        )
    goal = request.goal.strip()
    if not goal:
        raise RefusedToStart("the goal is empty")
    # None is "every tool"; an empty list allows none, and a run with no tool is refused
    if request.allowed_tools is not None and not request.allowed_tools:
        raise RefusedToStart(NO_TOOL_ALLOWED)
    return TaskSpec(
        goal=goal,
        max_steps=request.max_steps or settings.max_steps,
        max_failures=request.max_failures or settings.max_failures,
        allowed_tools=request.allowed_tools or (),
        model=request.model or settings.model,
        base_url=request.base_url or settings.base_url,
        model_profile=_profile(request.model_profile),
        monitor=_monitor(request.monitor),
    )


def _monitor(choice: MonitorChoice | None) -> str:
    """The run's monitor as stored ("" for the settings' choice); RefusedToStart, one line,
    for a value `parse_monitor` does not read."""
    if choice is None:
        return ""
    try:
        return str(parse_monitor(choice))
    except ValueError as error:
        raise RefusedToStart(str(error)) from None


def _profile(name: str | None) -> str:
    """The run's model profile as stored ("" for the settings' choice); RefusedToStart, one
    line naming the known ones, for a name no profile has."""
    if name is None:
        return ""
    from desktop_agent.core.errors import ConfigError
    from desktop_agent.planner.profiles import profile_choice

    try:
        return profile_choice(name)
    except ConfigError as error:
        raise RefusedToStart(str(error)) from None
