"""The gate of one run: between deciding and executing, the validated call is judged (its
risk, the focused control, the screen's texts that give orders, the app's own windows), the
policy, the grants and the person are asked, and once somebody answered the call is checked
again (the focus, the app's own windows, what is under the point now). The loop holds one
`Gate` per run and asks it, in this order: `validated` (when the model decided), `judge`
(before anything of the call is told), `refusal` (before any policy), `clear` (policy,
grants, the question, the re-checks); a call reaches the executor only when `clear` has no
refusal. It judges the one validated call (core/validated_call.py) the store keeps, the
person asked sees and the executor runs. Choices: docs/architecture.md ("The gate")."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from desktop_agent.core.builtin_tools import text_field_of
from desktop_agent.core.call_risk import (
    CallRisk,
    Sensitivity,
    assess_call,
    control_at,
    window_at,
)
from desktop_agent.core.control import RunControl
from desktop_agent.core.deps import LoopDeps
from desktop_agent.core.errors import NobodyToAsk, ObservationError, StopRequested, ToolError
from desktop_agent.core.events import ApprovalRequested, ApprovalResolved, TaskLoopEvent
from desktop_agent.core.injection_guard import InjectionGuard, provider_notes
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Decision,
    ElementRef,
    Observation,
    Policy,
    Risk,
    SafetyCheck,
    StepStatus,
    SuspiciousText,
    monitor_of,
)
from desktop_agent.core.own_windows import OWN_WINDOW_ROLE, own_window_refusal
from desktop_agent.core.ports import Focus, FocusProbe, OwnWindowsSource, WindowsNowSource
from desktop_agent.core.tools import ToolSpec
from desktop_agent.core.validated_call import Call, Decided, what_to_show

#: after an answer, how long the app's own window may keep the focus (its dialog closing, the
#: window going out of the way) before a keyboard call is refused, and how often it is asked
OWN_FOCUS_WAIT_S = 1.0
OWN_FOCUS_LOOK_S = 0.05
#: a call approved for one focus whose focus moved while the person was asked
FOCUS_MOVED = (
    "the focus moved while you were asked ({why}): not done; the next turn decides on a "
    "fresh screenshot"
)
#: why it moved: another place of the same role, or a place nobody can tell
FOCUS_ELSEWHERE = "another window or control has the focus now"
FOCUS_UNTOLD = "where the keys would go now cannot be told"
#: a probe that cannot be asked, fails or is late
UNKNOWN_FOCUS = Focus()
OWN_WINDOWS_UNSEEN = (
    "this desktop does not show where the app's own windows are (Wayland): the input could "
    "reach one of its questions"
)
#: an input call decided on one screen before which a window came up that makes it ask
WINDOW_CAME_UP = (
    "a window came up before the action was sent ({why}): not done; the next turn decides "
    "on a fresh screenshot"
)
#: a click or drag approved on one screen whose point holds something else once answered
SCREEN_CHANGED = (
    "the screen changed under the point while you were asked ({why}): not done; the next "
    "turn decides on a fresh screenshot"
)


@dataclass(frozen=True, slots=True)
class Judged:
    """A call as the gate judged it before anything of it was told: the decision (its text
    hidden as the focus now asks), the call, the focused role, its risk, the screen's texts
    that make it ask, and where the keys go (the focus probe's place; None when not known)."""

    decided: Decided
    call: Call
    role: str | None
    risk: CallRisk
    notes: tuple[SuspiciousText, ...] = ()
    place: str | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a call does not run: DENIED (counts toward max_failures) or SKIPPED (what was
    approved is no longer what would run; the next turn decides afresh)."""

    status: StepStatus
    error: str


class Gate:
    """The gate's questions and re-checks for one run. The loop lends it what stays the
    loop's: `settle` (store what is held before a wait on the outside world), `tell` (an
    event, in order with what is held), `look` (the screen now; None when it cannot be had)
    and `screenshot_of` (the stored path of a screen a question shows)."""

    def __init__(
        self,
        *,
        run_id: str,
        allowed_tools: tuple[str, ...],
        deps: LoopDeps,
        control: RunControl,
        guard: InjectionGuard,
        settle: Callable[[], Awaitable[None]],
        tell: Callable[[TaskLoopEvent], None],
        look: Callable[[], Awaitable[Observation | None]],
        screenshot_of: Callable[[int, Observation], str | None],
    ) -> None:
        self.run_id = run_id
        self.allowed_tools = allowed_tools
        self.deps = deps
        self.control = control
        self.guard = guard
        #: the policies and persistent grants as they are now: a change during the run (the
        #: settings dialog) applies to the next one
        self.permissions = deps.permissions.for_run(run_id)
        self._settle = settle
        self._tell = tell
        self._look = look
        self._screenshot_of = screenshot_of

    # ── the call, judged before anything of it is told ────────────────────────

    async def validated(self, decision: Decision, observation: Observation) -> Decided:
        """The call validated once: the one object the gate judges, the store keeps, the
        person asked sees and the executor runs — never the model's raw arguments."""
        try:
            spec, args = self.deps.registry.validate(
                decision.tool or "", decision.args, self.allowed_tools
            )
        except ToolError as error:
            return Decided.refused(decision, error, self._text_field(decision.tool or ""))
        call = Call(spec, args)
        risk = self._assess(call, observation, (await self._focus(spec)).role)
        return Decided.redacted(decision, call, risk.sensitivity)

    async def judge(self, decided: Decided, observation: Observation) -> Judged:
        """The call's risk as the screen and the focus are now (the focus is asked again: it
        may have moved since the decision), its text hidden if the focus now asks that, the
        screen's texts that give orders and a desktop that hides the app's own windows making
        it ask under any policy and grant."""
        call = decided.call
        assert call is not None, "only a validated call is judged"
        spec = call.spec
        focus = await self._focus(spec)
        role = focus.role
        risk = self._assess(call, observation, role)
        if decided.unknown_target and not risk.always_ask:
            risk = replace(risk, always_ask=decided.unknown_target)
        if risk.sensitivity.redact and not decided.secrets:
            decided = Decided.redacted(decided.decision, call, risk.sensitivity)
        # text on the screen that gives orders: asks under any policy and grant
        screen = self.guard.judge(spec, call.values, observation, input_=spec.risk is not Risk.SAFE)
        if screen.caution and not risk.always_ask:
            risk = replace(risk, always_ask=screen.caution)
        if not risk.always_ask and (unseen := self._own_windows_unseen(spec)):
            risk = replace(risk, always_ask=unseen)
        return Judged(decided, call, role, risk, screen.notes, focus.place)

    async def refusal(self, judged: Judged, observation: Observation) -> str:
        """Why the call would act on one of the app's own windows (on the turn's screen, or
        as they are now), or "": before any policy, grant or question, nobody's answer makes
        this run."""
        call = judged.call
        if denial := own_window_refusal(call.spec, call.values, observation, judged.role):
            return denial
        return await self._on_own_window_now(call, observation, wait=False)

    # ── policy, grants, the person, and the re-checks once they answered ──────

    async def clear(
        self,
        turn: int,
        judged: Judged,
        observation: Observation,
        target: tuple[int, int] | None,
        element: ElementRef | None = None,
    ) -> Refusal | None:
        """None when the call may run now; else why not. After an answer the call is checked
        again: the keys go where the focus is once the person answered, a pointer call where
        the app's own windows and the screen are then."""
        call, risk = judged.call, judged.risk
        spec = call.spec
        refusal, asked = await self._gate(
            turn, spec, judged.decided, risk, observation, target, judged.notes, element
        )
        if refusal is not None:
            return Refusal(StepStatus.DENIED, refusal)
        if asked and spec.keyboard:
            # the keys go where the focus is once the person answered
            focus = await self._focus_after_answer(spec)
            if denial := own_window_refusal(spec, call.values, observation, focus.role):
                return Refusal(StepStatus.DENIED, denial)
            moved = self._moved_while_asked(call, observation, risk, focus.role)
            if moved or (moved := await self._focus_elsewhere(judged, observation, focus.place)):
                return Refusal(StepStatus.SKIPPED, FOCUS_MOVED.format(why=moved))
        if asked and (denial := await self._on_own_window_now(call, observation)):
            return Refusal(StepStatus.DENIED, denial)
        looked = asked and spec.judged_at_point
        if asked and (changed := await self._changed_under_point(call, observation, risk)):
            return Refusal(StepStatus.SKIPPED, SCREEN_CHANGED.format(why=changed))
        if not looked and (came := await self._window_came_up(call, observation, risk)):
            return Refusal(StepStatus.SKIPPED, WINDOW_CAME_UP.format(why=came))
        return None

    async def safety_check(
        self, turn: int, decided: Decided, observation: Observation, check: SafetyCheck
    ) -> tuple[ApprovalDecision, str]:
        """The person asked about one of the provider's safety checks on the turn's actions,
        whatever the policy, the grants or `--approve all`: the answer and who gave it."""
        decision = decided.decision
        actions = 1 + len(decision.batch)
        approval = ApprovalRequest(
            id=self.deps.approval_ids(),
            run_id=self.run_id,
            index=turn,
            tool=decision.tool or "",
            args=decided.stored_args,
            reason=decided.redact(decision.reason),
            risk=Risk.DANGEROUS,
            caution=(
                f"the model's provider asks before the {actions} action(s) of this turn: "
                f"{check.code}"
            ),
            offer_run_grant=False,
            timeout_s=self.deps.approval_timeout_s,
            screenshot=observation.screenshot_path,
            safety_check=check,
            suspicious_text=provider_notes(check),
        )
        return await self._question(approval)

    # ── the parts ─────────────────────────────────────────────────────────────

    def _text_field(self, tool: str) -> str:
        """The argument whose text a tool named by the model types ("" none): its spec's."""
        registry = self.deps.registry
        return registry.get(tool).text_field if tool in registry else text_field_of(tool)

    def _assess(self, call: Call, observation: Observation, focused_role: str | None) -> CallRisk:
        return assess_call(
            call.spec, call.values, observation, focused_role, self.deps.sensitive_targets
        )

    async def _focus(self, tool: ToolSpec) -> Focus:
        """The focused control's role and place, for the tools whose risk depends on it
        (keyboard tools: password fields, terminals, and where the keys go); each None if
        unknown."""
        probe = self.deps.focus
        if probe is None and isinstance(self.deps.executor, FocusProbe):
            probe = self.deps.executor
        if probe is None or not tool.keyboard:
            return UNKNOWN_FOCUS
        await self._settle()  # before the deadline starts: the store's time is not the probe's
        try:
            async with asyncio.timeout(self.deps.focus_timeout_s):
                return await self.control.guard(probe.focused())
        except (StopRequested, asyncio.CancelledError):
            raise
        except Exception:  # noqa: BLE001 - a probe that fails or is late: the focus is unknown
            return UNKNOWN_FOCUS

    async def _gate(
        self,
        turn: int,
        spec: ToolSpec,
        decided: Decided,
        risk: CallRisk,
        observation: Observation,
        target: tuple[int, int] | None,
        suspicious: tuple[SuspiciousText, ...] = (),
        element: ElementRef | None = None,
    ) -> tuple[str | None, bool]:
        """Policy, grants and the human: (None when the tool may run, else why not; whether
        somebody was asked). `suspicious`: the screen's texts that make it ask; `element`: what
        the call acts on, for the question's sentence only."""
        deps = self.deps
        sensitive = risk.asks_every_call
        policy = self.permissions.decide(spec.name, spec.risk, sensitive=sensitive)
        if policy is Policy.ALLOW:
            return None, False
        if policy is Policy.DENY:
            return f"{spec.name} is denied by policy", False
        approval = ApprovalRequest(
            id=deps.approval_ids(),
            run_id=self.run_id,
            index=turn,
            tool=spec.name,
            args=decided.stored_args,
            reason=decided.redact(decided.decision.reason),
            risk=spec.risk,
            caution=risk.always_ask,
            offer_run_grant=spec.risk is not Risk.DANGEROUS and not sensitive,
            timeout_s=deps.approval_timeout_s,
            screenshot=self._screenshot_of(turn, observation),
            target=target,
            suspicious_text=suspicious,
            element=element,
            monitor=monitor_of(observation, target),
            **what_to_show(decided, risk),
        )

        answer, by = await self._question(approval)
        if answer is ApprovalDecision.DENY:
            return why_denied(by), True
        if answer is ApprovalDecision.RUN and approval.offer_run_grant:
            self.permissions.grant_for_run(spec.name)
        return None, True

    async def _focus_after_answer(self, tool: ToolSpec) -> Focus:
        """The focus once a person answered a question about `tool`: the app's own window
        (its dialog was answered, the window is going out of the way) is waited on to lose
        the focus for up to OWN_FOCUS_WAIT_S, then it is the answer."""
        focus = await self._focus(tool)
        loop = asyncio.get_running_loop()
        until = loop.time() + OWN_FOCUS_WAIT_S
        while focus.role == OWN_WINDOW_ROLE and loop.time() < until:
            await self.control.guard(asyncio.sleep(OWN_FOCUS_LOOK_S))
            focus = await self._focus(tool)
        return focus

    async def _on_own_window_now(
        self, call: Call, observation: Observation, *, wait: bool = True
    ) -> str:
        """Why a pointer call would land on one of the app's own windows as they are *now*
        (the observer's OwnWindowsSource; the observation may be older than a window of the
        app that popped up since, such as another run's question), or "". With `wait` (a
        person just answered: the app's dialog is closing, its window going out of the way)
        the windows are given OWN_FOCUS_WAIT_S to leave the point."""
        source = self.deps.observer
        spec = call.spec
        if not spec.pointer or not isinstance(source, OwnWindowsSource):
            return ""
        values = call.values
        x_name, y_name = spec.points[0]
        unaimed = values.get(x_name) is None or values.get(y_name) is None
        if unaimed and values.get("element") is None:
            # a pointer call without a point (a scroll) acts wherever the pointer rests now
            pointer = await self.control.guard(source.pointer_now(observation))
            if pointer is None:
                return ""
            values = {**values, x_name: pointer[0], y_name: pointer[1]}
        loop = asyncio.get_running_loop()
        until = loop.time() + (OWN_FOCUS_WAIT_S if wait else 0.0)
        while True:
            try:
                now = await self.control.guard(source.own_windows_now(observation))
            except ObservationError as error:
                # a system that can tell and could not now: refused, never let through
                return (
                    f"the app's own windows cannot be read now ({error}): the agent does not "
                    "act where one of them might be"
                )
            if now is None:
                return ""
            denial = own_window_refusal(spec, values, observation.with_(own_windows=now))
            if not denial or loop.time() >= until:
                return denial
            await self.control.guard(asyncio.sleep(OWN_FOCUS_LOOK_S))

    def _own_windows_unseen(self, tool: ToolSpec) -> str:
        """Why a pointer or key call is asked under any policy: the observer says this desktop
        cannot show the app's own windows (`sees_own_windows` False: Wayland hides where other
        programs' windows are), so its questions cannot be ruled out under the point or the
        focus, and the gate, not knowing, asks."""
        if not tool.pointer and not tool.keyboard:
            return ""
        if getattr(self.deps.observer, "sees_own_windows", True):
            return ""
        return OWN_WINDOWS_UNSEEN

    async def _changed_under_point(
        self, call: Call, observation: Observation, approved: CallRisk
    ) -> str:
        """Why a click or drag approved on `observation` no longer lands on what the person
        saw, or "": the screen is looked at again once they answered (a question takes
        seconds, and a dialog may have come up under the point meanwhile), and the call now
        asks for a reason it was not asked with (a sensitive target, a terminal under the
        drop). A look that fails tells nothing new: the person saw the screen, and the app's
        own windows were read again anyway."""
        if not call.spec.judged_at_point:
            return ""
        look = await self._look()
        if look is None:
            return ""
        values, anew = self._judged_again(call, observation, look, approved)
        if anew:
            return anew
        # a box of text that gives orders (or a new window that urges) under the point now,
        # though not on the screen the call was approved on (issue 31 item 4)
        return _not_asked_with(self.guard.at_point(values, look), approved)

    async def _window_came_up(
        self, call: Call, observation: Observation, approved: CallRisk
    ) -> str:
        """Why an input call decided on `observation` asks on the screen as it is now, or "":
        a window that came up since that look (a popup, a notification: the model thought for
        seconds meanwhile) makes the gate look again, and the call's own risk (what is under
        its point, where its keys go) and the injection guard judge it on the new look; a
        look that cannot be had then is a reason too. Cheap where nothing
        came: one read of the window list (`WindowsNowSource`); a desktop that cannot tell
        (no such source, or None) is not looked at again."""
        source = self.deps.observer
        # the injection guard off turns off its verdict below, not the call's own risk: a
        # "Delete" that came up under a granted click asks whether the guard is on or not
        if call.spec.risk is Risk.SAFE or not isinstance(source, WindowsNowSource):
            return ""
        now = await self.control.guard(source.window_ids_now())
        if now is None or now <= observation.window_ids:
            return ""
        look = await self._look()
        if look is None:
            return "a window came up and the screen could not be read again"
        # the call as it would be judged on the new look: a "Delete" of a dialog now under
        # the point, a terminal that came up holding the focus for a typed line (the look is
        # taken anyway; a reason the call was not asked with stops it)
        values, anew = self._judged_again(call, observation, look, approved)
        if anew:
            return anew
        verdict = self.guard.judge(call.spec, values, look, input_=True)
        return _not_asked_with(verdict.caution, approved)

    def _judged_again(
        self, call: Call, observation: Observation, look: Observation, approved: CallRisk
    ) -> tuple[dict[str, Any], str]:
        """`call`, decided on `observation`, judged on a new `look` (its focus not known
        there): its values on the look, and a reason it now asks every time that it was not
        asked with (`approved`), or ""."""
        values = _at_centre(call.values, observation)
        now = assess_call(call.spec, values, look, None, self.deps.sensitive_targets)
        # the same words about another control: a "Delete" of a dialog that came up where the
        # approved "Delete" was is not what the person was asked about
        spec = call.spec
        same_words = bool(now.always_ask) and now.always_ask == approved.always_ask
        if same_words and _under_points(spec, values, observation) != _under_points(
            spec, values, look
        ):
            return values, now.always_ask
        return values, _not_asked_with(now.always_ask, approved)

    def _moved_while_asked(
        self, call: Call, observation: Observation, approved: CallRisk, role: str | None
    ) -> str:
        """Why `call` may no longer run as the person approved it, or "": the focus was asked
        again after the answer (`role`; the person may have clicked into a terminal or a
        password field meanwhile, or a window popped up), and the call now asks every time
        for a reason the question did not give (an ordinary call, or one asked for the
        screen's orders or a focused "Send" button, now typing a line into a terminal), or
        its text now goes into a password field. The keys and text go where the focus is
        when they are sent, not where it was when the question was put; as for a click
        (`_changed_under_point`), the reason the person was told does not stop the call."""
        now = self._assess(call, observation, role)
        to_password = Sensitivity.PASSWORD
        if now.sensitivity is to_password and approved.sensitivity is not to_password:
            return now.always_ask
        return _not_asked_with(now.always_ask, approved)

    async def _focus_elsewhere(
        self, judged: Judged, observation: Observation, place: str | None
    ) -> str:
        """Why the keys of a call approved for one focused place would now go to another,
        or "": the same role is not the same place (another terminal, another host's shell,
        took the focus while the person was asked). Where the probe told the place at the
        question (`judged.place`), the place once answered (`place`) must be that one;
        where it did not (no probe, a desktop or program that does not say), a new look is
        compared with the turn's screen (the focused window and control), and where neither
        tells where the keys go, or the look cannot be had, the keys are not sent."""
        if judged.place is not None:
            if place == judged.place:
                return ""
            return FOCUS_ELSEWHERE if place is not None else FOCUS_UNTOLD
        look = await self._look()
        if look is None:
            return FOCUS_UNTOLD
        was, now = _focused_on(observation), _focused_on(look)
        if was != now:
            return FOCUS_ELSEWHERE
        return "" if was else FOCUS_UNTOLD

    async def _question(self, approval: ApprovalRequest) -> tuple[ApprovalDecision, str]:
        """Ask the person (told as approval_requested / approval_resolved): the answer, and
        who gave it ("user"; "timeout" or "nobody" — no person here could be asked — deny)."""
        await self._settle()
        self.control.check()  # a stop that came while the step was stored: ask nobody
        # nothing is held once settled: told at once
        self._tell(ApprovalRequested(approval))
        by = "user"
        try:
            answer = await self.control.guard(self._ask(approval))
        except TimeoutError:
            answer, by = ApprovalDecision.DENY, "timeout"
        except NobodyToAsk:
            answer, by = ApprovalDecision.DENY, "nobody"
        self._tell(ApprovalResolved(approval, answer, by))
        return answer, by

    async def _ask(self, approval: ApprovalRequest) -> ApprovalDecision:
        # The gate's coroutine is made here, so a guard that refuses to start leaves none behind.
        async with asyncio.timeout(self.deps.approval_timeout_s):
            return await self.deps.gate.request(approval)


