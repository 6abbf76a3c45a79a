"""The token estimate and the cost, number for number (mutants of core/budget.py that lived)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from desktop_agent.core.budget import Budget, estimate_usage
from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from desktop_agent.core.models import (
    Decision,
    Element,
    MonitorArea,
    Observation,
    ScreenLayout,
    StepKind,
    StepStatus,
    StepView,
)
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


GOAL = "write a letter to the editor of the paper"  # 41 characters before the parts


def _prompt_tokens(observation: Observation, *tools: str) -> int:
    specs = tuple(spec for spec in BUILTIN_TOOLS if spec.name in tools)
    request = DecideRequest(GOAL, "r", 1, (), observation, specs)
    tokens = estimate_usage(request, Decision(action="done", raw="x")).prompt_tokens
    assert tokens is not None
    return tokens


def test_the_estimate_counts_each_line_the_prompt_adds_beside_the_element_list() -> None:
    # e9d941d: what the prompt carries besides the list counts, each line with its line end
    # (core/budget estimate_usage 5-22 lived: no test had these parts)
    plain = make_observation()
    base = len(GOAL) + len(plain.inventory_text())
    # 8 controls on monitor 2: '[10] button "Save" on monitor 2' is 31 characters
    elsewhere = tuple(Element(10, "button", "Save", (0, 0, 5, 5), monitor=2) for _ in range(8))
    assert elsewhere[0].line_elsewhere() == '[10] button "Save" on monitor 2'
    assert _prompt_tokens(replace(plain, elsewhere=elsewhere)) == (
        _prompt_tokens(plain) - base // 4 + (base + 8 * (31 + 1)) // 4
    )
    # 8 controls placed in their window only, under their window's title and its 10 words
    relative = tuple(Element(0, "button", "Save", (1, 2, 3, 4)) for _ in range(8))
    line = relative[0].line_relative()  # 'button "Save" @ 1,2 3x4 in the window'
    counted = base + 10 + 8 * (len(line) + 1)
    # a title that leaves the text one character short of a whole token: one more is seen
    title = "Save as…" + "!" * ((3 - counted - 8) % 4)
    assert (counted + len(title)) % 4 == 3
    moved = replace(plain, window_relative=relative, relative_to=title)
    assert _prompt_tokens(moved) == (
        _prompt_tokens(plain) - base // 4 + (counted + len(title)) // 4
    )
    # window-relative controls are not counted without their title line, nor the title alone
    assert _prompt_tokens(replace(plain, relative_to="Save as…!")) == _prompt_tokens(plain)
    # 8 screen texts: name, role and 24 characters of their line each
    texts = tuple(Element(0, "label", "Pay now!", (0, 0, 1, 1)) for _ in range(8))
    assert _prompt_tokens(replace(plain, texts=texts)) == (
        _prompt_tokens(plain) - base // 4 + (base + 8 * (8 + 5 + 24)) // 4
    )


def test_the_estimate_counts_the_own_windows_note_with_each_box() -> None:
    # the own-windows note (planner/prompt.py own_windows_note) was not counted: 215
    # characters beside each box's numbers and its "; " (tests/unit/planner/test_prompt.py
    # holds the figures to the prompt's own text)
    plain = make_observation()
    base = len(GOAL) + len(plain.inventory_text())
    panel = Element(0, "window", "Desktop Agent — acting", (960, 10, 320, 100))
    main = Element(1, "window", "Desktop Agent", (0, 400, 640, 400))
    counted = base + 215 + len("960,10 320x100; ") + len("0,400 640x400; ")
    assert counted % 4 == 3  # one character more is a whole token more
    assert _prompt_tokens(replace(plain, own_windows=(panel, main))) == counted // 4 + (
        _prompt_tokens(plain) - base // 4
    )


#: the primary, and a monitor right of it ('monitor 2, 1280x1024 at 1920,0': 30 characters)
#: or left of it ('… at -1280,0': 31)
PRIMARY = MonitorArea(1, 0, 0, 1920, 1080, primary=True)
RIGHT = MonitorArea(2, 1920, 0, 1280, 1024)
LEFT = MonitorArea(2, -1280, 0, 1280, 1024)


def test_the_estimate_counts_the_monitors_note_on_several_monitors_only() -> None:
    # the monitors note (planner/prompt.py monitors_text) was not counted: 99 characters
    # beside each monitor's description and its "; ", and the sentence about the others
    plain = make_observation()
    base = len(GOAL) + len(plain.inventory_text())
    rest = _prompt_tokens(plain) - base // 4
    described = len(PRIMARY.describe()) + 2 + len(RIGHT.describe()) + 2
    assert described == 41 + 2 + 30 + 2

    def seen(layout: ScreenLayout | None, *tools: str) -> int:
        return _prompt_tokens(replace(plain, layout=layout), *tools)

    # monitor 2 shown, to a model without focus_window (a native computer tool): 48 more
    shown = ScreenLayout(RIGHT, (PRIMARY, RIGHT))
    counted = base + 99 + described + 48
    assert counted % 4 == 3
    assert seen(shown, "click") == rest + counted // 4
    # to a model with focus_window, its way to the others: 143
    left = ScreenLayout(LEFT, (PRIMARY, LEFT))
    counted = base + 99 + described + 1 + 143
    assert counted % 4 == 3
    assert seen(left, "click", "focus_window") == rest + counted // 4
    # all monitors as one image: no sentence about the others
    whole = ScreenLayout(MonitorArea(0, 0, 0, 3200, 1080), (PRIMARY, RIGHT))
    counted = base + 99 + described
    assert counted % 4 == 3
    assert seen(whole, "click", "focus_window") == rest + counted // 4
    # one monitor, or none known: nothing is said
    assert seen(ScreenLayout(PRIMARY, (PRIMARY,)), "click") == _prompt_tokens(plain)
    assert seen(None, "click") == _prompt_tokens(plain)
