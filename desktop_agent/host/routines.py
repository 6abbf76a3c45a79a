"""Routines for the faces: save one from a run, export and import its file, start its runs.

A routine run is started through the one admission of every run (host/starts.py: stoppable
from its first instant, the routine looked up inside the run); its planner is the
RoutinePlayer, which asks no model while the screen matches. The model is checked only if
the agent has to take over.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_agent.core.call_risk import TEXT_TOOLS, assess_call
from desktop_agent.core.errors import RunNotFound, ToolError
from desktop_agent.core.models import (
    Element,
    Observation,
    Policy,
    RunView,
    utcnow,
)
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.routine import (
    Routine,
    RoutineError,
    RoutineNotFound,
    RoutineStep,
    check_name,
    dump_routine_text,
    read_routine_text,
    routine_from_run,
)
from desktop_agent.core.routine_player import RoutinePlayer
from desktop_agent.core.runner import Find, Prepare
from desktop_agent.core.targets import acts_in_a_window
from desktop_agent.core.tools import ToolRegistry
from desktop_agent.host.requests import Ready, new_run_id, task_spec

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.core.models import VisionSetting
    from desktop_agent.core.ports import Planner
    from desktop_agent.store import SqliteRunRepository

#: a file bigger than this is not a routine someone wrote or exported
MAX_FILE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class RoutineRequest:
    """A run of the saved routine `name` with its parameters' `values` (a StartRequest,
    host/requests.py).

    `handover`: the settings' model takes over on a mismatch (False: routine_mismatch).
    `scheduled`: started by the OS with nobody there: every step needs its window by label.
    """

    name: str
    values: Mapping[str, str] = field(default_factory=dict)
    handover: bool = True
    scheduled: bool = False
    run_id: str = field(default_factory=new_run_id)
    vision: VisionSetting | None = None
    ready: Ready | None = field(default=None, compare=False)

    def parts(self, agent: Agent) -> tuple[Find, Prepare]:
        """The routine looked up inside the run, then its player (`routine_start`)."""
        return routine_start(agent, self)


async def save_from_run(
    repo: SqliteRunRepository,
    registry: ToolRegistry,
    run_id: str,
    name: str,
    params: Mapping[str, Sequence[int]] = {},  # noqa: B006 - read only
    *,
    grants: Sequence[str] = (),
    replace: bool = False,
) -> Routine:
    """Save run `run_id` as routine `name`; RunNotFound or RoutineError (one line)."""
    run = await repo.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run {run_id!r}")
    routine = routine_from_run(run, await repo.list_steps(run_id), name, params, grants=grants)
    check_tools(routine, registry, grants)
    await repo.save_routine(routine, replace=replace)
    return routine


async def get(repo: SqliteRunRepository, name: str) -> Routine:
    routine = await repo.get_routine(name)
    if routine is None:
        raise RoutineNotFound(f"no routine named {name!r}")
    return routine


async def export_to(repo: SqliteRunRepository, name: str, path: Path) -> Routine:
    routine = await get(repo, name)
    text = dump_routine_text(routine)
    try:
        await asyncio.to_thread(path.write_text, text, encoding="utf-8")
    except OSError as error:
        raise RoutineError(f"cannot write {path}: {error.strerror or error}") from None
    return routine


async def import_from(
    repo: SqliteRunRepository,
    registry: ToolRegistry,
    path: Path,
    *,
    name: str | None = None,
    replace: bool = False,
) -> Routine:
    """Read a routine file into the store (under `name` if given); RoutineError (one line)
    for a file that is not a routine, a tool this build does not have, or bad arguments.
    Grants never come from a file: the user gives them here."""
    try:
        data = await asyncio.to_thread(_read_small, path)
    except OSError as error:
        raise RoutineError(f"cannot read {path}: {error.strerror or error}") from None
    routine = read_routine_text(data, source=str(path))
    if name is not None:
        routine = routine.with_(name=check_name(name))
    check_tools(routine, registry)
    await repo.save_routine(routine, replace=replace)
    return routine


def _read_small(path: Path) -> str:
    with path.open("rb") as file:
        data = file.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise RoutineError(f"{path}: not a routine (over {MAX_FILE_BYTES // 1024} KiB)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RoutineError(f"{path}: not a routine (not UTF-8 text)") from None


def check_tools(routine: Routine, registry: ToolRegistry, grants: Sequence[str] = ()) -> None:
    """Every step's tool is one of ours and its arguments validate (with each parameter's
    default in place); every grant names a tool."""
    runnable(routine, registry, {name: "x" for name in routine.secrets()})
    unknown = [tool for tool in grants if tool not in registry.offered_names()]
    if unknown:
        raise RoutineError(f"cannot grant unknown tool(s): {', '.join(unknown)}")


def runnable(
    routine: Routine, registry: ToolRegistry, values: Mapping[str, str]
) -> tuple[RoutineStep, ...]:
    """The steps as they will run: each parameter's value in place and each step's arguments
    validated by its tool, as the loop validates a model's call (pydantic's conversions
    applied: `"enter": "true"` is True) — what the preview judges is what the gate judges and
    the executor runs. RoutineError (one line) naming the first step that is not valid."""
    steps = []
    for number, step in enumerate(routine.bind(values), start=1):
        if step.tool not in registry.offered_names():
            raise RoutineError(f"routine {routine.name}: step {number}: unknown tool {step.tool!r}")
        try:
            _, args = registry.validate(step.tool, step.args)
        except ToolError as error:
            raise RoutineError(f"routine {routine.name}: step {number}: {error}") from None
        steps.append(replace(step, args=args.model_dump(exclude_unset=True)))
    return tuple(steps)


# ── running ──────────────────────────────────────────────────────────────────


def routine_start(agent: Agent, request: RoutineRequest) -> tuple[Find, Prepare]:
    """What a routine run does inside its admission (host/starts.py `admit`, the one way in):
    `find` looks the routine up and binds its values — RoutineError, nothing stored, for an
    unknown routine (RoutineNotFound), a missing parameter or a step whose arguments do not
    validate (`runnable`) — and `prepare` makes its player.

    The routine's grants hold for this run only (stop-all revokes them with every run
    grant) and are withdrawn when the agent takes over: they were given for the routine's
    steps, not for whatever the model decides. With `handover` False (or no model that
    answers) a mismatch ends the run failed / routine_mismatch.
    """
    found: list[tuple[Routine, tuple[RoutineStep, ...]]] = []

    async def find() -> RunView:
        routine = await get(agent.repo, request.name)
        steps = runnable(routine, agent.registry, request.values)
        found.append((routine, steps))
        return RunView.queued(
            replace(
                task_spec(agent.settings, routine),
                allowed_tools=agent.registry.offered_names(),
            ),
            request.run_id,
            utcnow(),
        )

    async def prepare(run: RunView) -> Planner:
        routine, steps = found[0]
        permissions = agent.permissions
        for tool in routine.grants:
            permissions.grant_for_run(run.id, tool)

        async def take_over() -> Planner:
            return await agent.prepare(run, request.vision)

        at_start = permissions.for_run(run.id)  # as the run's gate decides (its start's)

        def unasked(tool: str) -> bool:
            """A step of `tool` may run with nobody asked: a scheduled run, or the tool granted
            (the routine's, a persistent grant, one given during this run) or allowed, by
            the policies of the run's start or of now."""
            risk = agent.registry.get(tool).risk
            return request.scheduled or Policy.ALLOW in (
                at_start.decide(tool, risk),
                permissions.decide(run.id, tool, risk),
            )

        return RoutinePlayer(
            routine,
            steps,
            handover=take_over if request.handover else None,
            on_handover=lambda: permissions.revoke_run(run.id),
            unasked=unasked,
        )

    return find, prepare


def questions(
    routine: Routine,
    registry: ToolRegistry,
    permissions: Permissions,
    sensitive_targets: Sequence[str],
    values: Mapping[str, str] = {},  # noqa: B006 - read only
) -> list[str]:
    """What a run of `routine` with `values` would ask (or be refused), one line each; []
    when every step is allowed or granted. The same gate judges the same arguments: the
    steps as they will run (`runnable`: RoutineError for one that is not valid), under the
    policy, the routine's and persistent grants, and the calls that ask every time, on the
    screen each step was taught on; a step acting in a window nobody recorded could only
    end the run routine_mismatch (docs/routines.md), so it is listed too."""
    secrets = [name for name in routine.secrets() if name not in values]
    asked = [f"{name}: a text that is never saved (asked at each run)" for name in secrets]
    steps = runnable(routine, registry, {**dict.fromkeys(secrets, "x"), **values})
    probe = "routine-questions"
    for tool in routine.grants:
        permissions.grant_for_run(probe, tool)
    try:
        for number, step in enumerate(steps, start=1):
            spec = registry.get(step.tool)
            if acts_in_a_window(step.tool) and (step.element is None or not step.element.window):
                # a run nobody answers plays a step only in the window it was taught in
                asked.append(f"step {number} {step.describe()}: where it acts was not recorded")
                continue
            # every field, defaults included: the loop's gate judges the same dump
            args, observation, focused = taught_screen(step, spec.validate(step.args).model_dump())
            risk = assess_call(step.tool, args, observation, focused, sensitive_targets)
            policy = permissions.decide(probe, step.tool, spec.risk, sensitive=risk.asks_every_call)
            if policy is Policy.ALLOW:
                continue
            why = risk.always_ask or (
                "denied by policy"
                if policy is Policy.DENY
                else f"{spec.risk.value} tool, not granted"
            )
            asked.append(f"step {number} {step.describe()}: {why}")
    finally:
        permissions.revoke_run(probe)
    return asked


def taught_screen(
    step: RoutineStep, values: Mapping[str, object]
) -> tuple[dict[str, object], Observation, str | None]:
    """The step's validated arguments (`values`) on the screen as far as its target is known:
    its window in front and its target (focused, if it took the focus's input)."""
    ref = step.element
    args: dict[str, object] = dict(values)
    if ref is None:
        return args, Observation(b"", "image/jpeg", 0, 0), None
    elements = [Element(1, "window", ref.window, ref.window_box or ref.box, focused=True)]
    if ref.how != "window":
        elements.append(
            Element(
                2, ref.role, ref.name, ref.box, focused=ref.how == "focus", password=ref.password
            )
        )
        if args.get("element") is not None:
            args["element"] = 2
        elif args.get("x") is not None:
            args["x"], args["y"] = elements[1].center
    if step.tool in TEXT_TOOLS and ref.password:
        args[TEXT_TOOLS[step.tool]] = "x"
    focused = ref.role if ref.how == "focus" else None
    return args, Observation(b"", "image/jpeg", 0, 0, elements=tuple(elements)), focused
