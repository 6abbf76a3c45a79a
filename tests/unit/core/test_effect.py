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


def test_signature_difference_is_the_mean_and_the_largest_byte_difference() -> None:
    assert signature_difference(bytes([0, 10, 20, 30]), bytes([0, 10, 20, 70])) == (10.0, 40)
    assert signature_difference(b"", b"\x00") is None
    assert signature_difference(b"\x00\x00", b"\x00") is None  # sizes differ


def test_a_screen_that_changed_over_the_threshold_is_changed() -> None:
    before = make_observation(signature=grey_signature(100))
    assert compare(before, make_observation(signature=grey_signature(100))) is Effect.NO_CHANGE
    assert compare(before, make_observation(signature=grey_signature(102))) is Effect.CHANGED
    # a small dialog: few pixels, but each moved a lot
    dialog = bytearray(grey_signature(100))
    dialog[5:9] = bytes([250]) * 4
    assert compare(before, make_observation(signature=bytes(dialog))) is Effect.CHANGED
    # a caret blinking: one pixel moved a little; the mean stays under the threshold
    caret = bytearray(grey_signature(100))
    caret[7] = 120
    changed = make_observation(signature=bytes(caret))
    mean, _ = signature_difference(before.signature, changed.signature) or (0, 0)
    assert mean < MEAN_THRESHOLD
    assert compare(before, changed) is Effect.NO_CHANGE


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
