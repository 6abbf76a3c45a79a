"""The effect check on observations: signatures and element lists compared; a call that keeps
changing nothing counted. (The signature score itself: test_effect.py.)"""

from __future__ import annotations

from desktop_agent.core.effect import STUCK_AT, StuckDetector, compare
from desktop_agent.core.models import Effect, Element
from tests.fakes import grey_signature, make_observation

OK = Element(1, "button", "OK", (10, 10, 40, 20))


SIZE = 128 * 72  # the observer's signature at 1280x720


def with_cells(level: int, changes: dict[int, int]) -> bytes:
    cells = bytearray(grey_signature(level, SIZE))
    for index, value in changes.items():
        cells[index] = value
    return bytes(cells)


def test_a_screen_that_changed_over_the_threshold_is_changed() -> None:
    before = make_observation(signature=with_cells(100, {}))

    def effect(after: bytes) -> Effect:
        return compare(before, make_observation(signature=after))

    assert effect(with_cells(100, {})) is Effect.NO_CHANGE
    assert effect(grey_signature(120, SIZE)) is Effect.CHANGED  # everything moved: a dialog
    assert effect(with_cells(100, {5: 125, 900: 80, 901: 60})) is Effect.CHANGED  # typed text
    assert effect(with_cells(100, {7: 160})) is Effect.NO_CHANGE  # one cell: a caret blinking
    assert effect(grey_signature(104, SIZE)) is Effect.NO_CHANGE  # a fade by a few levels
    # a signature of another size (the screen changed geometry) says nothing by itself
    assert effect(grey_signature(100, 64 * 36)) is Effect.UNKNOWN


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
