"""What a run needs: the process-wide services every run shares, and one run's own parts
(its planner, grounder and clocks). The loop (core/loop.py), its gate (core/gate.py) and its
grounding (core/grounding.py) read them; the runner (core/runner.py) makes them."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from datetime import datetime

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.budget import Budget
from desktop_agent.core.call_risk import DEFAULT_SENSITIVE_TARGETS
from desktop_agent.core.effect import EFFECT_WAIT_S
from desktop_agent.core.models import utcnow
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.ports import (
    FocusProbe,
    Grounder,
    PermissionGate,
    Planner,
    RunRepository,
    ScreenObserver,
    ToolExecutor,
)
from desktop_agent.core.tools import ToolRegistry

#: deadlines (s): a hung capture, input or accessibility call fails its step, not the run
OBSERVE_TIMEOUT_S = 30.0
TOOL_TIMEOUT_S = 60.0
FOCUS_TIMEOUT_S = 0.5


@dataclass(kw_only=True)
class RunnerServices:
    """The process-wide parts every run shares."""

    repo: RunRepository
    observer: ScreenObserver
    executor: ToolExecutor
    gate: PermissionGate
    registry: ToolRegistry
    breakers: BreakerBoard
    permissions: Permissions
    approval_timeout_s: float = 60.0
    #: asked at action time for the focused control's role; None: the executor when it is
    #: a FocusProbe (the desktop's is), else the role is unknown
    focus: FocusProbe | None = None
    focus_timeout_s: float = FOCUS_TIMEOUT_S
    observe_timeout_s: float = OBSERVE_TIMEOUT_S
    #: how long a screen that shows no change after an action is looked at again (0: once)
    effect_wait_s: float = EFFECT_WAIT_S
    #: for `wait`, its seconds come on top
    tool_timeout_s: float = TOOL_TIMEOUT_S
    #: words whose click / invoke targets ask every time (settings: sensitive_targets)
    sensitive_targets: tuple[str, ...] = DEFAULT_SENSITIVE_TARGETS
    #: text on the screen that looks like orders to an AI marks the step and makes every
    #: input action ask (settings: injection_guard; core/injection_guard.py)
    injection_guard: bool = True
    #: each run's wall-time and token limits, and the price table of its cost estimate
    budget: Budget = field(default_factory=Budget)
    #: awaited after each step: a viewer that has not caught up with the run's events (the
    #: app's GUI thread) holds the next step back briefly; it never stops it (None: no viewer)
    pace: Callable[[], Awaitable[None]] | None = None
    #: awaited after each successful tool call, before its effect is observed: the
    #: user-takeover watch catches up with the input made meanwhile, so a user who took
    #: over during the action has paused the run before its next turn (None: no watch)
    after_action: Callable[[], Awaitable[None]] | None = None


@dataclass(kw_only=True)
class LoopDeps(RunnerServices):
    """What one run needs: the shared services, its planner, and the clocks."""

    planner: Planner
    #: refines a coordinate call's point before the gate; None: the planner's own `grounder`,
    #: read at each call (a routine's player has one only once the agent took over), else
    #: the point is acted on as given
    grounder: Grounder | None = None
    approval_ids: Callable[[], str] = field(default=lambda: "approval")
    now: Callable[[], datetime] = utcnow
    perf: Callable[[], float] = time.perf_counter

    @classmethod
    def for_run(
        cls, services: RunnerServices, planner: Planner, approval_ids: Callable[[], str]
    ) -> LoopDeps:
        shared = {f.name: getattr(services, f.name) for f in fields(RunnerServices)}
        # the planner brings the grounding it was set up with (planner side), if any: read
        # at each call (core/grounding.py, `grounder_of`), not here
        return cls(**shared, planner=planner, approval_ids=approval_ids)
