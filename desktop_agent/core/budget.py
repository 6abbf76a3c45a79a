"""Run budgets: wall time and model tokens per run, and a cost estimate from a price table.

Tokens are the usage the server reports; a turn without it is estimated (text at 4
characters a token — the goal, the history and the screen text the prompt carries: the
element list, the other monitors' elements, the window-relative controls, the texts read
beside them, and the notes naming the agent's own windows and the monitors — the image at
one token per 28×28 patch, Qwen2.5-VL's rule, plus the system prompt) and the run's totals
say they include estimates. Prices are per million tokens, matched on the model name by shell
pattern, the first match winning; a model without a price has no cost (None), never a made-up
one. A run whose tokens went to two models (the planner and a grounding model) is priced per
model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from desktop_agent.core.models import Decision, Observation, TokenUsage
from desktop_agent.core.ports import DecideRequest

#: the fixed part of each request (system prompt with the tool list), in tokens
SYSTEM_PROMPT_TOKENS = 1200
CHARS_PER_TOKEN = 4
PATCH_PX = 28
#: the prompt shows the last turns in full (3 rows a turn) and folds the older ones
HISTORY_STEPS = 24
#: the texts read beside the elements are cut here in the prompt (planner/screen_text.py's
#: MAX_TEXT_CHARS; core may not import the planner)
SCREEN_TEXT_CHARS = 4_000
#: the own-windows note (planner/prompt.py `own_windows_note`): its words and line end,
#: beside each box's numbers and the "; " after it (the last box has none: 216 + 1 - 2)
OWN_WINDOWS_NOTE_CHARS = 215
#: the monitors note on several monitors (planner/prompt.py `monitors_text`): its words
#: (the count one digit) and line end beside each monitor's `describe()` and the "; " after
#: it; the image of all monitors as one says about 20 characters fewer
MONITORS_NOTE_CHARS = 99
#: the note's last sentence when the image shows one monitor: to a model with focus_window
#: (its way to the others), and to one without (the native computer tools)
MONITORS_FOCUS_CHARS = 143
MONITORS_APART_CHARS = 48

#: USD per million (input, output) tokens; an editable starting point (settings: `prices`).
#: Local servers cost nothing. Check your provider's current prices.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini*": (0.15, 0.60),
    "gpt-4o*": (2.50, 10.00),
    "gpt-4.1-nano*": (0.10, 0.40),
    "gpt-4.1-mini*": (0.40, 1.60),
    "gpt-4.1*": (2.00, 8.00),
    "gpt-5-nano*": (0.05, 0.40),
    "gpt-5-mini*": (0.25, 2.00),
    "gpt-5*": (1.25, 10.00),
    "o4-mini*": (1.10, 4.40),
    "o3*": (2.00, 8.00),
    # OpenAI's computer-use model (the Responses API's computer tool)
    "computer-use-preview*": (3.00, 12.00),
    # Anthropic (computer use on the Messages API); cached input is priced as input here
    "claude-opus-4-5*": (5.00, 25.00),
    "claude-opus-4-6*": (5.00, 25.00),
    "claude-opus-4*": (15.00, 75.00),
    "claude-sonnet-4*": (3.00, 15.00),
    "claude-3-7-sonnet*": (3.00, 15.00),
    "claude-haiku-4*": (1.00, 5.00),
}


@dataclass(frozen=True, slots=True)
class Budget:
    """Per-run limits (None: no limit) and the price table."""

    max_seconds: float | None = None
    max_tokens: int | None = None
    prices: Mapping[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_PRICES))

    def price_of(self, model: str) -> tuple[float, float] | None:
        name = model.casefold()
        for pattern, price in self.prices.items():
            if fnmatchcase(name, pattern.casefold()):
                return price
        return None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        price = self.price_of(model)
        if price is None:
            return None
        return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000

    def cost_of(self, tokens: Mapping[str, tuple[int, int]]) -> float | None:
        """The cost of (prompt, completion) tokens by model; None when one has no price."""
        total = 0.0
        for model, (prompt_tokens, completion_tokens) in tokens.items():
            cost = self.cost(model, prompt_tokens, completion_tokens)
            if cost is None:
                return None
            total += cost
        return total

    def exceeded(self, elapsed_s: float, tokens: int) -> str:
        """Which limit is passed, in words; "" when none."""
        if self.max_seconds is not None and elapsed_s >= self.max_seconds:
            return f"the run took {elapsed_s:.0f} s, its limit is {self.max_seconds:g} s"
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return f"the run used {tokens} model tokens, its limit is {self.max_tokens}"
        return ""


def estimate_usage(request: DecideRequest, decision: Decision) -> TokenUsage:
    """A turn's tokens when the server reports none: the request's text and image, the answer."""
    observation = request.observation
    text = len(request.goal) + len(observation.inventory_text())
    text += sum(len(element.line_elsewhere()) + 1 for element in observation.elsewhere)
    if observation.window_relative:
        text += len(observation.relative_to) + 10
        text += sum(len(element.line_relative()) + 1 for element in observation.window_relative)
    texts = sum(len(element.name) + len(element.role) + 24 for element in observation.texts)
    text += min(texts, SCREEN_TEXT_CHARS)
    text += _notes_chars(request)
    for step in request.steps[-HISTORY_STEPS:]:
        text += len(step.summary) + len(step.error or "") + 40
    image = math.ceil(observation.width / PATCH_PX) * math.ceil(observation.height / PATCH_PX)
    return TokenUsage(
        prompt_tokens=SYSTEM_PROMPT_TOKENS + text // CHARS_PER_TOKEN + image,
        completion_tokens=max(1, len(decision.raw) // CHARS_PER_TOKEN),
    )


def _notes_chars(request: DecideRequest) -> int:
    """The characters of the notes the prompt says beside the screen. A chat format says both
    every turn; the native computer tools say the monitors only when they change, but their
    servers report usage."""
    return _own_windows_chars(request.observation) + _monitors_chars(request)


def _own_windows_chars(observation: Observation) -> int:
    """The own-windows note: its boxes in screenshot pixels (a model's own coordinates have
    about as many digits)."""
    if not observation.own_windows:
        return 0
    boxes = (window.box for window in observation.own_windows)
    return OWN_WINDOWS_NOTE_CHARS + sum(
        len(f"{left},{top} {width}x{height}") + 2 for left, top, width, height in boxes
    )


def _monitors_chars(request: DecideRequest) -> int:
    """The monitors note, said on several monitors only."""
    layout = request.observation.layout
    if layout is None or not layout.several:
        return 0
    text = MONITORS_NOTE_CHARS + sum(len(monitor.describe()) + 2 for monitor in layout.monitors)
    if not layout.shown.number:
        return text  # all monitors as one image: no sentence about the others
    focus = any(spec.name == "focus_window" for spec in request.tools)
    return text + (MONITORS_FOCUS_CHARS if focus else MONITORS_APART_CHARS)


def usage_of(request: DecideRequest, decision: Decision) -> tuple[TokenUsage, bool]:
    """(usage, estimated): the server's numbers when it gave both, else an estimate."""
    usage = decision.usage
    if usage and usage.prompt_tokens is not None and usage.completion_tokens is not None:
        return usage, False
    return estimate_usage(request, decision), True
