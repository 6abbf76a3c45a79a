"""RoutinePlayer: a Planner that plays a routine's steps, asking no model while the screen matches.

The player decides; the loop does everything else as for any run — it observes, stores,
gates (allowed tools, breaker, approvals, calls that ask every time), executes, checks the
effect, honours stop, pause and takeover. Each turn the player checks the step it played
last (it ran ok; it changed the screen if it did when taught) and the precondition of the
next one (its target found again by role and name in the same window, wherever the window
now is), and points the step at where its target is now. A target not there yet is waited
for a little (a `wait` step, gated like any). On a mismatch it hands the rest to the agent
— the routine's goal, what was done and the remaining steps as a plan — or, with no model
to take over, ends the run failed / routine_mismatch naming the step.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from desktop_agent.core.errors import DesktopAgentError
from desktop_agent.core.loop import STALE_DECISION
from desktop_agent.core.models import (
    Decision,
    Effect,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
    TokenUsage,
)
from desktop_agent.core.ports import DecideRequest, Grounder, Planner
from desktop_agent.core.routine import Routine, RoutineStep
from desktop_agent.core.targets import Found, acts_in_a_window, find_again, relocate

log = logging.getLogger(__name__)

#: a target not on the screen yet (a dialog still opening, an element list cut short by its
#: time budget on a loaded machine) is waited for this many turns (6 s of waits)
PATIENCE_TURNS = 24
WAIT_S = 0.25
_NO_TOKENS = TokenUsage(prompt_tokens=0, completion_tokens=0)

Handover = Callable[[], Awaitable[Planner]]


class RoutinePlayer:
    """Plays `steps` (the routine's, parameters bound) one per turn.

    `unasked(tool)`: a step of that tool would run with nobody asked (granted, allowed, a
    scheduled run), so it needs its window by label, not by program (core/targets.py).

    Attributes:
        checked: steps whose precondition and effect both matched.
        handed_over: the step (1-based) at which the agent took over, else None.
        grounder: the agent's grounding once it took over, else None.
    """

    def __init__(
        self,
        routine: Routine,
        steps: tuple[RoutineStep, ...],
        *,
        handover: Handover | None = None,
        on_handover: Callable[[], None] | None = None,
        unasked: Callable[[str], bool] | None = None,
        patience_turns: int = PATIENCE_TURNS,
        wait_s: float = WAIT_S,
    ) -> None:
        self.routine = routine
        self.steps = steps
        self._handover = handover
        self._on_handover = on_handover
        # a step whose tool runs without asking (granted, or a scheduled run) acts only in
        # the window it was taught in, by its label; the routine's grants when not told
        self._unasked = unasked or (lambda tool: tool in routine.grants)
        self._patience = patience_turns
        self._wait_s = wait_s
        self._next = 0  # the index of the step to play next
        self._played_at: int | None = None  # the turn the step at `_next` was played in
        self._waited = 0
        self._agent: Planner | None = None
        self._agent_goal = ""
        self.checked = 0
        self.handed_over: int | None = None

    async def decide(self, request: DecideRequest) -> Decision:
        if self._agent is not None:
            return await self._agent.decide(replace(request, goal=self._agent_goal))
        if self._played_at is not None:
            played, self._played_at = self._next, None
            verdict = self._effect_of(played, request)
            if verdict is not None:
                return (
                    verdict
                    if isinstance(verdict, Decision)
                    else await self._mismatch(request, played, verdict)
                )
        if self._next >= len(self.steps):
            return Decision(
                action="done",
                message=f"routine {self.routine.name}: {len(self.steps)} steps done, each checked",
                reason=f"{self.checked} of {len(self.steps)} steps matched the screen",
                usage=_NO_TOKENS,
            )
        return await self._play(request)

    async def _play(self, request: DecideRequest) -> Decision:
        number = self._next + 1
        step = self.steps[self._next]
        args = dict(step.args)
        found_text = ""
        if step.element is None and self._unasked(step.tool) and acts_in_a_window(step.tool):
            # a hand-written step without its target, or one taught with no window known:
            # nothing says it acts where it was taught, and nobody is asked
            why = "where it acts was not recorded, and nobody is asked about it"
            return await self._mismatch(request, self._next, why)
        if step.element is not None:
            found = self._find(step, request)
            if not isinstance(found, Found):
                if self._waited < self._patience:
                    self._waited += 1
                    return Decision(
                        action="tool",
                        tool="wait",
                        args={"seconds": self._wait_s},
                        reason=f"routine step {number}: waiting for the screen: {found}",
                        usage=_NO_TOKENS,
                    )
                return await self._mismatch(request, self._next, found)
            args = relocate(args, step.element, found)
            now = found.element or found.window
            if now is not None:
                found_text = f'; found {now.role} "{now.name}" at {now.box[0]},{now.box[1]}'
        self._waited = 0
        self._played_at = request.turn
        return Decision(
            action="tool",
            tool=step.tool,
            args=args,
            reason=f"routine step {number}/{len(self.steps)}: {step.describe()}{found_text}",
            usage=_NO_TOKENS,
        )

    def _effect_of(self, index: int, request: DecideRequest) -> Decision | str | None:
        """None when the step played last did what it should (the next one is due) or did
        not run (paused before acting: it is played again); a Decision ending the run; or
        why it did not match.

        Its effect: it ran ok, and if it changed the screen when taught, it did now — or the
        screen already shows what the next step needs (a click that only moved the caret
        can change too little to be seen; the next step's target being there says it went
        where it should)."""
        step = self.steps[index]
        row = _last_action(request.steps)
        if row is None or row.tool != step.tool:
            return None
        if row.status is StepStatus.SKIPPED:
            if row.error == STALE_DECISION:
                return None  # paused before it sent anything: played again
            return f"a pause interrupted it part-way ({row.error})"
        if row.status is StepStatus.DENIED:
            return Decision(
                action="fail",
                reason=f"routine step {index + 1} ({step.tool}) was not allowed: {row.error}",
                usage=_NO_TOKENS,
            )
        if row.status is not StepStatus.OK:
            return f"it failed: {row.error or row.summary}"
        unchanged = row.effect is Effect.NO_CHANGE and step.effect is Effect.CHANGED
        if step.tool != "wait" and unchanged and not self._next_is_there(index, request):
            return "it changed nothing on the screen (when taught, it did)"
        self.checked += 1
        self._next += 1
        return None

    def _next_is_there(self, index: int, request: DecideRequest) -> bool:
        following = self.steps[index + 1] if index + 1 < len(self.steps) else None
        if following is None or following.element is None:
            return False
        return isinstance(self._find(following, request), Found)

    def _find(self, step: RoutineStep, request: DecideRequest) -> Found | str:
        assert step.element is not None
        same_window = self._unasked(step.tool)
        return find_again(step.element, request.observation, same_window=same_window)

    async def _mismatch(self, request: DecideRequest, index: int, why: str) -> Decision:
        number = index + 1
        step = self.steps[index]
        what = f"routine {self.routine.name}: step {number} ({step.describe()}) does not match"
        agent, refused = None, ""
        if self._handover is not None:
            try:
                agent = await self._handover()
            except DesktopAgentError as error:
                refused = f"; the model could not take over: {error}"
        if agent is None:
            return Decision(
                action="fail",
                reason=f"{what}: {why}{refused}",
                stop_reason=StopReason.ROUTINE_MISMATCH,
                usage=_NO_TOKENS,
            )
        log.info("%s: %s; handed to the agent", what, why)
        if self._on_handover is not None:
            self._on_handover()
        self._agent = agent
        self.handed_over = number
        self._agent_goal = handover_goal(self.routine, self.steps, index, why)
        return await agent.decide(replace(request, goal=self._agent_goal))

    @property
    def grounder(self) -> Grounder | None:
        """The agent's grounding once it took over (the loop reads it at each call); None
        while the routine plays: its points are found again, not guessed."""
        grounder = getattr(self._agent, "grounder", None)
        return grounder if isinstance(grounder, Grounder) else None

    async def aclose(self) -> None:
        """The agent's planner (its HTTP client) goes with the run."""
        close = getattr(self._agent, "aclose", None)
        if close is not None:
            await close()


def _last_action(steps: Sequence[StepView]) -> StepView | None:
    return next((s for s in reversed(steps) if s.kind is StepKind.ACTION), None)


def handover_goal(routine: Routine, steps: tuple[RoutineStep, ...], index: int, why: str) -> str:
    """The goal the agent gets when it takes over: the routine's goal, the steps done and the
    rest as a plan (the screen differs from when it was taught: a plan, not orders)."""
    done = "\n".join(f"{n}. {s.describe()}" for n, s in enumerate(steps[:index], start=1)) or (
        "(nothing yet)"
    )
    rest = "\n".join(f"{n}. {s.describe()}" for n, s in enumerate(steps[index:], start=index + 1))
    return (
        f"{routine.goal}\n\n"
        f'A saved routine ("{routine.name}") was doing this task; its step {index + 1} did not '
        f"match the screen ({why}), so you take over from here.\n"
        f"Done so far by the routine:\n{done}\n"
        f"Remaining steps of the routine, as a plan (adapt it to what the screen shows):\n{rest}"
    )
