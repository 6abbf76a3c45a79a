"""run_task_loop: observe → decide → gate → execute → limits, as an async generator of events."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from desktop_agent.core.budget import usage_of
from desktop_agent.core.control import RunControl
from desktop_agent.core.deps import LoopDeps as LoopDeps
from desktop_agent.core.deps import RunnerServices as RunnerServices
from desktop_agent.core.effect import STUCK_AT, StuckDetector, call_key, effect_note, screen_after
from desktop_agent.core.errors import (
    ActionPaused,
    BreakerOpen,
    NotTheToolsFault,
    PlannerError,
    StopRequested,
    ToolNotAllowed,
    describe,
)
from desktop_agent.core.events import (
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    RunTotals,
    StepFinished,
    StepStarted,
    TaskLoopEvent,
)
from desktop_agent.core.gate import Gate, Judged, why_denied
from desktop_agent.core.grounding import (
    asked,
    grounder_of,
    landing,
    refine,
    request_for,
    stored_args,
)
from desktop_agent.core.injection_guard import InjectionGuard
from desktop_agent.core.models import (
    ApprovalDecision,
    Artifact,
    Decision,
    Effect,
    MonitorArea,
    Observation,
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
    StoreWrite,
    ToolResult,
    monitor_of,
)
from desktop_agent.core.ports import (
    DecideRequest,
    HeldInput,
    RegionSource,
    ToolContext,
)
from desktop_agent.core.targets import element_ref
from desktop_agent.core.tools import ToolSpec
from desktop_agent.core.validated_call import Call, Decided, target_of

log = logging.getLogger(__name__)
T = TypeVar("T")
OBSERVE_TOOL = "screen_snapshot"
STALE_DECISION = "paused before acting: the next turn decides on a fresh screenshot"
#: after an action the pause interrupted (ActionPaused says how far it got)
PAUSED_THEN = "the next turn decides on a fresh screenshot"
#: an action of a batch (one turn's several actions) not run, and why
BATCH_ENDED = "not run: {why}; the next turn decides on a fresh screenshot"


@dataclass(frozen=True, slots=True)
class _Outcome:
    status: RunStatus
    reason: StopReason
    message: str = ""


@dataclass(frozen=True, slots=True)
class _Action:
    """An action judged and its row begun, on its way through the rest of the gate: its tool
    (as the model named it), the call as the gate judged it, the screen it acts on, where it
    aims (screenshot pixels; None: nowhere in particular) and its row."""

    tool: str
    judged: Judged
    observation: Observation
    target: tuple[int, int] | None
    step: StepView


class _TaskLoop:
    """One run's state. Its coroutines emit events as things happen; `run_task_loop` relays them."""

    def __init__(
        self,
        run: RunView,
        deps: LoopDeps,
        control: RunControl,
        emit: Callable[[TaskLoopEvent], None],
    ) -> None:
        self.run = run
        self.deps = deps
        self.control = control
        self.emit = emit
        self.steps: list[StepView] = []
        self.failures = 0
        self.outcome: _Outcome | None = None
        self.open_step: StepView | None = None
        self._open_since = 0.0
        self.stuck = StuckDetector()
        #: (prompt, completion) tokens by the model they went to, for the cost
        self._tokens = {run.model: (run.prompt_tokens, run.completion_tokens)}
        #: the observation taken after the last action, for the next turn
        self._ready: Observation | None = None
        #: the ids of the provider's safety checks the person allowed (DecideRequest)
        self._acknowledged: set[str] = set()
        self._since = 0.0
        #: rows and files not stored yet, and the events that wait for them: stored as one
        #: write before the loop next waits on the outside world, then told (`_settle`)
        self._held_writes: list[StoreWrite] = []
        self._held_events: list[TaskLoopEvent] = []
        #: the last screenshot kept: (its image, its path, its thumbnail's path)
        self._last_screenshot: tuple[bytes, str, str | None] | None = None
        self.guard = InjectionGuard(on=deps.injection_guard, goal=run.goal)
        #: the next observation is of a screen the person had in front of them (the start,
        #: a resume): windows that come up after it are new to them (core/injection_guard.py)
        self._seen_by_person = True
        #: the gate's questions and re-checks (core/gate.py), with what stays the loop's
        self.gate = Gate(
            run_id=run.id,
            allowed_tools=run.allowed_tools,
            deps=deps,
            control=control,
            guard=self.guard,
            settle=self._settle,
            tell=self._tell,
            look=self._look,
            screenshot_of=self._screenshot_of,
        )

    # ── the run ─────────────────────────────────────────────────────────────

    async def run_to_end(self) -> RunView:
        deps = self.deps
        self.run = self.run.with_(
            status=RunStatus.RUNNING, started_at=self.run.started_at or deps.now()
        )
        self._since = deps.perf()
        try:
            await deps.repo.save_run(self.run)
        except Exception as error:  # noqa: BLE001 - a store that fails now: the run ends
            self.outcome = _Outcome(
                RunStatus.FAILED, StopReason.ERROR, f"cannot store the run: {describe(error)}"
            )
        self.emit(RunStarted(self.run))
        try:
            while self.outcome is None:
                await self._pause_point()
                await self._turn()
        except StopRequested:
            self._close_open_step("stopped by the user")
            self.outcome = _Outcome(RunStatus.STOPPED, StopReason.USER_STOP, "stopped by the user")
        except asyncio.CancelledError:
            # The consumer went away (window closed, client gone): the run ends as a user stop.
            self._close_open_step("stopped: the viewer went away")
            await self._release_held()
            await self._finish(
                _Outcome(RunStatus.STOPPED, StopReason.USER_STOP, "the viewer went away")
            )
            raise
        except Exception as error:  # noqa: BLE001 - a fault must end the run, not vanish
            self._close_open_step(describe(error))
            self.outcome = _Outcome(
                RunStatus.FAILED, StopReason.ERROR, f"unexpected fault: {describe(error)}"
            )
        await self._release_held()
        final = await self._finish(self.outcome)
        self.emit(RunFinished(final))
        return final

    async def _finish(self, outcome: _Outcome) -> RunView:
        """Revoke the run's grants and store its end with whatever is held (a write that
        failed before is tried once more with it). A store that fails now (disk full,
        database locked) does not keep the run from ending: its row stays active, the held
        events are not told (they were not stored), and the store's recovery marks it
        interrupted when this process opens the store again or another one does after this
        process has ended (store/recovery.py)."""
        self.deps.permissions.revoke_run(self.run.id)
        self.run = self.run.with_(
            status=outcome.status,
            stop_reason=outcome.reason,
            message=outcome.message,
            finished_at=self.deps.now(),
        )
        self._held_writes.append(self.run)
        try:
            await self._settle(pace=False)  # no next step for a viewer to catch up with
        except Exception as error:  # noqa: BLE001 - the end must be told even if not stored
            self._held_writes.clear()
            self._held_events.clear()
            self.run = self.run.with_(
                message=f"{outcome.message} (the end was not stored: {describe(error)})".lstrip()
            )
        return self.run

    async def _release_held(self) -> None:
        """Let go of a button a tool left held (mouse_down): at the run's end, however it
        ends, and before a pause hands the desktop to the person."""
        executor = self.deps.executor
        if not isinstance(executor, HeldInput):
            return
        try:
            released = await asyncio.shield(executor.release_held())
        except Exception:  # noqa: BLE001 - the run ends all the same; the log says why
            log.warning("run %s: a held button could not be let go", self.run.id, exc_info=True)
            return
        if released:
            log.info("run %s: %s", self.run.id, released)

    async def _pause_point(self) -> bool:
        """Honour a stop or a pause; True when the run was paused here."""
        self.control.check()
        if not self.control.pause_requested:
            return False
        await self._release_held()
        self.run = self.run.with_(status=RunStatus.PAUSED)
        self._tell(RunPaused(self.run, reason=self.control.pause_reason), self.run)
        await self._settle()
        await self.control.wait_resumed()
        self._ready = None  # the user may have changed the screen: observe it afresh
        self._seen_by_person = True
        self.run = self.run.with_(status=RunStatus.RUNNING)
        self._tell(RunResumed(self.run), self.run)
        return True

    # ── one turn: observe → decide → gate → execute ─────────────────────────

    async def _turn(self) -> None:
        turn = self.run.step_count + 1
        observation = await self._observe(turn)
        # a pause while the screen was read: it may be stale once the person had the desktop,
        # and no model request goes out while paused; the turn after the resume looks afresh
        if observation is not None and self.outcome is None and not await self._pause_point():
            decided = await self._decide(turn, observation)
            if decided is not None and decided.decision.action == "tool":
                await self._actions(turn, decided, observation)
        self.run = self.run.with_(step_count=turn)
        self._held_writes.append(self.run)
        if self.outcome is None:
            self.outcome = self._limits()

    async def _observe(self, turn: int, part: int = 0) -> Observation | None:
        """The screen the turn's action (its `part`-th, after the first of a batch) decides on
        or acts on, stored as an observe row."""
        step = self._begin(turn, StepKind.OBSERVE, OBSERVE_TOOL, {})
        # the screen as the last action left it, taken for its effect check: not taken twice
        observation, self._ready = self._ready, None
        if observation is None:
            observation = await self._capture(step)
            if observation is None:
                return None
        path, thumb = self._keep_screenshot(turn, observation, part)
        observation = observation.with_(screenshot_path=path)
        summary = (
            f"screenshot {observation.width}x{observation.height}, "
            f"{len(observation.elements)} elements"
        )
        if observation.window_relative:
            # a desktop that hides the window's place (Wayland): the model is shown these
            summary += f", {len(observation.window_relative)} relative to the window"
        notes = self.guard.notes(observation)
        if self._seen_by_person:
            # the screen the run was started or resumed on: the person had it in front of them
            self.guard.person_saw(observation)
            self._seen_by_person = False
        if notes:
            summary += f"; {len(notes)} text(s) that look like orders to an AI"
        self._end(
            step,
            StepStatus.OK,
            summary=summary,
            screenshot=path,
            thumbnail=thumb,
            suspicious_text=notes,
        )
        return observation

    async def _capture(self, step: StepView) -> Observation | None:
        """One observation through the observer's breaker and deadline; None (the step
        failed) when it cannot be had."""
        deps = self.deps
        breaker = deps.breakers[OBSERVE_TOOL]
        if not breaker.acquire():
            message = _breaker_message(OBSERVE_TOOL, breaker.retry_in_s())
            self._fail(step, StepStatus.FAILED, message)
            self.outcome = _Outcome(RunStatus.FAILED, StopReason.BREAKER, message)
            return None
        with breaker.slot() as slot:
            try:
                observation = await self._outside(
                    lambda: _within(
                        deps.observe_timeout_s,
                        "the observation did not finish",
                        deps.observer.observe,
                    )
                )
            except StopRequested:
                raise
            except Exception as error:  # noqa: BLE001 - any observer fault is a failed step
                slot.record(False)
                self._fail(step, StepStatus.FAILED, describe(error))
                return None
            slot.record(True)
        return observation

    async def _decide(self, turn: int, observation: Observation) -> Decided | None:
        deps = self.deps
        step = self._begin(turn, StepKind.DECIDE, None, {})
        request = DecideRequest(
            goal=self.run.goal,
            run_id=self.run.id,
            turn=turn,
            steps=tuple(self.steps[:-1]),
            observation=observation,
            acknowledged=frozenset(self._acknowledged),
            region=(
                functools.partial(deps.observer.region, observation)
                if isinstance(deps.observer, RegionSource)
                else None
            ),
            tools=tuple(
                spec
                for spec in deps.registry.specs()
                if spec.offered and spec.name in self.run.allowed_tools
            ),
        )
        try:
            decision = await self._outside(lambda: deps.planner.decide(request))
        except PlannerError as error:
            self._fail(step, StepStatus.FAILED, str(error), raw_output=error.raw or None)
            return None
        usage = decision.usage
        self._count_tokens(request, decision)
        is_tool = decision.action == "tool"
        decided = Decided(decision, None, None, {}, ())
        if is_tool:
            decided = await self.gate.validated(decision, observation)
        self._end(
            step,
            StepStatus.OK,
            tool=decision.tool if is_tool else None,
            args=decided.stored_args,
            summary=_decision_summary(decision),
            reason=decided.redact(decision.reason),
            raw_output=decided.redact(decision.raw),
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            latency_ms=decision.latency_ms,
        )
        if decision.action == "done":
            self.outcome = _Outcome(
                RunStatus.COMPLETED, StopReason.DONE, decision.message or decision.reason
            )
        elif decision.action == "fail":
            self.outcome = _Outcome(
                RunStatus.FAILED,
                decision.stop_reason or StopReason.ERROR,
                decision.reason or decision.message,
            )
        return decided

    def _count_tokens(self, request: DecideRequest, decision: Decision) -> None:
        """Add the turn's tokens (reported, else estimated) and the cost to the run's totals;
        stored with the turn's end."""
        usage, estimated = usage_of(request, decision)
        self._add_tokens(usage.prompt_tokens or 0, usage.completion_tokens or 0, estimated)

    def _add_tokens(
        self, prompt_tokens: int, completion_tokens: int, estimated: bool, model: str = ""
    ) -> None:
        """Counted in the run's totals; priced at `model`'s price ("": the run's model)."""
        name = model or self.run.model
        before = self._tokens.get(name, (0, 0))
        self._tokens[name] = (before[0] + prompt_tokens, before[1] + completion_tokens)
        self.run = self.run.with_(
            prompt_tokens=self.run.prompt_tokens + prompt_tokens,
            completion_tokens=self.run.completion_tokens + completion_tokens,
            tokens_estimated=self.run.tokens_estimated or estimated,
            cost=self.deps.budget.cost_of(self._tokens),
        )
        run = self.run
        # the faces' totals come with the turn (the window reads no store for them)
        self._tell(
            RunTotals(
                run.id, run.prompt_tokens, run.completion_tokens, run.tokens_estimated, run.cost
            )
        )

    async def _actions(self, turn: int, decided: Decided, observation: Observation) -> None:
        """The turn's action, and the rest of its batch, once the provider's checks allow."""
        if await self._pause_point():
            # paused while the model thought: the person had the desktop, the decision is
            # stale; nobody is asked and no grounding request goes out for it
            self._skip_stale(turn, decided)
            return
        if not await self._safety_checks(turn, decided, observation):
            return
        if await self._pause_point():
            # paused while the provider's question was open: no grounding for a stale call
            self._skip_stale(turn, decided)
            return
        decided, observation = await self._ground(turn, decided, observation)
        if await self._pause_point():
            # the user may have changed the screen meanwhile: the decision is stale
            self._skip_stale(turn, decided)
            return
        await self._act(turn, decided, observation)
        await self._rest_of_batch(turn, decided.decision.batch)

    async def _safety_checks(self, turn: int, decided: Decided, observation: Observation) -> bool:
        """The provider's safety checks on the turn's actions, each asked of the person
        whatever the policy, the grants or `--approve all`: True when every one was allowed
        (then its id may be acknowledged); one denied, or unanswered, ends the run failed /
        safety_check with nothing of the turn run."""
        decision = decided.decision
        for check in decision.safety_checks:
            answer, by = await self.gate.safety_check(turn, decided, observation, check)
            if answer is ApprovalDecision.DENY:
                step = self._begin(turn, StepKind.ACTION, decision.tool, decided.stored_args)
                why = why_denied(by)
                self._fail(step, StepStatus.DENIED, f"safety check {check.code}: {why}")
                self.outcome = _Outcome(
                    RunStatus.FAILED,
                    StopReason.SAFETY_CHECK,
                    f"the safety check {check.code} was not allowed ({why}): {check.message}",
                )
                return False
            self._acknowledged.add(check.id)
        return True

    async def _ground(
        self, turn: int, decided: Decided, observation: Observation
    ) -> tuple[Decided, Observation]:
        """A coordinate call that names its target, refined before anything judges it
        (core/grounding.py), on the screen as it is once the grounding is done. Its own step
        row (kind ground): the crop it looked at, both points, its tokens. A stop during the
        request ends the run here, before any input."""
        grounder = grounder_of(self.deps)
        request = request_for(decided, observation, self.deps.observer)
        if grounder is None or request is None:
            return decided, observation
        step = self._begin(turn, StepKind.GROUND, request.tool, asked(request))
        grounding = await refine(grounder, request, self._outside)
        crop = None
        if grounding.image:
            ext = "png" if grounding.mime == "image/png" else "jpg"
            crop = self._keep_file(f"{turn:04d}.ground.{ext}", grounding.image)
        usage = grounding.usage
        if usage is not None:
            self._add_tokens(
                usage.prompt_tokens or 0,
                usage.completion_tokens or 0,
                grounding.tokens_estimated,
                model=grounding.model,
            )
        self._end(
            step,
            StepStatus.OK,
            args=stored_args(request, grounding),
            summary=grounding.summary,
            screenshot=crop,
            target=grounding.point,
            raw_output=decided.redact(grounding.raw) or None,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            latency_ms=grounding.latency_ms,
        )
        if grounding.point != request.point:
            decided = decided.moved_to(grounding.point)
        return await landing(decided, observation, self._look)

    async def _act(self, turn: int, decided: Decided, observation: Observation) -> None:
        """One action, one action row, through the gate of DESIGN §1 in its order: validated,
        judged, cleared (core/gate.py), executed under its tool's breaker, recorded with its
        effect."""
        if decided.call is None:
            self._not_validated(turn, decided)
            return
        action = await self._judged(turn, decided, observation)
        if action is None:
            return
        result = await self._cleared_and_executed(turn, action)
        if result is not None:
            await self._recorded(action, result)

    def _not_validated(self, turn: int, decided: Decided) -> None:
        """The row of a call the gate refused to validate: denied when its tool is not allowed,
        else failed (an unknown tool, arguments that do not fit)."""
        step = self._begin(turn, StepKind.ACTION, decided.decision.tool or "", decided.stored_args)
        error = decided.refusal
        status = StepStatus.DENIED if isinstance(error, ToolNotAllowed) else StepStatus.FAILED
        self._fail(step, status, str(error))

    async def _judged(
        self, turn: int, decided: Decided, observation: Observation
    ) -> _Action | None:
        """The call judged again now, before anything of it is told (the focus may have moved
        since the decision: the user, a window that popped up), and its row begun; None when
        the row ended here: the call acts on one of the app's own windows (denied), or a pause
        came while the gate looked."""
        tool = decided.decision.tool or ""
        judged = await self.gate.judge(decided, observation)
        call = judged.call
        target = target_of(call.spec, call.args, observation)
        # the monitor it is on, from its first event: the acting panel goes there
        step = self._begin(
            turn,
            StepKind.ACTION,
            tool,
            judged.decided.stored_args,
            monitor=monitor_of(observation, target),
        )
        # what it acts on, so that a routine saved from this run can find it again
        step = step.with_(element=element_ref(call.spec, call.args.model_dump(), observation))
        if denial := await self.gate.refusal(judged, observation):
            self._fail(step, StepStatus.DENIED, denial)
            return None
        if await self._pause_point():
            # paused while the gate read the focus or the app's own windows: nobody is asked
            # about a call the person's own use of the desktop made stale
            self._end(step, StepStatus.SKIPPED, error=STALE_DECISION)
            return None
        return _Action(tool, judged, observation, target, step)

    async def _cleared_and_executed(self, turn: int, action: _Action) -> ToolResult | None:
        """The call cleared and run while its tool's breaker holds a place for it (the place is
        let go however it ends; only a result that is the tool's own counts toward the
        breaker, not a `NotTheToolsFault`); None when it did not
        run: the breaker is open (the run ends failed / breaker), the gate refused it, or a
        pause came before or during it."""
        tool = action.tool
        breaker = self.deps.breakers[tool]
        if not breaker.acquire():
            message = _breaker_message(tool, breaker.retry_in_s())
            self._fail(action.step, StepStatus.FAILED, message)
            self.outcome = _Outcome(RunStatus.FAILED, StopReason.BREAKER, message)
            return None
        with breaker.slot() as slot:
            if not await self._cleared(turn, action):
                return None
            result = await self._execute(action.step, action.judged.call, action.observation)
            if result is not None and result.tool_fault:
                slot.record(result.ok)
            return result

    async def _cleared(self, turn: int, action: _Action) -> bool:
        """The policy, the grants and the person's answer (core/gate.py `clear`), then the
        action's row stored: False when the call is not to run, its row ended (denied, or
        skipped: what was approved is no longer what would run; a pause)."""
        step = action.step
        refusal = await self.gate.clear(
            turn, action.judged, action.observation, action.target, step.element
        )
        if refusal is not None:
            if refusal.status is StepStatus.DENIED:
                self._fail(step, refusal.status, refusal.error)
            else:
                self._end(step, refusal.status, error=refusal.error)
            return False
        # the action's row is stored first: a pause (a take-over) while the human was asked,
        # while the focus was looked at again or while the row was written is seen here,
        # with no await before the tool starts
        await self._settle()
        if await self._pause_point():
            self._end(step, StepStatus.SKIPPED, error=STALE_DECISION)
            return False
        return True

    async def _recorded(self, action: _Action, result: ToolResult) -> None:
        """The action's row ended as the tool's result says: done, with its effect on the
        screen (the consecutive failures start again from 0; the injection guard remembers
        what it typed), or failed, with its error; both with its summary and where it acted
        (where the tool says, else the call's target)."""
        decided, call, step = action.judged.decided, action.judged.call, action.step
        summary = decided.redact(result.summary)
        target = result.target or action.target
        if not result.ok:
            error = decided.redact(result.error or "failed")
            self._fail(step, StepStatus.FAILED, error, summary=summary, target=target)
            return
        self.failures = 0
        self.guard.typed(call.spec, call.values)
        try:
            effect, note = await self._effect_of(
                call.spec, call.args.model_dump(), action.observation
            )
        except (StopRequested, asyncio.CancelledError):
            # the action did run: its row says so, then the stop ends the run
            self._end(step, StepStatus.OK, summary=summary, target=target)
            raise
        summary = f"{summary} [{note}]" if note else summary
        self._end(step, StepStatus.OK, summary=summary, target=target, effect=effect)

    async def _execute(
        self, step: StepView, call: Call, observation: Observation
    ) -> ToolResult | None:
        """The tool run within its deadline (a tool that throws: a failed result); None when
        a pause interrupted it, its step then ended skipped."""
        deps = self.deps
        spec, args = call.spec, call.args
        context = ToolContext(self.run.id, observation, self.control.cancelled, self.control.halted)
        deadline = deps.tool_timeout_s + float(getattr(args, "seconds", 0) or 0)
        try:
            return await self._outside(
                lambda: _within(
                    deadline,
                    f"{spec.name} did not finish",
                    lambda: deps.executor.execute(spec, args, context),
                )
            )
        except StopRequested:
            raise
        except NotTheToolsFault as fault:
            # a failed step that the tool's breaker does not count: the tool is not broken
            return ToolResult.failure(describe(fault), tool_fault=False)
        except ActionPaused as paused:
            # paused before its first input event or during it: nothing more was sent;
            # the breaker's place is let go, the next turn (after the resume) decides
            why = f"{paused}; {PAUSED_THEN}" if paused.partial else STALE_DECISION
            self._end(step, StepStatus.SKIPPED, error=why)
            return None
        except Exception as error:  # noqa: BLE001 - a tool that throws is a failed step
            return ToolResult.failure(describe(error))

    async def _effect_of(
        self, tool: ToolSpec, args: dict[str, Any], before: Observation
    ) -> tuple[Effect, str]:
        """Observe the screen the action left (the next turn starts from this observation),
        compare it with the one it acted on (core/effect.py), and count a call that keeps
        changing nothing. (effect, a note for the model: "" or "no visible change…")."""
        await self._after_action()
        seen = await screen_after(tool, before, self._look, self.control, self.deps.effect_wait_s)
        if seen is None:
            return Effect.UNKNOWN, ""
        after, effect = seen
        self._ready = after
        repeats = self.stuck.record(tool, args, effect)
        if repeats >= STUCK_AT:
            self.outcome = _Outcome(
                RunStatus.FAILED,
                StopReason.STUCK,
                f"{call_key(tool.name, args)} changed nothing on the screen {repeats} times",
            )
        return effect, effect_note(tool, effect, repeats)

    async def _look(self) -> Observation | None:
        """The screen for the effect check; None when it cannot be had (the next turn
        observes, and fails, on its own)."""
        try:
            return await self._outside(
                lambda: _within(self.deps.observe_timeout_s, "", self.deps.observer.observe)
            )
        except (StopRequested, asyncio.CancelledError):
            raise
        except Exception:  # noqa: BLE001 - the next turn observes (and fails) on its own
            return None

    async def _after_action(self) -> None:
        """The services' `after_action` hook, within the observation deadline; a fault of
        the hook is logged, it never fails the step."""
        hook = self.deps.after_action
        if hook is None:
            return
        try:
            await self._outside(lambda: _within(self.deps.observe_timeout_s, "after_action", hook))
        except (StopRequested, asyncio.CancelledError):
            raise
        except Exception:  # noqa: BLE001 - e.g. the watch's X connection went away
            log.warning("run %s: the after-action hook failed", self.run.id, exc_info=True)

    async def _rest_of_batch(self, turn: int, batch: tuple[Decision, ...]) -> None:
        """The turn's further actions (a model's batch), each one step as the first was:
        observed afresh, gated, executed, stored. A stop ends the run between them; a pause,
        or an action that did not run OK, ends the batch: the rest are stored skipped and the
        model is told on the next turn (the history)."""
        for done, decision in enumerate(batch):
            last = self.steps[-1]
            why = ""
            if self.outcome is not None:
                why = BATCH_ENDED.format(why="the run is ending")
            elif last.kind is not StepKind.ACTION or last.status is not StepStatus.OK:
                why = BATCH_ENDED.format(why=f"the action before it was {last.status.value}")
            elif await self._pause_point():
                why = STALE_DECISION
            observation = None if why else await self._observe(turn, part=done + 1)
            if observation is not None and await self._pause_point():
                # paused while the screen was read: nobody is asked about the rest
                why, observation = STALE_DECISION, None
            if observation is None or self.outcome is not None:
                for rest in batch[done:]:
                    step = self._begin(turn, StepKind.ACTION, rest.tool, {})
                    self._end(
                        step,
                        StepStatus.SKIPPED,
                        error=why or BATCH_ENDED.format(why="the screen could not be observed"),
                    )
                return
            await self._act(turn, await self.gate.validated(decision, observation), observation)

    def _skip_stale(self, turn: int, decided: Decided) -> None:
        step = self._begin(turn, StepKind.ACTION, decided.decision.tool, decided.stored_args)
        self._end(step, StepStatus.SKIPPED, error=STALE_DECISION)

    def _limits(self) -> _Outcome | None:
        if self.failures >= self.run.max_failures:
            return _Outcome(
                RunStatus.FAILED,
                StopReason.MAX_FAILURES,
                f"{self.failures} consecutive failures; last: {self._last_error()}",
            )
        run = self.run
        over = self.deps.budget.exceeded(
            self.deps.perf() - self._since, run.prompt_tokens + run.completion_tokens
        )
        if over:
            return _Outcome(RunStatus.STOPPED, StopReason.BUDGET, over)
        if self.run.step_count >= self.run.max_steps:
            return _Outcome(
                RunStatus.STOPPED,
                StopReason.MAX_STEPS,
                f"reached the limit of {self.run.max_steps} steps",
            )
        return None

    def _last_error(self) -> str:
        for step in reversed(self.steps):
            if step.error:
                return step.error
        return "unknown"

    # ── step rows, and what is held for the store ───────────────────────────

    def _begin(
        self,
        turn: int,
        kind: StepKind,
        tool: str | None,
        args: dict[str, Any],
        monitor: MonitorArea | None = None,
    ) -> StepView:
        step = StepView(
            run_id=self.run.id,
            seq=len(self.steps) + 1,
            index=turn,
            kind=kind,
            status=StepStatus.RUNNING,
            started_at=self.deps.now(),
            tool=tool,
            args=args,
            monitor=monitor,
        )
        self.steps.append(step)
        self.open_step = step
        self._open_since = self.deps.perf()
        self._tell(StepStarted(step), step)
        return step

    def _end(self, step: StepView, status: StepStatus, **fields: Any) -> StepView:
        done = step.with_(
            status=status,
            finished_at=self.deps.now(),
            duration_ms=round((self.deps.perf() - self._open_since) * 1000, 3),
            **fields,
        )
        self.steps[done.seq - 1] = done
        self.open_step = None
        self._tell(StepFinished(done), done)
        return done

    def _fail(self, step: StepView, status: StepStatus, error: str, **fields: Any) -> None:
        """End a step that counts as a failure toward max_failures."""
        self.failures += 1
        self._end(step, status, error=error, **fields)

    def _close_open_step(self, error: str) -> None:
        if self.open_step is not None:
            self._end(self.open_step, StepStatus.SKIPPED, error=error)

    def _keep_screenshot(
        self, turn: int, observation: Observation, part: int = 0
    ) -> tuple[str, str | None]:
        """The paths of the observation's screenshot and thumbnail, held for the next write.
        The same image as the last one kept (an unchanged screen: the observer gives back the
        very bytes it encoded before) is not written again; the row names the file that has
        it, and a turn that waits on a still screen writes no file."""
        last = self._last_screenshot
        if last is not None and last[0] is observation.image:
            return last[1], last[2]
        ext = "png" if observation.mime == "image/png" else "jpg"
        # the screens between the actions of a batch are files of their own
        name = f"{turn:04d}" if not part else f"{turn:04d}.{part}"
        path = self._keep_file(f"{name}.{ext}", observation.image)
        thumb = None
        if observation.thumbnail:
            thumb = self._keep_file(f"{name}.thumb.jpg", observation.thumbnail)
        self._last_screenshot = (observation.image, path, thumb)
        return path, thumb

    def _screenshot_of(self, turn: int, observation: Observation) -> str | None:
        """The stored path of the screen `observation` shows: the turn's own, else (the look
        a grounded call lands on) the same image as the last one kept, else kept now as
        NNNN.landing.jpg — only when somebody is asked about it."""
        if observation.screenshot_path is not None:
            return observation.screenshot_path
        last = self._last_screenshot
        if last is not None and last[0] is observation.image:
            return last[1]
        ext = "png" if observation.mime == "image/png" else "jpg"
        return self._keep_file(f"{turn:04d}.landing.{ext}", observation.image)

    def _keep_file(self, name: str, data: bytes) -> str:
        """Hold an artifact of this run for the next write; its path relative to the data dir."""
        self._held_writes.append(Artifact(self.run.id, name, data))
        return self.deps.repo.artifact_path(self.run.id, name)

    def _tell(self, event: TaskLoopEvent, write: StoreWrite | None = None) -> None:
        """Tell `event` once `write` and every write held before it are stored: at once when
        nothing is held, else in order at the next `_settle`."""
        if write is not None:
            self._held_writes.append(write)
        if self._held_writes or self._held_events:
            self._held_events.append(event)
        else:
            self.emit(event)

    async def _settle(self, *, pace: bool = True) -> None:
        """Store what is held as one write (one hand-off to the store, one transaction), then
        tell the events that waited for it, in order. Called before every wait on the outside
        world, so a turn costs one write before the model request and one before the tool:
        whatever a viewer was told is stored, and a process killed mid-run loses nothing it
        told. A write that fails stays held (the run's end tries it once more) and raises."""
        if self._held_writes:
            await self.deps.repo.write(self._held_writes)
            self._held_writes = []
        events, self._held_events = self._held_events, []
        for event in events:
            self.emit(event)
        if pace and any(isinstance(event, StepFinished) for event in events):
            await self._keep_pace()

    async def _outside(self, start: Callable[[], Awaitable[T]]) -> T:
        """Settle, then await `start()` (the model, a tool, the screen) guarded by the stop."""
        await self._settle()
        return await self.control.guard(start())

    async def _keep_pace(self) -> None:
        # never while the run is ending: a stop closes its open step without waiting
        if self.deps.pace is not None and not self.control.stop_requested:
            await self.control.guard(self.deps.pace())