def why_denied(by: str) -> str:
    """A denied question's reason in its step, by who gave the answer (`_question`)."""
    if by == "timeout":
        return "approval timed out"
    if by == "nobody":
        return "nobody at this desktop could be asked"
    return "denied by the user"


def _not_asked_with(reason: str, approved: CallRisk) -> str:
    """`reason` to ask every time, unless it is "" or the one the person was asked with."""
    return reason if reason not in ("", approved.always_ask) else ""


def _under_points(spec: ToolSpec, values: dict[str, Any], observation: Observation) -> list[Any]:
    """What is under each of a pointer call's points on `observation`, and for a keyboard
    call what has the focus, as looks can compare it (ids are a look's own): the controls'
    roles, names and boxes, and the windows there."""
    under: list[Any] = []
    if spec.keyboard:
        # the keys go to the focused window and control: another terminal is another place
        under.append(_focused_on(observation))
    for x_name, y_name in spec.points:
        x, y = values.get(x_name), values.get(y_name)
        if isinstance(x, int) and isinstance(y, int):
            control = control_at(observation, x, y)
            windows = window_at(observation, x, y)
            under.append(
                (
                    control and (control.role, control.name, control.box),
                    sorted((window.name, window.box) for window in windows),
                )
            )
    return under


def _focused_on(observation: Observation) -> list[tuple[str, str, tuple[int, int, int, int]]]:
    """The focused window and control of `observation` as looks can compare them (ids are a
    look's own): their roles, names and boxes; [] when the look tells none."""
    return sorted((e.role, e.name, e.box) for e in observation.elements if e.focused)


def _at_centre(values: dict[str, Any], observation: Observation) -> dict[str, Any]:
    """`values` judged on another look: an element of the turn's list is pressed at its
    centre there (its id means nothing on the new look)."""
    values = dict(values)
    element = observation.element(values["element"]) if values.get("element") else None
    if element is not None:
        values.update(element=None, x=element.center[0], y=element.center[1])
    return values
