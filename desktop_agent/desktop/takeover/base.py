"""The takeover watch's port and what every backend shares: the agent's injection windows, the
watch's protocol, and the callback wrapper that keeps the time of the user's last input."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from desktop_agent.core.errors import DesktopAgentError

log = logging.getLogger(__name__)


class TakeoverUnavailable(DesktopAgentError):
    """The user's input cannot be watched (no display, no XInput2, the hooks refused)."""


class Fence(Protocol):
    """Told, on the injecting thread, when an injection window opens and closes."""

    def opened(self) -> None: ...

    def closed(self) -> None: ...


class InjectionWindows:
    """When the agent is sending input. Thread-safe; windows may nest or overlap.

    The fences are called under the lock, so a watcher added or removed mid-run sees every
    window that opens or closes after it, and never half of one call.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._fences: list[Fence] = []

    @contextlib.contextmanager
    def injecting(self) -> Iterator[None]:
        """Wrap one call that sends input events; they must have reached the server on exit."""
        with self._lock:
            self._depth += 1
            for fence in self._fences:
                fence.opened()
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                for fence in self._fences:
                    fence.closed()

    @property
    def active(self) -> bool:
        """Whether a window is open now."""
        with self._lock:
            return self._depth > 0

    def add_fence(self, fence: Fence) -> int:
        """Register `fence`; how many windows are open at this instant."""
        with self._lock:
            self._fences.append(fence)
            return self._depth

    def remove_fence(self, fence: Fence) -> None:
        """Unregister `fence`; once this returns it is never called again."""
        with self._lock, contextlib.suppress(ValueError):
            self._fences.remove(fence)


class TakeoverWatch(Protocol):
    backend: str

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait until every input event made before this call is classified (and reported):
        True, or False after `timeout`. Call it after an action to learn of a takeover
        before the next observation."""
        ...

    def user_idle_s(self) -> float:
        """Seconds since the user's last input was reported (inf before any): resume only
        once the user has let go, or the hand still on the mouse pauses the run again."""
        ...

    def stop(self) -> None:
        """End the watch and its thread; safe to call twice."""
        ...


class UserInputs:
    """Calls the watch's callback, shielding the watch from its faults, and keeps the time
    (monotonic) of the last call."""

    def __init__(
        self, on_user_input: Callable[[], None], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._on_user_input = on_user_input
        self._clock = clock
        self._last: float | None = None

    def __call__(self) -> None:
        self._last = self._clock()
        try:
            self._on_user_input()
        except Exception:  # noqa: BLE001 - the watch must outlive a faulty callback
            log.exception("the takeover callback failed")

    def idle_s(self) -> float:
        last = self._last
        return float("inf") if last is None else self._clock() - last
