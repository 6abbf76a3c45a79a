"""The gate's rules a hand-made mutation run found no test for: the app's own windows, the
edge pixels of a box, arrows before a press, grants nobody offered, the limits' contracts,
and pauses that are no failures (issue #36 item 1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from desktop_agent.core import gate
from desktop_agent.core.breaker import BreakerState
from desktop_agent.core.budget import Budget
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.call_risk import (
    _FOCUS_MOVING_KEYS,
    _PRESS_FOCUSED_COMBOS,
    LOOKALIKE_LETTERS,
    box_holds,
)
from desktop_agent.core.errors import ToolNotAllowed
from desktop_agent.core.events import RunFinished, RunPaused, StepFinished, TaskLoopEvent
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Element,
    Observation,
    Policy,
    RunStatus,
    StepKind,
    StepStatus,
    TaskSpec,
)
from desktop_agent.core.own_windows import OWN_WINDOW_ROLE, own_window_refusal
from tests.fakes import FakeFocusProbe, ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import Consumer, TakeOver, make_harness, through
from tests.unit.desktop.fakes import FakeDriver, executor_with

EDITOR = Element(1, "window", "notes.txt — L3afpad", (0, 0, 1000, 700), focused=True)
#: the app's question dialog, as the observer reads the app's windows at action time
DIALOG = Element(0, "window", "Desktop Agent — allow click?", (300, 200, 400, 300), focused=True)


def action_rows(events: list[TaskLoopEvent]) -> list[tuple[str | None, StepStatus, str | None]]:
    return [
        (event.step.tool, event.step.status, event.step.error)
        for event in events
        if isinstance(event, StepFinished) and event.step.kind is StepKind.ACTION
    ]


# ── the app's own windows ─────────────────────────────────────────────────────


class DialogAfterTheQuestion:
    """An observer (OwnWindowsSource) with no window of the app until `dialog` is set: the
    app's windows as they are when the call is judged."""

    def __init__(self) -> None:
        self.observation = make_observation([EDITOR])
        self.dialog: Element | None = None

    async def observe(self) -> Observation:
        return self.observation

    async def own_windows_now(self, observation: Observation) -> tuple[Element, ...] | None:
        return (self.dialog,) if self.dialog is not None else ()

    async def pointer_now(self, observation: Observation) -> tuple[int, int] | None:
        return None


async def test_a_click_approved_while_an_own_window_came_to_its_point_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the grace the app's closing dialog gets to leave the point: none here, it stays
    monkeypatch.setattr(gate, "OWN_FOCUS_WAIT_S", 0.0)
    observer = DialogAfterTheQuestion()

    class AnswersAsTheDialogOpens:
        requests: list[ApprovalRequest] = []

        async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
            self.requests.append(approval)
            observer.dialog = DIALOG  # another run's question pops up under the point
            return ApprovalDecision.ONCE

    h = make_harness()
    h.runner.services = replace(
        h.runner.services, observer=observer, gate=AnswersAsTheDialogOpens()
    )
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([tool("click", x=450, y=450)], then=done()))

    assert h.executor.calls == []
    [(_, status, error)] = action_rows(events)
    assert status is StepStatus.DENIED and "own window" in (error or "")


PANEL = Element(0, "window", "Desktop Agent — acting", (1100, 0, 180, 80))


def with_panel() -> Observation:
    return make_observation([EDITOR]).with_(own_windows=(PANEL,))


def test_a_drag_that_starts_on_an_own_window_is_refused() -> None:
    drag = {"x": 1150, "y": 40, "to_x": 500, "to_y": 300}  # from the panel into the editor
    assert "(1150, 40)" in own_window_refusal("drag", drag, with_panel())


def test_a_drag_that_ends_on_an_own_window_is_refused() -> None:
    drag = {"x": 500, "y": 300, "to_x": 1150, "to_y": 40}
    assert "(1150, 40)" in own_window_refusal("drag", drag, with_panel())


