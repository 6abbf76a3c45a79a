"""How every run starts: one synchronous admit, keyed on an id the asker already has.

A face asks for a run with one of three requests — a goal (`RunRequest`: the window, `run`,
`serve`, MCP), a routine (`RoutineRequest`: the window, `routine run`, the API) or a run the
store holds queued (`QueuedRun`: the API's POST made it, its events start it) — and `admit`
registers the run id with the runner at once, in the same step of the loop as the ask. So a
stop, a stop-all or the hotkey that lands after the ask reaches the run, whatever it is
doing: reading the store, checking the model, waiting for the window to get out of the way.

Everything that takes time happens inside the run (core/runner.py `admit_id`), and what it is
is the request's own (`parts`; `admit` asks no request what it is): `find` (the store read:
the queued run loaded, the routine looked up; a goal's view is made in memory), then
`prepare` (the model check and the planner; the routine's player), then the face's `ready`
future. A refusal — no such run, an ended one, an unknown routine, a missing
parameter, a model that does not answer — is raised from the run's events; nothing is
stored for it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from desktop_agent.core.runner import Prepare, RunHandle, close_planner
from desktop_agent.host.requests import (
    NotQueued,
    QueuedRun,
    Ready,
    RunRequest,
    StartRequest,
    new_run_id,
    queued_run,
    task_spec,
)
from desktop_agent.host.routines import RoutineRequest

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.core.models import RunView
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


def admit(agent: Agent, request: StartRequest, *, planner: Planner | None = None) -> RunHandle:
    """Admit the run of `request` now (no await); iterate the handle's events to run it.

    What its run does inside the admission is the request's own (`parts`: find its view,
    prepare its planner). `planner`: a run whose planner is at hand (an MCP client's own
    call): no model is asked nor checked. Raises at once what needs no store:
    AlreadyRunning; for a goal, RefusedToStart (an empty goal, an unknown tool).
    """
    find, prepare = request.parts(agent)
    if planner is not None:
        at_hand = planner

        async def given(_: RunView) -> Planner:
            return at_hand

        prepare = given
    ready = request.ready
    if ready is not None:
        prepare = _then_ready(prepare, ready)
    return agent.runner.admit_id(request.run_id, find, prepare)


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
