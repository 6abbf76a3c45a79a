"""Budgets: a run stops at its wall-time or token limit; its totals and cost are on the view."""

from __future__ import annotations

from dataclasses import replace

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.budget import Budget, estimate_usage, usage_of
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.control import RunControl
from desktop_agent.core.events import RunFinished
from desktop_agent.core.loop import LoopDeps, run_task_loop
from desktop_agent.core.models import (
    Decision,
    Element,
    RunStatus,
    StopReason,
    TaskSpec,
    TokenUsage,
)
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.ports import DecideRequest
from tests.fakes import (
    FakeExecutor,
    FakeObserver,
    ManualClock,
    MemoryRepository,
    ScriptedGate,
    ScriptedPlanner,
    done,
    make_observation,
    tool,
)

PRICES = {"gpt-4o-mini*": (0.15, 0.60), "gpt-4o*": (2.50, 10.00)}


def test_prices_match_the_model_name_first_pattern_first() -> None:
    budget = Budget(prices=PRICES)
    assert budget.price_of("GPT-4o-mini-2024-07-18") == (0.15, 0.60)
    assert budget.price_of("gpt-4o") == (2.50, 10.00)
    assert budget.price_of("qwen2.5vl") is None
    assert budget.cost("gpt-4o", 1_000_000, 100_000) == 3.5
    assert budget.cost("qwen2.5vl", 1_000_000, 100_000) is None


def test_a_limit_is_passed_at_its_value_and_says_which() -> None:
    budget = Budget(max_seconds=60, max_tokens=1000)
    assert budget.exceeded(59.9, 999) == ""
    assert budget.exceeded(60, 0) == "the run took 60 s, its limit is 60 s"
    assert budget.exceeded(1, 1000) == "the run used 1000 model tokens, its limit is 1000"
    assert Budget().exceeded(1e9, 10**12) == ""


def request(elements: int = 0) -> DecideRequest:
    observation = make_observation(
        [Element(i, "button", f"Button {i}", (0, 0, 9, 9)) for i in range(elements)]
    )
    return DecideRequest("open the editor", "r", 1, (), observation, ())


def test_a_turn_without_reported_usage_is_estimated_from_its_text_and_image() -> None:
    answer = Decision(action="done", raw="x" * 400)
    small, large = estimate_usage(request(0), answer), estimate_usage(request(100), answer)
    # a 1280x720 screenshot is 46 x 26 patches of 28 px
    assert small.prompt_tokens is not None and small.prompt_tokens >= 46 * 26
    assert large.prompt_tokens is not None and large.prompt_tokens > small.prompt_tokens
    assert small.completion_tokens == 100
    reported = replace(answer, usage=TokenUsage(10, 2))
    assert usage_of(request(), reported) == (TokenUsage(10, 2), False)
    assert usage_of(request(), replace(answer, usage=TokenUsage(10, None)))[1] is True


def reporting(decision: Decision, prompt: int, completion: int) -> Decision:
    return replace(decision, usage=TokenUsage(prompt, completion))


async def run_with(
    planner: ScriptedPlanner,
    budget: Budget,
    *,
    model: str = "gpt-4o-mini",
    clock: ManualClock | None = None,
) -> RunFinished:
    repo = MemoryRepository()
    run = await repo.create_run(
        TaskSpec("goal", max_steps=50, allowed_tools=("wait",), model=model)
    )
    deps = LoopDeps(
        repo=repo,
        observer=FakeObserver(),
        executor=FakeExecutor(),
        gate=ScriptedGate(),
        registry=builtin_registry(),
        breakers=BreakerBoard(),
        permissions=Permissions(),
        planner=planner,
        budget=budget,
        perf=clock or ManualClock(),
    )
    events = [event async for event in run_task_loop(run, deps, RunControl())]
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert repo.runs[run.id] == final.run  # the totals are stored too
    return final


async def test_the_tokens_and_cost_so_far_are_on_the_run_view() -> None:
    planner = ScriptedPlanner(
        [reporting(tool("wait", seconds=0), 1000, 100), reporting(done(), 2000, 50)]
    )
    final = await run_with(planner, Budget(prices=PRICES))
    run = final.run
    assert (run.prompt_tokens, run.completion_tokens, run.tokens_estimated) == (3000, 150, False)
    assert run.cost == (3000 * 0.15 + 150 * 0.60) / 1_000_000


async def test_passing_the_token_limit_stops_the_run_budget() -> None:
    planner = ScriptedPlanner([reporting(tool("wait", seconds=0), 600, 100)] * 5, then=done())
    final = await run_with(planner, Budget(max_tokens=1500, prices=PRICES))
    assert (final.run.status, final.run.stop_reason) == (RunStatus.STOPPED, StopReason.BUDGET)
    assert final.run.step_count == 3  # 700, 1400, 2100 tokens: over after the third turn
    assert final.run.message == "the run used 2100 model tokens, its limit is 1500"


async def test_passing_the_time_limit_stops_the_run_budget() -> None:
    clock = ManualClock()

    async def slow_answer(_request: DecideRequest) -> Decision:
        clock.advance(40)
        return tool("wait", seconds=0)

    planner = ScriptedPlanner([slow_answer] * 5, then=done())
    final = await run_with(planner, Budget(max_seconds=100), clock=clock)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.STOPPED, StopReason.BUDGET)
    assert final.run.step_count == 3
    assert final.run.message == "the run took 120 s, its limit is 100 s"


async def test_without_reported_usage_totals_are_estimated_and_unpriced_models_cost_none() -> None:
    final = await run_with(ScriptedPlanner([done()]), Budget(prices=PRICES), model="qwen2.5vl")
    assert final.run.tokens_estimated is True
    assert final.run.prompt_tokens > 0
    assert final.run.cost is None


def test_the_estimate_counts_the_screen_text_the_prompt_carries_beside_the_elements() -> None:
    # issue: the window-relative controls (Wayland) and the texts read beside the elements
    # are in the prompt (planner/screen_text.py) but were not counted, so the estimate ran low
    answer = Decision(action="done", raw="x")
    bare = estimate_usage(request(0), answer).prompt_tokens
    controls = tuple(Element(0, "button", f"Control {i}", (i, 0, 9, 9)) for i in range(40))
    read = tuple(Element(0, "text", "a line of the document " * 4, (0, i, 9, 9)) for i in range(20))
    relative = replace(
        request(0), observation=replace(request(0).observation, window_relative=controls)
    )
    texts = replace(request(0), observation=replace(request(0).observation, texts=read))
    assert bare is not None
    relative_tokens = estimate_usage(relative, answer).prompt_tokens
    texts_tokens = estimate_usage(texts, answer).prompt_tokens
    assert relative_tokens is not None and relative_tokens >= bare + 40 * 40 // 4
    assert texts_tokens is not None and texts_tokens >= bare + 20 * 92 // 4
    # the prompt cuts the texts at its bound; so does the estimate
    flood = replace(request(0).observation, texts=read * 100)
    flooded = estimate_usage(replace(request(0), observation=flood), answer).prompt_tokens
    assert flooded is not None and flooded <= bare + 4_000 // 4 + 1
