"""Did an action visibly change the screen? A comparison of two observations' signatures.

A signature (Observation.signature, made by the observer) is a small grey image of the
screenshot the model sees: one byte per cell, row-major, the mean grey level of that cell
(desktop/capture.py: 128 cells across, 10x10 screenshot pixels each at 1280x720).

The score counts cells whose grey level moved by more than CELL_LEVELS, not the sum of all
differences: a scroll bar fading out moves hundreds of cells by a few levels and a blinking
caret one or two cells by more, and neither is an effect, while the strokes of a typed word
move several cells by a lot. Measured on Xvfb with l3afpad (benchmarks/effect_check.py,
docs/desktop.md): caret blink and scroll-bar fade 0-1 cells, a clock-like digit change 0-1,
one typed character 1-3, a typed word 3-8, an opened menu 73-93.
"""

from __future__ import annotations

import operator

#: how far (of 255 grey levels) a cell must move to count as changed
CELL_LEVELS = 8
#: the share of changed cells from which a change is an effect: 3 of 128x72 cells
CHANGE_THRESHOLD = 0.0003


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
