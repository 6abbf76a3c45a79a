"""Did the last action change the screen? Two observations compared, and the repeats counted.

The screenshot part compares `Observation.signature` (a small grey image the observer makes,
same size each time): a mean absolute difference of its bytes over a threshold, a few
pixels that moved, or one that moved a lot, is a visible change; one pixel that moved a
little is not (a blinking caret). The element list part: any element that appeared, went,
moved, or changed name or state. `StuckDetector` counts the same call (tool + arguments)
that changed nothing. Figures and choices: docs/architecture.md ("Effect check").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from desktop_agent.core.models import Effect, Element, Observation

#: mean |a - b| over the signature's grey bytes (0–255) above which the screen changed
MEAN_THRESHOLD = 0.5
#: CHANGED_PIXELS pixels of the signature that moved PIXEL_STEP or more are a change (typed
#: text); one alone is not (a caret blinking moves one pixel of a 160×90 signature by ≤ 19)
PIXEL_STEP = 16
CHANGED_PIXELS = 2
#: a single pixel of the signature that moved this much is a change by itself
PIXEL_THRESHOLD = 48
#: the n-th no-change repeat of one call that warns the model, and the one that ends the run
WARN_AT = 2
STUCK_AT = 3
#: tools that do not act on the screen: a `wait` that sees no change is not a stuck loop
PASSIVE_TOOLS = frozenset({"wait", "screen_snapshot"})


@dataclass(frozen=True, slots=True)
class SignatureDifference:
    mean: float
    largest: int
    #: pixels that moved PIXEL_STEP or more
    moved: int

    @property
    def visible(self) -> bool:
        return (
            self.mean > MEAN_THRESHOLD
            or self.largest >= PIXEL_THRESHOLD
            or self.moved >= CHANGED_PIXELS
        )


def signature_difference(before: bytes, after: bytes) -> SignatureDifference | None:
    """How two signatures differ; None when either is missing or their sizes differ
    (nothing can be said)."""
    if not before or not after or len(before) != len(after):
        return None
    total = largest = moved = 0
    for a, b in zip(before, after, strict=True):
        delta = a - b if a > b else b - a
        total += delta
        if delta >= PIXEL_STEP:
            moved += 1
        if delta > largest:
            largest = delta
    return SignatureDifference(total / len(before), largest, moved)


def _element_key(element: Element) -> tuple[Any, ...]:
    # ids are renumbered each observation: compare what the element is and where
    return (element.role, element.name, element.box, element.enabled, element.focused)


def elements_changed(before: Observation, after: Observation) -> bool:
    return sorted(map(_element_key, before.elements)) != sorted(map(_element_key, after.elements))


def compare(before: Observation, after: Observation) -> Effect:
    """CHANGED, NO_CHANGE, or UNKNOWN when there are no signatures and no element changed."""
    if elements_changed(before, after):
        return Effect.CHANGED
    difference = signature_difference(before.signature, after.signature)
    if difference is None:
        return Effect.UNKNOWN
    return Effect.CHANGED if difference.visible else Effect.NO_CHANGE


def call_key(tool: str, args: Mapping[str, Any]) -> str:
    """One string per distinct call: the tool and its arguments in a stable order."""
    return f"{tool} {json.dumps(dict(args), sort_keys=True, ensure_ascii=False, default=str)}"


@dataclass
class StuckDetector:
    """Counts, per call, the results with no visible change since the screen last changed.

    A visible change by any action clears the counts (the model made progress); an unknown
    effect counts neither way.
    """

    counts: dict[str, int] = field(default_factory=dict)

    def record(self, tool: str, args: Mapping[str, Any], effect: Effect) -> int:
        """The number of no-change results of this call so far (0 unless NO_CHANGE)."""
        if effect is Effect.CHANGED:
            self.counts.clear()
            return 0
        if effect is not Effect.NO_CHANGE or tool in PASSIVE_TOOLS:
            return 0
        key = call_key(tool, args)
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.counts[key]
