"""Element inventory: the backend for this machine and the one thread every backend call runs on."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from desktop_agent.desktop.inventory.base import (
    InventoryBackend,
    NoInventory,
    RawElement,
    RelativeTo,
    WalkLimits,
    inventory_text,
    own_window_elements,
    place_elements,
    to_elements,
    to_texts,
)

__all__ = [
    "InventoryBackend",
    "InventoryRunner",
    "NoInventory",
    "RawElement",
    "RelativeTo",
    "WalkLimits",
    "choose_backend",
    "inventory_text",
    "own_window_elements",
    "place_elements",
    "to_elements",
    "to_texts",
]

log = logging.getLogger(__name__)
T = TypeVar("T")


def choose_backend() -> InventoryBackend:
    """UI Automation on Windows; on a Wayland session AT-SPI with boxes relative to the
    active window; on X11 AT-SPI when reachable, else the X11 window list."""
    if sys.platform == "win32":
        try:
            import uiautomation  # noqa: F401
        except ImportError as error:
            return NoInventory(
                f"uiautomation is not importable ({error}): pip install uiautomation"
            )
        from desktop_agent.desktop.inventory.uia import UiaInventory

        return UiaInventory()
    from desktop_agent.desktop.inventory.atspi import AtspiInventory, atspi_status
    from desktop_agent.desktop.session import session_kind

    if session_kind() == "wayland":
        # XWayland's window list and boxes would be wrong for native windows (issue 34)
        usable, why = atspi_status()
        if not usable:
            return NoInventory(f"Wayland session, and AT-SPI is not reachable: {why}")
        from desktop_agent.desktop.inventory.atspi_wayland import WaylandAtspiInventory

        return WaylandAtspiInventory()
    if not os.environ.get("DISPLAY"):
        return NoInventory("no X display: DISPLAY is not set")
    from desktop_agent.desktop.inventory.x11 import X11Inventory

    usable, why = atspi_status()
    if usable:
        return AtspiInventory()
    log.info("element inventory: X11 window list (AT-SPI not used: %s)", why)
    return X11Inventory(reason=why)


@dataclass(eq=False)
class _Thread:
    """One inventory thread and the backend made on it: a call sees only its own thread's
    backend, so a thread left behind cannot start or swap the backend of the one after it."""

    pool: concurrent.futures.ThreadPoolExecutor
    backend: InventoryBackend | None
    ready: bool = False


class InventoryRunner:
    """Owns a backend and the single thread all its calls run on (COM and D-Bus proxies are
    tied to a thread). The backend is chosen on that thread at first use, not at construction.

    A call that outlives its deadline has hung its thread: the thread is abandoned (it ends
    when the call returns, if ever, and then closes the backend made on it) and a new one,
    with a backend made anew on it, takes the calls after it. `abandoned` counts such
    replacements.
    """

    def __init__(
        self,
        backend: InventoryBackend | None = None,
        *,
        factory: Callable[[], InventoryBackend] = choose_backend,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._backend_given = backend is not None
        self._factory = factory
        self.abandoned = 0
        self._clock = clock
        self._thread = _Thread(self._new_pool(), backend)
        self._running: concurrent.futures.Future[Any] | None = None

    @staticmethod
    def _new_pool() -> concurrent.futures.ThreadPoolExecutor:
        return concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="inventory")

    def _ensure(self, thread: _Thread) -> InventoryBackend:
        """`thread`'s backend, made and started on it at its first call (runs on it)."""
        if thread.backend is None:
            thread.backend = self._factory()
        if not thread.ready:
            try:
                thread.backend.thread_init()
            except Exception as error:  # noqa: BLE001 - a backend that cannot start: none
                log.warning("inventory backend %s failed to start: %s", thread.backend.name, error)
                thread.backend = NoInventory(f"{thread.backend.name} failed to start: {error}")
            thread.ready = True
        return thread.backend

    @property
    def backend(self) -> InventoryBackend | None:
        """The backend, once chosen (None before the first call)."""
        return self._thread.backend

    def submit(self, call: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        """Run call(backend, *args) on the inventory thread."""
        thread = self._thread
        return thread.pool.submit(lambda: call(self._ensure(thread), *args))

    async def run(self, call: Callable[..., T], *args: Any, timeout_s: float | None = None) -> T:
        """call(backend, *args) on the inventory thread; past `timeout_s` TimeoutError, and
        the hung thread is replaced."""
        future = self.submit(call, *args)
        if timeout_s is None:
            return await asyncio.wrap_future(future)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout_s)
        except TimeoutError:
            self.abandon_thread(f"a call took longer than {timeout_s:g} s")
            raise
        except asyncio.CancelledError:
            if future.running():
                self.abandon_thread("a call was still running when its caller gave up")
            raise

    def abandon_thread(self, why: str) -> None:
        """Leave the current thread to its hung call; later calls go to a new thread."""
        log.warning("inventory thread abandoned and replaced: %s", why)
        old = self._thread
        given = old.backend if self._backend_given else None
        # a backend made on the old thread belongs to it: made anew on the next one
        self._thread = _Thread(self._new_pool(), given)
        if not self._backend_given:
            # after the hung call (and those queued behind it) the old thread closes its own
            # backend: its bus connection is not left to the garbage collector
            old.pool.submit(_close_backend, old)
        old.pool.shutdown(wait=False, cancel_futures=False)
        self._running = None
        self.abandoned += 1

    async def idle(self, timeout_s: float) -> bool:
        """Whether the last walk is done, waiting for it up to `timeout_s` (never past it:
        a walk that outlives it is left running, for `snapshot` to abandon)."""
        running = self._running
        if running is None or running.done():
            return True
        done, _ = await asyncio.wait([asyncio.wrap_future(running)], timeout=timeout_s)
        return bool(done)

    async def snapshot(
        self, budget_s: float, limits: WalkLimits | None = None
    ) -> tuple[list[RawElement], str]:
        """The elements within `budget_s`: the walk stops at its deadline and returns what it
        has; a backend call that blocks past the budget (+50 ms) gives no elements. While such
        a call is still running no new walk is queued behind it.
        """
        if self._running is not None and not self._running.done():
            # the previous walk overran its budget and is still blocked a whole turn later
            self.abandon_thread("the previous walk is still blocked")
        base = limits or WalkLimits()
        deadline = self._clock() + budget_s
        limits = WalkLimits(
            max_depth=base.max_depth,
            max_elements=base.max_elements,
            max_nodes=base.max_nodes,
            deadline=deadline,
            clock=self._clock,
        )
        future = self.submit(lambda backend: backend.snapshot(limits))
        self._running = future
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), budget_s + 0.05)
        except TimeoutError:
            log.warning("inventory took longer than %.0f ms; no elements this turn", budget_s * 1e3)
            return [], "none"
        except Exception as error:  # noqa: BLE001 - an inventory fault must not fail the turn
            log.warning("inventory failed: %s", error)
            return [], "none"

    def close(self) -> None:
        thread = self._thread
        if thread.backend is not None:
            thread.pool.submit(thread.backend.close)
        thread.pool.shutdown(wait=False, cancel_futures=False)


def _close_backend(thread: _Thread) -> None:
    """Close what an abandoned thread made (runs on it, once its calls have returned)."""
    if thread.backend is not None:
        try:
            thread.backend.close()
        except Exception as error:  # noqa: BLE001 - closing a broken connection: nothing to do
            log.debug("closing an abandoned inventory backend: %s", error)
        thread.backend = None
