"""A pause is honoured before anything more is asked of a model or a person (red team: a
pause at an awkward moment). One that came while the model thought: no grounding request
goes to a model server and no provider safety check is put to the person while the run is
paused; the decision, stale once the person had the desktop, is skipped and the next turn
decides afresh. One that came while the screen was read: no model request goes out until
the resume, and then on a screen read afresh."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace

from pydantic import BaseModel

from desktop_agent.core.events import ApprovalRequested
from desktop_agent.core.models import (
    ApprovalDecision,
    Decision,
    Grounding,
    Observation,
    Policy,
    SafetyCheck,
    StepKind,
    StepStatus,
    StepView,
    ToolResult,
)
from desktop_agent.core.ports import DecideRequest, GroundRequest, ToolContext
from tests.fakes import FakeFocusProbe, FakeObserver, ScriptedGrounder, ScriptedPlanner, done, tool
from tests.unit.core.conftest import Consumer, Harness, make_harness

CLICK = tool("click", x=640, y=510, target="the Save button")


async def _paused_while_deciding(
    decision: Decision,
) -> tuple[Harness, list[GroundRequest], list[ApprovalRequested], list[StepView]]:
    h = make_harness(policies={"click": Policy.ALLOW})
    run = await h.create(allowed_tools=("click",))
    grounder = ScriptedGrounder(
        [Grounding(point=(650, 515), first=(640, 510), refined=True, summary="refined")]
    )

    async def decide_then_pause(_request: DecideRequest) -> Decision:
        h.runner.pause(run.id)  # the person takes the desktop while the model thinks
        return decision

    planner = ScriptedPlanner([decide_then_pause, done()], grounder=grounder)
    consumer = Consumer(h.runner.start(run, planner))
    await consumer.wait_type("run_paused")
    asked_while_paused = [e for e in consumer.events if isinstance(e, ApprovalRequested)]
    grounded_while_paused = list(grounder.requests)
    h.runner.resume(run.id)
    await consumer.finished()
    actions = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    return h, grounded_while_paused, asked_while_paused, actions


async def test_a_pause_during_the_models_request_sends_no_grounding_request() -> None:
    h, grounded, _, actions = await _paused_while_deciding(CLICK)
    assert grounded == []
    assert h.executor.calls == []
    assert [a.status for a in actions] == [StepStatus.SKIPPED]


async def test_a_pause_during_the_models_request_puts_no_safety_check_to_the_person() -> None:
    check = SafetyCheck("sc-1", "malicious_instructions", "The page may hold instructions.")
    flagged = Decision(
        action="tool",
        tool="click",
        args={"x": 640, "y": 510},
        reason="use click",
        raw='{"action":"tool"}',
        safety_checks=(check,),
    )
    h, _, asked, actions = await _paused_while_deciding(flagged)
    assert asked == []
    assert h.executor.calls == []
    assert [a.status for a in actions] == [StepStatus.SKIPPED]


class PausingObserver(FakeObserver):
    """Pauses its run (the person takes the desktop) while a screen is read: the next one,
    or the `at`-th read from its start."""

    def __init__(self) -> None:
        super().__init__()
        self.pause: Callable[[], object] | None = None  # Runner.pause answers a bool
        self.at = 0

    async def observe(self) -> Observation:
        if self.pause is not None and self.calls + 1 >= self.at:
            self.pause()
            self.pause = None
        return await super().observe()


async def test_a_pause_while_the_screen_is_read_sends_no_model_request_until_the_resume() -> None:
    observer = PausingObserver()
    h = make_harness(policies={"wait": Policy.ALLOW}, observer=observer)
    run = await h.create(allowed_tools=("wait",))
    observer.pause = lambda: h.runner.pause(run.id)
    planner = ScriptedPlanner([tool("wait", seconds=0), done()])
    consumer = Consumer(h.runner.start(run, planner))
    await consumer.wait_type("run_paused")
    asked_while_paused = len(planner.requests)
    h.runner.resume(run.id)
    await consumer.finished()

    assert asked_while_paused == 0
    # after the resume the screen is read afresh and the model is asked on it
    assert len(planner.requests) == 2
    assert observer.calls >= 2


async def test_a_pause_while_a_batchs_next_screen_is_read_asks_nobody_about_the_rest() -> None:
    # clicks are allowed, typing asks: the batch's second action would put a question
    observer = PausingObserver()
    h = make_harness(policies={"click": Policy.ALLOW, "type_text": Policy.ASK}, observer=observer)
    run = await h.create(allowed_tools=("click", "type_text"))

    async def click_then_pause_at_the_next_look(_args: BaseModel, _c: ToolContext) -> ToolResult:
        # the effect check's look fails, so the batch reads the screen for its next action,
        # and the person takes the desktop during that read
        observer.fail_next(1)
        observer.pause, observer.at = (lambda: h.runner.pause(run.id)), observer.calls + 2
        return ToolResult.success("clicked")

    h.executor.handlers["click"] = click_then_pause_at_the_next_look
    both = replace(tool("click", x=5, y=5), batch=(tool("type_text", text="hello"),))
    consumer = Consumer(h.runner.start(run, ScriptedPlanner([both, done()])))
    await consumer.wait_type("run_paused")
    asked_while_paused = [e for e in consumer.events if isinstance(e, ApprovalRequested)]
    h.runner.resume(run.id)
    await consumer.finished()

    assert asked_while_paused == []
    assert h.gate.requests == []
    actions = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert [(a.tool, a.status) for a in actions] == [
        ("click", StepStatus.OK),
        ("type_text", StepStatus.SKIPPED),
    ]


async def test_a_pause_while_a_safety_check_is_asked_sends_no_grounding_request() -> None:
    # the person pauses the run while the provider's question is open, then answers it
    answer: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
    h = make_harness(answers=[answer], policies={"click": Policy.ALLOW})
    run = await h.create(allowed_tools=("click",))
    grounder = ScriptedGrounder(
        [Grounding(point=(650, 515), first=(640, 510), refined=True, summary="refined")]
    )
    check = SafetyCheck("sc-1", "malicious_instructions", "The page may hold instructions.")
    flagged = replace(CLICK, safety_checks=(check,))
    consumer = Consumer(h.runner.start(run, ScriptedPlanner([flagged, done()], grounder=grounder)))
    await consumer.wait_type("approval_requested")
    h.runner.pause(run.id)
    answer.set_result(ApprovalDecision.ONCE)
    await consumer.wait_type("run_paused")
    grounded_while_paused = list(grounder.requests)
    h.runner.resume(run.id)
    await consumer.finished()

    assert grounded_while_paused == []
    assert h.executor.calls == []


class PausingProbe(FakeFocusProbe):
    """The focus probe, during whose answer the person takes the desktop (a pause)."""

    def __init__(self, at: int) -> None:
        super().__init__("text")
        self.pause: Callable[[], object] | None = None  # Runner.pause answers a bool
        self.at = at

    async def focused_role(self) -> str | None:
        if self.pause is not None and self.calls + 1 == self.at:
            self.pause()
        return await super().focused_role()


async def test_a_pause_while_the_focus_is_read_puts_no_question_to_the_person() -> None:
    probe = PausingProbe(at=2)  # 1: when the call is validated; 2: when the gate judges it
    h = make_harness(policies={"type_text": Policy.ASK}, focus=probe)
    run = await h.create(allowed_tools=("type_text",))
    planner = ScriptedPlanner([tool("type_text", text="hello"), done()])
    # paused while the gate reads the focus for the call, just before it would ask
    probe.pause = lambda: h.runner.pause(run.id)
    consumer = Consumer(h.runner.start(run, planner))
    await consumer.wait_type("run_paused")
    asked_while_paused = [e for e in consumer.events if isinstance(e, ApprovalRequested)]
    h.runner.resume(run.id)
    await consumer.finished()

    assert asked_while_paused == []
    assert h.executor.calls == []
    actions = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert [a.status for a in actions] == [StepStatus.SKIPPED]
