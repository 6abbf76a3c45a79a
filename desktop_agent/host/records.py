"""Records: the history and the routines as a face reads and edits them, on the host's loop.

The runs and their steps, a stored run's events in batches (a replay), routines saved from a
run and their grants. The window asks for these through its bridge (`EngineClient.ask`,
`EngineClient.stream`); nothing here knows about threads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.core.events import TaskLoopEvent
    from desktop_agent.core.models import RunStatus, RunView, StepView
    from desktop_agent.core.routine import Routine

#: a replay crosses to another thread this many events at a time (its rows are in memory
#: already; every crossing costs the two threads a fight over the GIL)
REPLAY_BATCH = 2000


class Records:
    """What a face reads and edits of the store, in its words (through the Host's Agent,
    which stays the Host's own)."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent

    async def list_runs(self, limit: int = 500, status: RunStatus | None = None) -> list[RunView]:
        return await self._agent.repo.list_runs(limit=limit, status=status)

    async def get_run(self, run_id: str) -> RunView | None:
        return await self._agent.repo.get_run(run_id)

    async def list_steps(self, run_id: str) -> list[StepView]:
        return await self._agent.repo.list_steps(run_id)

    async def replay(self, run_id: str) -> AsyncIterator[list[TaskLoopEvent]]:
        """A stored run's events (as `Agent.replay`) in batches of REPLAY_BATCH; the last
        batch may be empty. RunNotFound (one line) for a run the store does not have."""
        batch: list[TaskLoopEvent] = []
        try:
            async for event in self._agent.replay(run_id):
                batch.append(event)
                if len(batch) >= REPLAY_BATCH:
                    yield batch
                    batch = []
        except Exception:
            if batch:
                yield batch  # what was read before the fault is shown
            raise
        yield batch

    async def list_routines(self) -> list[Routine]:
        return await self._agent.repo.list_routines()

    async def get_routine(self, name: str) -> Routine:
        """The routine `name`; RoutineNotFound (one line) when there is none."""
        from desktop_agent.host import routines as service

        return await service.get(self._agent.repo, name)

    def routine_questions(self, routine: Routine, values: Mapping[str, str]) -> list[str]:
        """What a run of `routine` with `values` would ask (host/routines.py `questions`)."""
        from desktop_agent.host import routines as service

        agent = self._agent
        return service.questions(
            routine, agent.registry, agent.permissions, agent.settings.sensitive_targets, values
        )

    async def save_routine(
        self,
        run_id: str,
        name: str,
        params: Mapping[str, Sequence[int]],
        grants: Sequence[str],
    ) -> Routine:
        """Save run `run_id` as routine `name` (host/routines.py); RunNotFound or
        RoutineError (one line)."""
        from desktop_agent.host import routines as service

        agent = self._agent
        return await service.save_from_run(
            agent.repo, agent.registry, run_id, name, params, grants=grants
        )

    async def set_routine_grants(self, name: str, grants: tuple[str, ...]) -> Routine:
        return await self._agent.repo.update_routine(name, grants=grants)
