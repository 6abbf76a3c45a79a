"""The token estimate and the cost, number for number (mutants of core/budget.py that lived)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from desktop_agent.core.budget import Budget, estimate_usage
from desktop_agent.core.models import Decision, StepKind, StepStatus, StepView
from desktop_agent.core.ports import DecideRequest
from tests.fakes import make_observation

PRICES = {"gpt-4o-mini*": (0.15, 0.60), "gpt-4o*": (2.50, 10.00)}


def step(seq: int, error: str | None) -> StepView:
    return StepView(
        "r",
        seq,
        seq,
        StepKind.ACTION,
        StepStatus.OK,
        datetime(2026, 1, 1, tzinfo=UTC),
        summary="s" * 10,
        error=error,
    )


def test_the_estimate_counts_the_last_24_steps_the_image_patches_and_the_answer() -> None:
    # 30 steps: the 6 oldest (long errors) are folded out of the prompt, the last 24 count
    steps = [step(i, "E" * 1000) for i in range(6)]
    steps += [step(i, "e" * 6 if i % 2 else None) for i in range(6, 30)]
    # 1300 x 700 is 47 x 25 patches of 28 px, both rounded up
    observation = replace(make_observation(), width=1300, height=700)
    goal = "open the editor!!"  # 17 characters: the text is not a multiple of 4
    request = DecideRequest(goal, "r", 31, tuple(steps), observation, ())
    text = 17 + len(observation.inventory_text()) + 24 * (10 + 40) + 12 * 6
    usage = estimate_usage(request, Decision(action="done", raw="x" * 7))
    # the text's tokens are whole (the remainder of 4 characters dropped)
    assert usage.prompt_tokens == 1200 + text // 4 + 47 * 25
    assert usage.completion_tokens == 1  # 7 characters: one whole token


def test_an_empty_answer_is_one_completion_token() -> None:
    request = DecideRequest("g", "r", 1, (), make_observation(), ())
    assert estimate_usage(request, Decision(action="done", raw="")).completion_tokens == 1


def test_the_cost_of_two_models_is_their_sum() -> None:
    budget = Budget(prices=PRICES)
    cost = budget.cost_of({"gpt-4o": (1_000_000, 0), "gpt-4o-mini": (1_000_000, 1_000_000)})
    assert cost == 2.50 + 0.15 + 0.60
