"""The effect check: two observations compared; a call that keeps changing nothing counted."""

from __future__ import annotations

from desktop_agent.core.effect import (
    MEAN_THRESHOLD,
    STUCK_AT,
    StuckDetector,
    compare,
    signature_difference,
)
from desktop_agent.core.models import Effect, Element
from tests.fakes import grey_signature, make_observation

OK = Element(1, "button", "OK", (10, 10, 40, 20))


def test_signature_difference_has_the_mean_the_largest_and_the_pixels_that_moved() -> None:
    difference = signature_difference(bytes([0, 10, 20, 30]), bytes([0, 10, 36, 70]))
    assert difference is not None
    assert (difference.mean, difference.largest, difference.moved) == (14.0, 40, 2)
    assert signature_difference(b"", b"\x00") is None
    assert signature_difference(b"\x00\x00", b"\x00") is None  # sizes differ


def with_pixels(level: int, changes: dict[int, int]) -> bytes:
    pixels = bytearray(grey_signature(level, 160 * 90))
    for index, value in changes.items():
        pixels[index] = value
    return bytes(pixels)


def test_a_screen_that_changed_over_the_threshold_is_changed() -> None:
    before = make_observation(signature=with_pixels(100, {}))

    def effect(after: bytes) -> Effect:
        return compare(before, make_observation(signature=after))

    assert effect(with_pixels(100, {})) is Effect.NO_CHANGE
    assert effect(grey_signature(102, 160 * 90)) is Effect.CHANGED  # the mean moved
    assert effect(with_pixels(100, {5: 250})) is Effect.CHANGED  # one pixel, a lot: a dialog
    assert effect(with_pixels(100, {5: 125, 900: 80})) is Effect.CHANGED  # a few: typed text
    # a caret blinking: one pixel moved a little; the mean stays under the threshold
    caret = with_pixels(100, {7: 119})
    difference = signature_difference(before.signature, caret)
    assert difference is not None and difference.mean < MEAN_THRESHOLD
    assert effect(caret) is Effect.NO_CHANGE


def test_the_element_list_tells_a_change_the_picture_may_miss() -> None:
    same = grey_signature(100)
    before = make_observation([OK], signature=same)
    focused = make_observation([Element(9, "button", "OK", OK.box, focused=True)], signature=same)
    renumbered = make_observation([Element(9, "button", "OK", OK.box)], signature=same)
    assert compare(before, focused) is Effect.CHANGED
    assert compare(before, renumbered) is Effect.NO_CHANGE  # ids are per observation


def test_without_signatures_only_a_changed_element_list_says_anything() -> None:
    assert compare(make_observation([OK]), make_observation([OK])) is Effect.UNKNOWN
    assert compare(make_observation([OK]), make_observation()) is Effect.CHANGED


def test_the_detector_counts_one_call_until_the_screen_changes() -> None:
    stuck = StuckDetector()
    click = {"x": 5, "y": 5, "button": "left", "clicks": 1}
    assert stuck.record("click", click, Effect.NO_CHANGE) == 1
    assert stuck.record("click", {**click, "x": 6}, Effect.NO_CHANGE) == 1  # another call
    assert stuck.record("click", dict(reversed(click.items())), Effect.NO_CHANGE) == 2
    assert stuck.record("hotkey", {"keys": ["tab"]}, Effect.CHANGED) == 0  # progress
    assert stuck.record("click", click, Effect.NO_CHANGE) == 1
    assert stuck.record("click", click, Effect.UNKNOWN) == 0
    assert stuck.record("click", click, Effect.NO_CHANGE) == 2
    assert stuck.record("click", click, Effect.NO_CHANGE) == STUCK_AT


def test_waiting_without_a_change_is_not_being_stuck() -> None:
    stuck = StuckDetector()
    for _ in range(5):
        assert stuck.record("wait", {"seconds": 1.0}, Effect.NO_CHANGE) == 0
