"""What a face asks for when it starts a run: a goal, a saved routine or a queued run."""

from __future__ import annotations

import concurrent.futures
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop_agent.agent import VisionSetting

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
    ready: Ready | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class RoutineRequest:
    """A run of the saved routine `name` with its parameters' `values` (host/routines.py).

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


@dataclass(frozen=True, slots=True)
class QueuedRun:
    """The run the store holds queued under `run_id` (the API's POST made it)."""

    run_id: str
    vision: VisionSetting | None = None
    ready: Ready | None = field(default=None, compare=False)


StartRequest = RunRequest | RoutineRequest | QueuedRun
