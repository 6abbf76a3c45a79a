"""How every run starts: one synchronous admit, keyed on an id the asker already has.

A face asks for a run with one of three requests — a goal (`RunRequest`: the window, `run`,
`serve`, MCP), a routine (`RoutineRequest`: the window, `routine run`, the API) or a run the
store holds queued (`QueuedRun`: the API's POST made it, its events start it) — and `admit`
registers the run id with the runner at once, in the same step of the loop as the ask. So a
stop, a stop-all or the hotkey that lands after the ask reaches the run, whatever it is
doing: reading the store, checking the model, waiting for the window to get out of the way.

Everything that takes time happens inside the run (core/runner.py `admit_id`): `find` (the
store read: the queued run loaded, the routine looked up; a goal's view is made in memory),
then `prepare` (the model check and the planner; the routine's player), then the face's
`ready` future. A refusal — no such run, an ended one, an unknown routine, a missing
parameter, a model that does not answer — is raised from the run's events; nothing is
stored for it.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING

from desktop_agent.core.errors import DesktopAgentError, RefusedToStart, RunNotFound
from desktop_agent.core.models import RunStatus, RunView, utcnow
from desktop_agent.core.runner import Find, Prepare, RunHandle, close_planner
from desktop_agent.host.requests import (
    QueuedRun,
    Ready,
    RoutineRequest,
    RunRequest,
    StartRequest,
    new_run_id,
    task_spec,
)

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.core.models import VisionSetting
    from desktop_agent.core.ports import Planner

__all__ = [
    "NotQueued",
    "QueuedRun",
    "RoutineRequest",
    "RunRequest",
    "StartRequest",
    "admit",
    "new_run_id",
    "queued_run",
    "store_queued",
]


class NotQueued(DesktopAgentError):
    """The stored run is not queued (it has ended, or runs in another process): it does not
    start here. `run` is its view."""

    def __init__(self, run: RunView) -> None:
        super().__init__(f"run {run.id} is {run.status.value}; it cannot start")
        self.run = run


def admit(agent: Agent, request: StartRequest, *, planner: Planner | None = None) -> RunHandle:
    """Admit the run of `request` now (no await); iterate the handle's events to run it.

    `planner`: a run whose planner is at hand (an MCP client's own call): no model is
    asked nor checked. Raises at once what needs no store: AlreadyRunning; for a goal,
    RefusedToStart (an empty goal, an unknown tool).
    """
    find, prepare = _parts(agent, request)
    if planner is not None:
        at_hand = planner

        async def given(_: RunView) -> Planner:
            return at_hand

        prepare = given
    ready = request.ready
    if ready is not None:
        prepare = _then_ready(prepare, ready)
    return agent.runner.admit_id(request.run_id, find, prepare)


def _parts(agent: Agent, request: StartRequest) -> tuple[Find, Prepare]:
    """The request's `find` (its queued view) and `prepare` (its planner)."""
    if isinstance(request, RoutineRequest):
        from desktop_agent.host import routines as service

        return service.routine_start(agent, request)
    if isinstance(request, QueuedRun):
        return _stored(agent, request.run_id), _checked(agent, request.vision)
    run = queued_run(agent, request)

    async def made() -> RunView:
        return run

    return made, _checked(agent, request.vision)


def _stored(agent: Agent, run_id: str) -> Find:
    async def find() -> RunView:
        run = await agent.repo.get_run(run_id)
        if run is None:
            raise RunNotFound(f"no run {run_id!r}")
        if run.status is not RunStatus.QUEUED:
            raise NotQueued(run)
        return run

    return find


def _checked(agent: Agent, vision: VisionSetting | None) -> Prepare:
    async def prepare(run: RunView) -> Planner:
        return await agent.prepare(run, vision)

    return prepare


def _then_ready(prepare: Prepare, ready: Ready) -> Prepare:
    """`prepare`, then wait for the face (its planner closed if the wait is stopped)."""

    async def prepared_and_ready(run: RunView) -> Planner:
        made = await prepare(run)
        try:
            # shielded: a stop ends this wait, not the face's future (it may still set it)
            await asyncio.shield(asyncio.wrap_future(ready))
        except BaseException:
            await close_planner(made)
            raise
        return made

    return prepared_and_ready


async def store_queued(agent: Agent, request: RunRequest) -> RunView:
    """The request stored as a queued run under its id (the API's POST); nothing starts."""
    return await agent.runner.create(task_spec(agent.settings, request), request.run_id)


def queued_run(agent: Agent, request: RunRequest) -> RunView:
    """The request as a queued run view (in memory; the loop stores it)."""
    spec = task_spec(agent.settings, request)
    allowed = spec.allowed_tools or agent.registry.offered_names()
    unknown = agent.registry.unknown(allowed)
    if unknown:
        raise RefusedToStart(f"unknown tool(s): {', '.join(unknown)}")
    spec = replace(spec, allowed_tools=tuple(allowed))
    return RunView.queued(spec, request.run_id, utcnow())
