"""Python's cyclic garbage collection run on the GUI thread only (a QTimer), never on a worker.

CPython starts a collection on whichever thread happens to allocate past the threshold: on
the engine thread, a capture thread or the store's writer it would free the Qt objects held
in reference cycles (a QObject wrapper and its bound slots) off the GUI thread, and Qt may
crash ("Timers cannot be stopped from another thread", then a segfault). So the automatic
collector is off while the app runs and a timer on the GUI thread collects instead, by
generation as CPython's thresholds would. The pattern is pyqtgraph's
(pyqtgraph/util/garbage_collector.py, GarbageCollector, after Erik Janssens' "Should Python
garbage collector be disabled in Qt apps?"); here one collect of the highest due generation
per tick, and the collector's earlier state comes back at stop.

A full collection passes over every object the app holds (~67,000 once the window has shown
a run: 30-45 ms of the GUI thread, longer under load). CPython's own collector does one only
once the objects that became long-lived since the last one are a quarter of those that were
(gcmodule.c, gc_collect_generations: long_lived_pending < long_lived_total / 4), and collects
generation 1 instead until then; so does this one. The objects that were long-lived at the
last full collection are frozen (gc.freeze) until the next, so the ones since are the
generation left to count (gc.get_objects(2)). What lives when the collector starts (the app
starts it at the window's first paint, the automatic collector off until then: its modules,
classes and the window itself, ~47,000 objects, all in generation 0) is frozen at once,
without a pass over it: the first tick would have spent 13-20 ms collecting generation 0
over all of it, and generation 1 again later. A full collection unfreezes first: it still
frees every cycle, as CPython's does, only as rarely.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtCore import QTimer

#: how often the GUI thread looks whether a collection is due: a generation-0 collect takes a
#: few ms at most; a full one tens of ms, as CPython's own, and as rarely (FULL_GROWTH)
CHECK_INTERVAL_MS = 100
#: a full collection waits until the long-lived objects grew by this share (CPython's 25 %)
FULL_GROWTH = 0.25


def due_generation(count: tuple[int, int, int], threshold: tuple[int, ...]) -> int | None:
    """The oldest generation CPython's automatic collector would collect now, or None.

    `count` is gc.get_count(), `threshold` gc.get_threshold(): generation 0 is due when
    its allocations pass threshold[0]; an older one when it is due as well as all younger.
    A threshold[0] of 0 means collection is off.
    """
    if not threshold or threshold[0] == 0:
        return None
    due = None
    for generation, (counted, limit) in enumerate(zip(count, threshold, strict=False)):
        if counted <= limit:
            break
        due = generation
    return due


def collect_if_due(threshold: tuple[int, ...]) -> int | None:
    """Collect the due generation (due_generation) on this thread; returns it, or None."""
    generation = due_generation(gc.get_count(), threshold)
    if generation is not None:
        gc.collect(generation)
    return generation


def collect_long_lived_rarely(threshold: tuple[int, ...]) -> int | None:
    """Collect the due generation on this thread, a full collection only once the long-lived
    objects grew by FULL_GROWTH (the module docstring); the generation collected, or None."""
    generation = due_generation(gc.get_count(), threshold)
    if generation is None or generation < 2:
        if generation is not None:
            gc.collect(generation)
        return generation
    frozen = gc.get_freeze_count()
    if not frozen:  # started without freezing (a test process): freeze what lived so far
        gc.collect(1)
        gc.freeze()
        return 1
    if len(gc.get_objects(generation=2)) < frozen * FULL_GROWTH:
        gc.collect(1)
        return 1
    gc.unfreeze()
    gc.collect(2)
    gc.freeze()
    return 2


class GuiThreadCollector:
    """The automatic collector off, and a timer on the thread that starts it collecting.

    Start it on the GUI thread once the QApplication exists; stop it at shutdown (the
    collector's state before start comes back).

    Attributes:
        threshold: gc.get_threshold() when started: what a generation is due at.
    """

    def __init__(self, interval_ms: int = CHECK_INTERVAL_MS) -> None:
        self.threshold: tuple[int, ...] = gc.get_threshold()
        self._interval_ms = interval_ms
        self._timer: QTimer | None = None
        self._was_enabled = False
        self._paused = 0

    def start(self) -> GuiThreadCollector:
        from PySide6.QtCore import QTimer

        self.threshold = gc.get_threshold()
        self._was_enabled = gc.isenabled()
        gc.disable()
        gc.freeze()  # what lived through the start: long-lived (the module docstring)
        self._timer = QTimer()
        self._timer.timeout.connect(self.on_tick)
        self._timer.start(self._interval_ms)
        return self

    def on_tick(self) -> None:
        if not self._paused:
            collect_long_lived_rarely(self.threshold)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No collection while the body runs; what lives at its end is frozen, without a pass
        over it, as at `start`. For the app's start after its first paint: what it imports
        and builds then (the engine, the store, the adapters, the API server) lives as long
        as the app, and a generation-0 pass every tick over it (2-15 ms of the GUI thread
        each, ~50 ms of CPU from the paint to the API up) freed next to nothing."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1
            if not self._paused and self._timer is not None:
                gc.freeze()

    def stop(self) -> None:
        if self._timer is None:
            return
        self._timer.stop()
        self._timer.timeout.disconnect(self.on_tick)
        self._timer = None
        gc.unfreeze()  # the long-lived objects are collectable again, as before start
        if self._was_enabled:
            gc.enable()


@contextmanager
def collect_on_gui_thread(interval_ms: int = CHECK_INTERVAL_MS) -> Iterator[GuiThreadCollector]:
    """GuiThreadCollector started for the body of the `with`, stopped at its end."""
    collector = GuiThreadCollector(interval_ms).start()
    try:
        yield collector
    finally:
        collector.stop()
