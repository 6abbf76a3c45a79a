"""The GUI thread's collector (desktop_agent/ui/collector.py): due as CPython's thresholds say,
collecting on its timer while the automatic collector is off, the collector's state back at stop."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest

from desktop_agent.ui.collector import collect_on_gui_thread, due_generation


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
    class Cycle:
        def __init__(self) -> None:
            self.me = self

    threads: list[str] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            threads.append(threading.current_thread().name)

    gc.enable()  # as in the app's process, where nothing turned it off before
    gc.callbacks.append(record)
    try:
        with collect_on_gui_thread(interval_ms=10):
            assert not gc.isenabled()
            for _ in range(5_000):
                Cycle()
            assert threads == [], "nothing collects until the timer does"
            qtbot.waitUntil(lambda: bool(threads), timeout=2000)
        assert gc.isenabled(), "the automatic collector is back after stop"
    finally:
        gc.callbacks.remove(record)
    assert set(threads) == {threading.main_thread().name}
