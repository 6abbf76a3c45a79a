"""The GUI thread's collector (desktop_agent/ui/collector.py): due as CPython's thresholds say,
collecting on its timer while the automatic collector is off, the collector's state back at stop."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from desktop_agent.ui.collector import (
    FULL_GROWTH,
    collect_long_lived_rarely,
    collect_on_gui_thread,
    due_generation,
)


class Cycle:
    """An object in a reference cycle: only a cycle collection frees it."""

    def __init__(self) -> None:
        self.me = self


@contextmanager
def collections_started() -> Iterator[list[tuple[int, str]]]:
    """(generation, thread name) of each collection started within the `with`."""
    started: list[tuple[int, str]] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append((info["generation"], threading.current_thread().name))

    gc.callbacks.append(record)
    try:
        yield started
    finally:
        gc.callbacks.remove(record)


@pytest.mark.parametrize(
    ("count", "due"),
    [
        ((700, 50, 50), None),  # generation 0 not past its threshold: nothing, whatever the rest
        ((701, 10, 50), 0),
        ((701, 11, 10), 1),
        ((701, 11, 11), 2),
    ],
)
def test_the_due_generation_is_the_oldest_past_its_threshold_with_all_younger(
    count: tuple[int, int, int], due: int | None
) -> None:
    assert due_generation(count, (700, 10, 10)) == due


def test_a_zero_threshold_means_no_collection_is_due() -> None:
    assert due_generation((10_000, 100, 100), (0, 10, 10)) is None


def test_the_timer_collects_on_the_gui_thread_while_automatic_collection_is_off(
    qtbot: Any,
) -> None:
    gc.enable()  # as in the app's process, where nothing turned it off before
    # counts at zero: the few allocations before start turns it off start no collection
    gc.collect()
    with collections_started() as started:
        with collect_on_gui_thread(interval_ms=10):
            assert not gc.isenabled()
            for _ in range(5_000):
                Cycle()
            assert started == [], "nothing collects until the timer does"
            qtbot.waitUntil(lambda: bool(started), timeout=2000)
        assert gc.isenabled(), "the automatic collector is back after stop"
    assert {thread for _, thread in started} == {threading.main_thread().name}


def test_a_full_collection_waits_until_the_long_lived_objects_grew_by_a_quarter() -> None:
    # CPython's own rule (gcmodule.c, gc_collect_generations): generation 1 is collected
    # instead of a full pass until the objects that became long-lived since the last full one
    # are a quarter of those that were; a full pass still frees every cycle
    import weakref

    def make_generation_2_due() -> None:
        gc.collect(1)  # generation 2's count past 0
        gc.collect(0)  # generation 1's count past 0
        for _ in range(10):
            Cycle()  # generation 0's count past 1

    due = (1, 0, 0)
    was_enabled = gc.isenabled()
    gc.disable()
    gc.unfreeze()
    try:
        old = Cycle()
        old_one = weakref.ref(old)
        make_generation_2_due()
        with collections_started() as started:
            assert collect_long_lived_rarely(due) == 1
        assert [generation for generation, _ in started] == [1], "then what lived is frozen"
        frozen = gc.get_freeze_count()
        assert frozen > 1000
        del old  # garbage now, in a cycle among the long-lived objects

        make_generation_2_due()
        with collections_started() as started:
            assert collect_long_lived_rarely(due) == 1
        assert [generation for generation, _ in started] == [1], "few new ones: no full pass"
        assert old_one() is not None

        grown = [[n] for n in range(int(frozen * FULL_GROWTH) + 1_000)]
        gc.collect(1)  # now long-lived: in generation 2
        make_generation_2_due()
        with collections_started() as started:
            assert collect_long_lived_rarely(due) == 2
        assert [generation for generation, _ in started] == [2]
        assert old_one() is None, "the full collection freed the cycle among the frozen"
        assert gc.get_freeze_count() >= len(grown), "what lived through it is frozen again"
        assert len(gc.get_objects(generation=2)) < 1_000
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def test_what_lives_at_start_is_frozen_without_a_collection_and_nothing_is_after_stop() -> None:
    # the app starts the collector at its first paint, the automatic collector off until then:
    # the start's objects are all in generation 0, and a first tick collecting them was
    # 13-20 ms of the GUI thread right after the paint
    gc.unfreeze()
    with collections_started() as started:
        with collect_on_gui_thread(interval_ms=60_000):
            assert gc.get_freeze_count() > 1000
            assert gc.get_count()[0] < 100
        assert gc.get_freeze_count() == 0
    assert started == []


def test_while_paused_no_tick_collects_and_what_lives_at_its_end_is_frozen_without_one(
    qtbot: Any,
) -> None:
    # the app's start after its first paint: what it imports and builds lives as long as the
    # app; the ticks' passes over it were 2-15 ms of the GUI thread each
    gc.unfreeze()
    with collections_started() as started, collect_on_gui_thread(interval_ms=10) as collector:
        with collector.paused():
            frozen_before = gc.get_freeze_count()
            made = [Cycle() for _ in range(5_000)]
            assert due_generation(gc.get_count(), collector.threshold) is not None
            ticked = 0

            def tick() -> None:
                nonlocal ticked
                ticked += 1

            collector._timer.timeout.connect(tick)  # type: ignore[union-attr]
            qtbot.waitUntil(lambda: ticked >= 3, timeout=2000)
            assert started == [], "a due generation, ticks, and no collection"
        assert gc.get_freeze_count() >= frozen_before + len(made)
        assert started == []
        del made
        for _ in range(5_000):
            Cycle()
        qtbot.waitUntil(lambda: bool(started), timeout=2000)  # collecting again
