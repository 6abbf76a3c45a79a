"""What a run, a step and a call can be: the statuses, kinds and stop reasons every layer shares.

Apart from the views' dataclasses (core/models.py, which re-exports all of these) so that the
window's first paint, which shows statuses and kinds, does not wait for the dataclasses to be made.
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    STOPPED = "stopped"
    INTERRUPTED = "interrupted"

    @property
    def is_terminal(self) -> bool:
        return self in _TERMINAL

    @property
    def is_active(self) -> bool:
        return self in (RunStatus.RUNNING, RunStatus.PAUSED)


_TERMINAL = frozenset(
    {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.STOPPED, RunStatus.INTERRUPTED}
)


class StopReason(StrEnum):
    DONE = "done"
    ERROR = "error"
    MAX_FAILURES = "max_failures"
    BREAKER = "breaker"
    USER_STOP = "user_stop"
    MAX_STEPS = "max_steps"
    CRASH = "crash"
    #: the same action with the same arguments changed nothing on the screen 3 times
    STUCK = "stuck"
    #: the run's wall time or model tokens passed their limit
    BUDGET = "budget"
    #: a routine's step did not match the screen and no model could take over (core/routine.py)
    ROUTINE_MISMATCH = "routine_mismatch"
    #: the model's provider asked the person about the next actions (OpenAI's pending safety
    #: checks) and the person did not allow it (planner/backends/openai_computer.py)
    SAFETY_CHECK = "safety_check"


#: Which stop reasons each terminal status admits (DESIGN §1).
STOP_REASONS: dict[RunStatus, frozenset[StopReason]] = {
    RunStatus.COMPLETED: frozenset({StopReason.DONE}),
    RunStatus.FAILED: frozenset(
        {
            StopReason.ERROR,
            StopReason.MAX_FAILURES,
            StopReason.BREAKER,
            StopReason.STUCK,
            StopReason.ROUTINE_MISMATCH,
            StopReason.SAFETY_CHECK,
        }
    ),
    RunStatus.STOPPED: frozenset({StopReason.USER_STOP, StopReason.MAX_STEPS, StopReason.BUDGET}),
    RunStatus.INTERRUPTED: frozenset({StopReason.CRASH}),
}


class RunKind(StrEnum):
    """Who decides a run's actions: the model every turn, or a saved routine (core/routine.py)."""

    AGENT = "agent"
    ROUTINE = "routine"


class StepKind(StrEnum):
    OBSERVE = "observe"
    DECIDE = "decide"
    #: a coordinate call's target turned into its final point (zoom, or a grounding model)
    GROUND = "ground"
    ACTION = "action"


class StepStatus(StrEnum):
    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"
    DENIED = "denied"
    SKIPPED = "skipped"


class Effect(StrEnum):
    """What an action did to the screen, judged by the next observation (core/effect.py)."""

    CHANGED = "changed"
    NO_CHANGE = "no_change"
    UNKNOWN = "unknown"


class Risk(StrEnum):
    SAFE = "safe"
    INPUT = "input"
    DANGEROUS = "dangerous"


class Policy(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class ApprovalDecision(StrEnum):
    ONCE = "once"
    RUN = "run"
    DENY = "deny"
