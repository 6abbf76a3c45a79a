"""screen_change: the share of signature cells that moved by more than CELL_LEVELS."""

from __future__ import annotations

import pytest

from desktop_agent.core.effect import (
    CELL_LEVELS,
    CHANGE_THRESHOLD,
    screen_change,
    visibly_changed,
)

CELLS = 128 * 72
GREY = bytes([128]) * CELLS


def with_cells(base: bytes, cells: range | list[int], delta: int) -> bytes:
    changed = bytearray(base)
    for cell in cells:
        changed[cell] = base[cell] + delta
    return bytes(changed)


def test_the_same_screen_has_not_changed() -> None:
    assert screen_change(GREY, bytes(GREY)) == 0.0
    assert not visibly_changed(GREY, bytes(GREY))


@pytest.mark.parametrize("delta", [CELL_LEVELS, -CELL_LEVELS, 1])
def test_cells_moving_by_at_most_cell_levels_do_not_count(delta: int) -> None:
    faded = with_cells(GREY, range(CELLS), delta)  # a whole-screen fade of a few levels

    assert screen_change(GREY, faded) == 0.0


@pytest.mark.parametrize("delta", [CELL_LEVELS + 1, -(CELL_LEVELS + 1), 127, -128])
def test_the_score_is_the_share_of_cells_that_moved_more(delta: int) -> None:
    after = with_cells(GREY, [0, 500, CELLS - 1], delta)

    assert screen_change(GREY, after) == pytest.approx(3 / CELLS)
    assert screen_change(after, GREY) == pytest.approx(3 / CELLS)  # symmetric


def test_a_blank_screen_turning_white_is_a_full_change() -> None:
    assert screen_change(bytes(CELLS), bytes([255]) * CELLS) == 1.0


def test_two_cells_are_no_effect_and_three_are() -> None:
    """The threshold sits between a caret blink (<= 2 cells) and a typed word (>= 5)."""
    assert not visibly_changed(GREY, with_cells(GREY, [10, 10 + 128], 40))
    assert visibly_changed(GREY, with_cells(GREY, [10, 11, 12], 40))
    assert 2 / CELLS < CHANGE_THRESHOLD <= 3 / CELLS


@pytest.mark.parametrize(
    ("before", "after"),
    [(b"", GREY), (GREY, b""), (b"", b""), (GREY, GREY[:-128])],
    ids=["no signature before", "none after", "neither", "another screen size"],
)
def test_not_knowing_counts_as_a_change_never_as_nothing_happened(
    before: bytes, after: bytes
) -> None:
    assert screen_change(before, after) == 1.0
    assert visibly_changed(before, after)