@pytest.mark.parametrize(
    ("name", "args"), [("hotkey", {"keys": ["alt", "o"]}), ("type_text", {"text": "x"})]
)
def test_keys_are_refused_when_the_probe_finds_an_own_window_the_observation_lacks(
    name: str, args: dict[str, Any]
) -> None:
    nothing_of_the_app = make_observation([EDITOR])  # the screenshot predates the dialog
    assert "keyboard focus now" in own_window_refusal(
        name, args, nothing_of_the_app, OWN_WINDOW_ROLE
    )


async def test_a_hotkey_is_denied_when_only_the_probe_sees_an_own_window() -> None:
    h = make_harness(policies={"hotkey": Policy.ALLOW}, focus=FakeFocusProbe(OWN_WINDOW_ROLE))
    h.observer.observation = make_observation([EDITOR])
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([tool("hotkey", keys=["alt", "o"])], then=done()))

    assert h.executor.calls == [] and h.gate.requests == []
    [(_, status, _error)] = action_rows(events)
    assert status is StepStatus.DENIED


@pytest.mark.parametrize(
    ("letter", "latin"), [(k, v) for k, v in LOOKALIKE_LETTERS.items() if v in "desktop agent"]
)
def test_focusing_the_app_by_a_title_with_a_lookalike_letter_is_refused(
    letter: str, latin: str
) -> None:
    title = "Desktop Agent".replace(latin, letter, 1).replace(latin.upper(), letter, 1)
    assert title != "Desktop Agent"
    # no window of the app is listed: the title alone names it
    refusal = own_window_refusal("focus_window", {"title": title}, make_observation([EDITOR]))
    assert "names the app's own window" in refusal


# ── the edge pixels of a box ──────────────────────────────────────────────────


def test_a_box_holds_its_left_and_top_edge_and_not_its_right_and_bottom() -> None:
    box = (10, 20, 30, 40)
    assert box_holds(box, 10, 20) and box_holds(box, 39, 59)
    assert not box_holds(box, 9, 20) and not box_holds(box, 10, 19)
    assert not box_holds(box, 40, 20) and not box_holds(box, 10, 60)


def test_a_click_on_the_left_top_pixel_of_an_own_window_is_refused() -> None:
    assert own_window_refusal("click", {"x": 1100, "y": 0}, with_panel())
    assert own_window_refusal("click", {"x": 1099, "y": 0}, with_panel()) == ""


DELETE = Element(2, "button", "Delete", (400, 300, 120, 40))


@pytest.mark.parametrize(("x", "y"), [(400, 300), (400, 339), (519, 300)])
async def test_a_click_on_an_edge_pixel_of_a_sensitive_button_asks(x: int, y: int) -> None:
    h = make_harness(answers=[ApprovalDecision.DENY], policies={"click": Policy.ALLOW})
    h.observer.observation = make_observation([EDITOR, DELETE])
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=x, y=y)], then=done()))

    assert [request.caution for request in h.gate.requests] == [
        'the target button "Delete" is sensitive ("delete")'
    ]
    assert h.executor.calls == []


# ── an arrow held before enter or space moves the focus first ─────────────────

CANCEL = Element(3, "button", "Cancel", (540, 300, 120, 40), focused=True)


# parametrised over the lists themselves (issue #36 item 4): each focus-moving key before each
# key that presses the focused control
@pytest.mark.parametrize("moving", sorted(_FOCUS_MOVING_KEYS))
@pytest.mark.parametrize("press", [key for combo in _PRESS_FOCUSED_COMBOS for key in combo])
async def test_a_key_that_moves_the_focus_before_a_press_asks_near_a_sensitive_button(
    moving: str, press: str
) -> None:
    h = make_harness(answers=[ApprovalDecision.DENY], policies={"hotkey": Policy.ALLOW})
    h.observer.observation = make_observation([EDITOR, DELETE, CANCEL])
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("hotkey", keys=[moving, press])], then=done()))

    [request] = h.gate.requests
    assert request.caution.startswith("a tab or an arrow may move the focus")
    assert '"Delete"' in request.caution
    assert h.executor.calls == []


