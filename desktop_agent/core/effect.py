"""Did the last action change the screen? Two observations compared, and the repeats counted.

The screenshot part compares `Observation.signature`, a small grey image the observer makes
of the screenshot the model sees: one byte per cell, row-major, the mean grey level of that
cell (desktop/capture.py: 128 cells across, 10x10 screenshot pixels each at 1280x720).

The score counts cells whose grey level moved by more than CELL_LEVELS, not the sum of all
differences: a scroll bar fading out moves hundreds of cells by a few levels and a blinking
caret one or two cells by more, and neither is an effect, while the strokes of a typed word
move several cells by a lot. Measured on Xvfb with l3afpad (benchmarks/effect_check.py,
docs/desktop.md): caret blink and scroll-bar fade 0-1 cells, a clock-like digit change 0-1,
one typed character 1-3, a typed word 3-8, an opened menu 73-93.

The element list part: any element that appeared, went, moved, or changed name or state.
`StuckDetector` counts the same call (tool + arguments) that changed nothing. Choices:
docs/architecture.md ("Effect check").
"""

from __future__ import annotations

import asyncio
import json
import operator
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from desktop_agent.core.builtin_tools import spec_of
from desktop_agent.core.control import RunControl
from desktop_agent.core.models import Effect, Element, Observation
from desktop_agent.core.tools import ToolSpec

#: how far (of 255 grey levels) a cell must move to count as changed
CELL_LEVELS = 8
#: the share of changed cells from which a change is an effect: 3 of 128x72 cells
CHANGE_THRESHOLD = 0.0003
#: the n-th no-change repeat of one call that warns the model, and the one that ends the run
WARN_AT = 2
STUCK_AT = 3
#: an action whose screen shows no change yet is looked at again until it does, for this
#: long after the first look: a slow app (a loaded machine) draws what it did late, and a
#: first look taken too soon would tell the model (or a routine) the action did nothing
EFFECT_WAIT_S = 2.0
#: the pause between those looks (each is a whole observation: capture and element list)
EFFECT_LOOK_EVERY_S = 0.1


def screen_change(before: bytes, after: bytes) -> float:
    """The share (0..1) of signature cells that changed by more than CELL_LEVELS.

    1.0 when either signature is missing or they differ in size (another screen geometry):
    not knowing is never taken for "nothing happened".
    """
    if not before or not after or len(before) != len(after):
        return 1.0
    if before == after:
        return 0.0
    low, high = -CELL_LEVELS, CELL_LEVELS
    changed = sum(1 for delta in map(operator.sub, before, after) if delta > high or delta < low)
    return changed / len(before)


def visibly_changed(before: bytes, after: bytes, threshold: float = CHANGE_THRESHOLD) -> bool:
    """Whether the screen changed more than a caret blink or a clock tick does."""
    return screen_change(before, after) >= threshold


def _element_key(element: Element) -> tuple[Any, ...]:
    # ids are renumbered each observation: compare what the element is and where
    return (element.role, element.name, element.box, element.enabled, element.focused)


def elements_changed(before: Observation, after: Observation) -> bool:
    return sorted(map(_element_key, before.elements)) != sorted(map(_element_key, after.elements))


def compare(before: Observation, after: Observation) -> Effect:
    """CHANGED, NO_CHANGE, or UNKNOWN when signatures are missing (or differ in size) and no
    element changed."""
    if elements_changed(before, after):
        return Effect.CHANGED
    a, b = before.signature, after.signature
    if not a or not b or len(a) != len(b):
        return Effect.UNKNOWN
    return Effect.CHANGED if visibly_changed(a, b) else Effect.NO_CHANGE


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

    def record(self, tool: ToolSpec | str, args: Mapping[str, Any], effect: Effect) -> int:
        """The number of no-change results of this call so far (0 unless NO_CHANGE; 0 for a
        passive tool, which is not expected to change the screen: a `wait` that sees no
        change is not a stuck loop)."""
        if effect is Effect.CHANGED:
            self.counts.clear()
            return 0
        spec = spec_of(tool)
        if effect is not Effect.NO_CHANGE or spec.passive:
            return 0
        key = call_key(spec.name, args)
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.counts[key]


def effect_note(tool: ToolSpec, effect: Effect, repeats: int) -> str:
    """What the model is told of an action's effect: "" unless it changed nothing."""
    if effect is not Effect.NO_CHANGE:
        return ""
    if tool.command_field and repeats < WARN_AT:
        # a window shows some time after its program starts: starting it again makes two
        return "no visible change yet: a program takes a moment to start; wait for its window"
    if repeats >= WARN_AT:
        return (
            f"no visible change, {repeats} times for this same action: "
            "it does not work, try something else"
        )
    return "no visible change"


async def screen_after(
    tool: ToolSpec,
    before: Observation,
    look: Callable[[], Awaitable[Observation | None]],
    control: RunControl,
    wait_s: float,
) -> tuple[Observation, Effect] | None:
    """The screen an action left and its effect; looked at again (`look`, the loop's) while
    it shows no change, up to `wait_s` (a slow app draws late; a passive tool such as `wait`
    expects no change). None when the screen cannot be had. A stop ends the waits between
    the looks (`control`)."""
    after = await look()
    if after is None:
        return None
    effect = compare(before, after)
    if tool.passive:
        return after, effect
    clock = asyncio.get_running_loop().time
    deadline = clock() + wait_s
    while effect is Effect.NO_CHANGE and clock() < deadline:
        await control.guard(asyncio.sleep(EFFECT_LOOK_EVERY_S))
        again = await look()
        if again is None:
            break
        after, effect = again, compare(before, again)
    return after, effect