def _breaker_message(tool: str, retry_in_s: float) -> str:
    return str(
        BreakerOpen(
            f"{tool} is not working (it failed several times in a row); "
            f"it will be tried again in {retry_in_s:.0f} s"
        )
    )


def _decision_summary(decision: Decision) -> str:
    if decision.action == "done":
        return f"done: {decision.message or decision.reason}"
    if decision.action == "fail":
        return f"fail: {decision.reason or decision.message}"
    return f"{decision.tool}"


async def _within(seconds: float, what: str, start: Callable[[], Awaitable[T]]) -> T:
    """`start()`'s outcome, or TimeoutError saying `what` did not finish in `seconds`.

    The work is begun here, not by the caller: a `_within` that a stop closes before it
    ran leaves no coroutine behind that was never awaited.
    """
    try:
        async with asyncio.timeout(seconds):
            return await start()
    except TimeoutError:
        raise TimeoutError(f"{what} in {seconds:g} s") from None


_END = object()


async def run_task_loop(
    run: RunView, deps: LoopDeps, control: RunControl
) -> AsyncGenerator[TaskLoopEvent, None]:
    """The events of one run, ending with run_finished, whose run view is the final one.

    The loop runs in a task of its own and this generator relays its events, so a
    consumer that goes away (closes the generator, or is cancelled) ends the run
    stopped / user_stop, with its state stored, and leaves no loop running.
    """
    queue: asyncio.Queue[object] = asyncio.Queue()
    task = asyncio.create_task(_TaskLoop(run, deps, control, queue.put_nowait).run_to_end())
    task.add_done_callback(lambda _: queue.put_nowait(_END))
    try:
        while (event := await queue.get()) is not _END:
            yield event  # type: ignore[misc]
        await task
    finally:
        if not task.done():
            control.stop()  # a user stop: work in threads sees `cancelled` too
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