# ── a run grant only where one was offered ────────────────────────────────────


async def test_allow_for_the_run_answered_to_a_sensitive_click_grants_no_later_click() -> None:
    # a person's "run" answer reaches a question that offered none (an API client, a
    # channel that does not look): it is a "once"
    h = make_harness(answers=[ApprovalDecision.RUN, ApprovalDecision.DENY])
    save = Element(4, "button", "Save", (700, 300, 120, 40))
    h.observer.observation = make_observation([EDITOR, DELETE, save])
    run = await h.create()
    planner = ScriptedPlanner(
        [tool("click", x=460, y=320), tool("click", x=760, y=320)], then=done()
    )
    await h.collect(run, planner)

    assert [request.offer_run_grant for request in h.gate.requests] == [False, True]
    assert h.permissions.task_grants(run.id) == frozenset()
    assert [args.x for _, args in h.executor.calls] == [460]  # type: ignore[attr-defined]


# ── the contracts of the limits ───────────────────────────────────────────────


def test_an_empty_allowed_list_allows_no_tool() -> None:
    registry = builtin_registry()
    with pytest.raises(ToolNotAllowed):
        registry.validate("click", {"x": 1, "y": 1}, ())
    registry.validate("click", {"x": 1, "y": 1}, None)  # None: every tool


async def test_a_stored_run_with_an_empty_allowed_list_runs_nothing() -> None:
    h = make_harness(policies={"click": Policy.ALLOW})
    run = await h.repo.create_run(TaskSpec(goal="do the thing", allowed_tools=()))
    events = await h.collect(run, ScriptedPlanner([tool("click", x=1, y=1)], then=done()))

    assert h.executor.calls == []
    assert action_rows(events) == [
        ("click", StepStatus.DENIED, "tool 'click' is not allowed in this run")
    ]


def test_a_budget_of_zero_seconds_or_tokens_is_a_limit_not_none() -> None:
    # "no limit" is None (the settings turn their 0 into None)
    assert Budget(max_seconds=0).exceeded(0.0, 0) == "the run took 0 s, its limit is 0 s"
    assert Budget(max_tokens=0).exceeded(0.0, 0) == "the run used 0 model tokens, its limit is 0"
    assert Budget().exceeded(10**9, 10**12) == ""


# ── pauses are no failures ────────────────────────────────────────────────────


async def test_three_actions_a_pause_interrupted_are_no_breaker_failures() -> None:
    h = make_harness(policies={"type_text": Policy.ALLOW})
    take_over = TakeOver(h)

    def on_press(count: int) -> None:
        if count in (2, 4, 6):  # the user takes over after two keys of each of three calls
            take_over()

    driver = FakeDriver(on_press=on_press)
    through(h, executor_with(driver), "type_text")
    run = await h.create()
    take_over.run_id = run.id
    planner = ScriptedPlanner([tool("type_text", text="abc")] * 4, then=done())
    consumer = Consumer(h.runner.start(run, planner))
    for n in range(1, 4):
        await consumer.wait_for(paused_times(consumer, n))
        h.runner.resume(run.id)
    events = await consumer.finished()

    breaker = h.breakers["type_text"]
    assert (breaker.state, breaker.consecutive_failures) == (BreakerState.CLOSED, 0)
    rows = action_rows(events)
    assert [status for _, status, _ in rows] == [StepStatus.SKIPPED] * 3 + [StepStatus.OK]
    last = events[-1]
    assert isinstance(last, RunFinished) and last.run.status is RunStatus.COMPLETED


def paused_times(consumer: Consumer, n: int) -> Callable[[TaskLoopEvent], bool]:
    """A wait_for predicate: the run has been paused `n` times."""
    return lambda _: sum(isinstance(event, RunPaused) for event in consumer.events) >= n
