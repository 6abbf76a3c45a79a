"""ToolBreaker: a circuit breaker per tool, shared by every run of the process."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum

FAILURE_THRESHOLD = 3
COOLDOWN_S = 300.0


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class ToolBreaker:
    """closed → open after 3 consecutive failures → half-open after the cooldown,
    where exactly one trial call passes → closed on success, open on failure.

    A cancelled call (user stop) is neither a success nor a failure: `release()`.
    """

    def __init__(
        self,
        name: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        threshold: int = FAILURE_THRESHOLD,
        cooldown_s: float = COOLDOWN_S,
    ) -> None:
        self.name = name
        self._clock = clock
        self._threshold = threshold
        self._cooldown_s = cooldown_s
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def state(self) -> BreakerState:
        if self._opened_at is None:
            return BreakerState.CLOSED
        if self._clock() - self._opened_at >= self._cooldown_s:
            return BreakerState.HALF_OPEN
        return BreakerState.OPEN

    @property
    def consecutive_failures(self) -> int:
        return self._failures

    def acquire(self) -> bool:
        """May a call go ahead now? In half-open only one trial call may."""
        state = self.state
        if state is BreakerState.CLOSED:
            return True
        if state is BreakerState.HALF_OPEN and not self._trial_in_flight:
            self._trial_in_flight = True
            return True
        return False

    def record(self, ok: bool) -> None:
        self._trial_in_flight = False
        if ok:
            self._failures = 0
            self._opened_at = None
            return
        self._failures += 1
        if self._opened_at is not None or self._failures >= self._threshold:
            self._opened_at = self._clock()

    def release(self) -> None:
        """The call was cancelled: it counts for nothing, and a trial may be tried again."""
        self._trial_in_flight = False

    @contextmanager
    def slot(self) -> Iterator[BreakerSlot]:
        """The place of one call that `acquire` let through: `record` its outcome; leaving
        without one (stopped, cancelled, denied, paused before it ran) releases the place,
        which counts for nothing. The release is written once, here."""
        slot = BreakerSlot(self)
        try:
            yield slot
        finally:
            if not slot.recorded:
                self.release()

    def retry_in_s(self) -> float:
        if self._opened_at is None:
            return 0.0
        return max(0.0, self._cooldown_s - (self._clock() - self._opened_at))


class BreakerSlot:
    """One call's place in its breaker (`ToolBreaker.slot`)."""

    def __init__(self, breaker: ToolBreaker) -> None:
        self._breaker = breaker
        self.recorded = False

    def record(self, ok: bool) -> None:
        self.recorded = True
        self._breaker.record(ok)


class BreakerBoard:
    """The breakers of all tools, made on first use."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._breakers: dict[str, ToolBreaker] = {}

    def __getitem__(self, tool: str) -> ToolBreaker:
        breaker = self._breakers.get(tool)
        if breaker is None:
            breaker = self._breakers[tool] = ToolBreaker(tool, clock=self._clock)
        return breaker

    def states(self) -> dict[str, BreakerState]:
        return {name: breaker.state for name, breaker in self._breakers.items()}
