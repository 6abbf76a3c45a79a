"""The grounding step: a coordinate call's target is looked for before the gate, and the point
found is what is assessed, asked about, stored and clicked (issue #19)."""

from __future__ import annotations

import asyncio

from desktop_agent.core.events import StepStarted
from desktop_agent.core.models import (
    ApprovalDecision,
    Element,
    Grounding,
    Observation,
    RunStatus,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
    TokenUsage,
)
from desktop_agent.core.ports import GroundRequest
from tests.fakes import (
    FakeObserver,
    ScriptedGrounder,
    ScriptedPlanner,
    done,
    make_observation,
    tool,
)
from tests.unit.core.conftest import Blocker, Consumer, Harness, make_harness

SHOP = make_observation(
    [
        Element(1, "button", "Add to cart", (100, 100, 100, 30)),
        Element(2, "button", "Pay now", (600, 500, 100, 30)),
    ]
)


def steps_of(h: Harness, run_id: str) -> list[StepView]:
    return [step for _, step in sorted(h.repo.steps[run_id].items())]


def refined(point: tuple[int, int], first: tuple[int, int], **more: object) -> Grounding:
    return Grounding(
        point=point,
        first=first,
        refined=True,
        summary=f"refined {first[0]},{first[1]} → {point[0]},{point[1]}",
        crop=(480, 270, 320, 180),
        image=b"\xff\xd8crop",
        **more,  # type: ignore[arg-type]
    )


async def test_the_refined_point_is_what_the_gate_judges_asks_about_stores_and_clicks() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE, ApprovalDecision.ONCE])
    h.observer.observation = SHOP
    run = await h.create(allowed_tools=("click",))
    # the planner's guess is on "Add to cart"; the target it names is found on "Pay now"
    grounder = ScriptedGrounder([refined((650, 515), (150, 115))])
    planner = ScriptedPlanner(
        [tool("click", x=150, y=115, target="the Pay now button"), done()], grounder=grounder
    )

    await h.collect(run, planner)

    [request] = grounder.requests
    assert (request.tool, request.target, request.point) == (
        "click",
        "the Pay now button",
        (150, 115),
    )
    assert request.observation.elements == SHOP.elements
    [asked] = h.gate.requests
    assert (asked.args["x"], asked.args["y"], asked.target) == (650, 515, (650, 515))
    assert asked.caution == 'the target button "Pay now" is sensitive ("pay")'
    [(_, args)] = h.executor.calls
    assert (args.x, args.y) == (650, 515)  # type: ignore[attr-defined]
    steps = steps_of(h, run.id)
    assert [s.kind for s in steps] == [
        StepKind.OBSERVE, StepKind.DECIDE, StepKind.GROUND, StepKind.ACTION,
        StepKind.OBSERVE, StepKind.DECIDE,
    ]  # fmt: skip
    decide, ground, action = steps[1], steps[2], steps[3]
    assert (decide.args["x"], decide.args["y"]) == (150, 115)  # what the model said
    assert ground.args == {
        "target": "the Pay now button", "x": 150, "y": 115, "crop": [480, 270, 320, 180],
    }  # fmt: skip
    assert (ground.status, ground.target, ground.summary) == (
        StepStatus.OK, (650, 515), "refined 150,115 → 650,515",
    )  # fmt: skip
    assert ground.screenshot == f"runs/{run.id}/0001.ground.jpg"
    assert h.repo.artifacts[ground.screenshot] == b"\xff\xd8crop"
    assert (action.args["x"], action.args["y"], action.target) == (650, 515, (650, 515))


async def test_a_guess_on_a_sensitive_button_refined_away_from_it_does_not_ask() -> None:
    h = make_harness()
    h.observer.observation = SHOP
    run = await h.create(allowed_tools=("click",))
    grounder = ScriptedGrounder([refined((150, 115), (650, 515))])
    planner = ScriptedPlanner(
        [tool("click", x=650, y=515, target="Add to cart"), done()], grounder=grounder
    )

    await h.collect(run, planner)

    assert [request.caution for request in h.gate.requests] == [""]
    [(_, args)] = h.executor.calls
    assert (args.x, args.y) == (150, 115)  # type: ignore[attr-defined]


async def test_a_grounder_that_fails_keeps_the_first_point_and_says_so() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE])
    run = await h.create(allowed_tools=("click",))
    grounder = ScriptedGrounder([RuntimeError("the crop could not be made")])
    planner = ScriptedPlanner(
        [tool("click", x=40, y=50, target="the OK button"), done()], grounder=grounder
    )

    await h.collect(run, planner)

    ground = next(s for s in steps_of(h, run.id) if s.kind is StepKind.GROUND)
    assert ground.status is StepStatus.OK
    assert ground.summary == (
        "kept the planner's point 40,50: grounding failed: RuntimeError: the crop could not be made"
    )
    [(_, args)] = h.executor.calls
    assert (args.x, args.y) == (40, 50)  # type: ignore[attr-defined]
    assert h.stored(run.id).status is RunStatus.COMPLETED


async def test_a_grounding_point_off_the_screenshot_keeps_the_first_point_and_says_so() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE])
    run = await h.create(allowed_tools=("click",))
    grounder = ScriptedGrounder([refined((1280, 20), (40, 50))])
    planner = ScriptedPlanner(
        [tool("click", x=40, y=50, target="the OK button"), done()], grounder=grounder
    )

    await h.collect(run, planner)

    ground = next(s for s in steps_of(h, run.id) if s.kind is StepKind.GROUND)
    assert ground.summary == (
        "kept the planner's point 40,50: the grounding's point 1280,20 is outside the "
        "1280x720 screenshot"
    )
    assert ground.target == (40, 50)
    [(_, args)] = h.executor.calls
    assert (args.x, args.y) == (40, 50)  # type: ignore[attr-defined]


async def test_element_clicks_and_calls_without_a_target_are_not_grounded() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN])
    h.observer.observation = SHOP
    run = await h.create(allowed_tools=("click", "wait"))
    grounder = ScriptedGrounder([])
    planner = ScriptedPlanner(
        [
            tool("click", element=1, target="Add to cart"),
            tool("click", x=5, y=6),
            tool("wait", seconds=0),
            done(),
        ],
        grounder=grounder,
    )

    await h.collect(run, planner)

    assert grounder.requests == []
    assert StepKind.GROUND not in {s.kind for s in steps_of(h, run.id)}


async def test_the_grounding_requests_tokens_and_latency_count_in_the_run() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE])
    run = await h.create(allowed_tools=("click",))
    grounding = refined(
        (10, 20), (12, 22), usage=TokenUsage(900, 12), tokens_estimated=True, latency_ms=340.0
    )
    planner = ScriptedPlanner(
        [tool("click", x=12, y=22, target="the icon"), done()],
        grounder=ScriptedGrounder([grounding]),
    )

    await h.collect(run, planner)

    ground = next(s for s in steps_of(h, run.id) if s.kind is StepKind.GROUND)
    assert (ground.prompt_tokens, ground.completion_tokens, ground.latency_ms) == (900, 12, 340.0)
    stored = h.stored(run.id)
    # the scripted decisions report no usage: estimated, plus the grounding's 900 + 12
    decides = [s for s in steps_of(h, run.id) if s.kind is StepKind.DECIDE]
    assert len(decides) == 2
    assert stored.tokens_estimated is True
    assert stored.prompt_tokens > 900
    assert stored.completion_tokens >= 12


async def test_stop_during_the_grounding_request_ends_the_run_with_no_click() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE])
    run = await h.create(allowed_tools=("click",))
    blocker = Blocker()

    async def hang(request: GroundRequest) -> Grounding:
        await blocker.block()
        raise AssertionError("the grounding request was not cancelled")

    planner = ScriptedPlanner(
        [tool("click", x=12, y=22, target="the icon"), done()],
        grounder=ScriptedGrounder([hang]),
    )
    consumer = Consumer(h.runner.start(run, planner))
    await consumer.wait_for(lambda e: isinstance(e, StepStarted) and e.step.kind is StepKind.GROUND)
    await asyncio.wait_for(blocker.entered.wait(), 5)

    assert h.runner.stop(run.id)
    events = await consumer.finished()

    assert blocker.cancelled
    assert h.executor.calls == []
    assert h.gate.requests == []
    final = h.stored(run.id)
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    ground = next(s for s in steps_of(h, run.id) if s.kind is StepKind.GROUND)
    assert ground.status is StepStatus.SKIPPED
    assert StepKind.ACTION not in {s.kind for s in steps_of(h, run.id)}
    assert events[-1].type == "run_finished"


async def test_an_observer_that_captures_regions_lends_them_to_the_grounding() -> None:
    class RegionObserver(FakeObserver):
        def __init__(self) -> None:
            super().__init__(SHOP)
            self.asked: list[tuple[int, int, int, int]] = []

        async def region(self, observation: Observation, box: tuple[int, int, int, int]) -> bytes:
            assert observation.elements == SHOP.elements  # the turn's own observation
            self.asked.append(box)
            return b"region"

    seen: list[bytes] = []

    async def look(request: GroundRequest) -> Grounding:
        assert request.region is not None
        seen.append(await request.region((1, 2, 3, 4)))
        return refined((650, 515), (150, 115))

    h = make_harness(answers=[ApprovalDecision.ONCE])
    observer = RegionObserver()
    h.runner.services.observer = observer
    run = await h.create(allowed_tools=("click",))
    planner = ScriptedPlanner(
        [tool("click", x=150, y=115, target="Pay now"), done()],
        grounder=ScriptedGrounder([look]),
    )

    await h.collect(run, planner)

    assert (observer.asked, seen) == ([(1, 2, 3, 4)], [b"region"])
