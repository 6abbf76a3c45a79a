"""The AT-SPI transports benchmarks/inventory.py compares with the app's (jeepney) client.

* `DbusFastInventory`: the same walk (AtspiInventory) over dbus-fast's asyncio client, an
  event loop owned by the inventory thread.
* `PyatspiInventory`: the walk the app used before, through Debian's python3-pyatspi
  (libatspi, with its cache); found in /usr/lib/python3/dist-packages, not in the venv.
"""

from __future__ import annotations

import asyncio
import sys
import time
import warnings
from collections import deque
from collections.abc import Sequence
from typing import Any

from desktop_agent.desktop.inventory.atspi import ROLES, AtspiInventory
from desktop_agent.desktop.inventory.atspi_bus import AtspiError, Call, accessibility_bus_address
from desktop_agent.desktop.inventory.base import RawElement, WalkLimits, clean_name
from desktop_agent.desktop.inventory.x11 import listed_windows, window_elements

DEBIAN_DIST_PACKAGES = "/usr/lib/python3/dist-packages"


class DbusFastBus:
    """AtspiBus's call_many over dbus-fast (asyncio), for the comparison."""

    def __init__(self, address: str) -> None:
        from dbus_fast.aio import MessageBus

        async def connect() -> Any:
            return await MessageBus(bus_address=address).connect()

        self._loop = asyncio.new_event_loop()
        self._bus = self._loop.run_until_complete(connect())

    def call_many(self, calls: Sequence[Call], deadline: float) -> list[Any]:
        from dbus_fast import Message, MessageFlag, MessageType, Variant

        def plain(value: Any) -> Any:
            if isinstance(value, Variant):
                return (value.signature, plain(value.value))
            if isinstance(value, list):
                return [plain(item) for item in value]
            return value

        async def one(call: Call) -> Any:
            args = [Variant(*arg) if isinstance(arg, tuple) else arg for arg in call.args]
            reply = await self._bus.call(
                Message(
                    destination=call.node.bus,
                    path=call.node.path,
                    interface=call.interface,
                    member=call.method,
                    signature=call.signature or "",
                    body=args,
                    flags=MessageFlag.NO_AUTOSTART,
                )
            )
            assert reply is not None
            if reply.message_type == MessageType.ERROR:
                return AtspiError(
                    reply.error_name or "error", str(reply.body[0] if reply.body else "")
                )
            return plain(reply.body)

        async def all_of() -> list[Any]:
            return list(await asyncio.gather(*(one(call) for call in calls)))

        return self._loop.run_until_complete(
            asyncio.wait_for(all_of(), max(deadline - time.monotonic(), 0.0))
        )

    def close(self) -> None:
        self._bus.disconnect()
        self._loop.run_until_complete(self._bus.wait_for_disconnect())
        self._loop.close()


class DbusFastInventory(AtspiInventory):
    """The app's walk, dbus-fast underneath."""

    def thread_init(self) -> None:
        self.bus = DbusFastBus(accessibility_bus_address())  # type: ignore[assignment]


def import_pyatspi() -> Any:
    if DEBIAN_DIST_PACKAGES not in sys.path:
        sys.path.append(DEBIAN_DIST_PACKAGES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import gi

        gi.require_version("Atspi", "2.0")
        import pyatspi
        from gi.repository import Atspi

    Atspi.set_timeout(800, 15000)
    return pyatspi


class PyatspiInventory(AtspiInventory):
    """The app's walk before the D-Bus client (one libatspi call per node property)."""

    def thread_init(self) -> None:
        self._pyatspi = import_pyatspi()

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        # the same X11 work as the app's path (its own popup menus asked too), so that the
        # two differ in their AT-SPI walks only
        windows = listed_windows(self.windows, limits)
        elements = window_elements(windows)
        roots = self._pyatspi_roots(windows)
        if not roots:
            return elements[: limits.max_elements], "x11"
        elements.extend(self._pyatspi_walk(roots, limits, limits.max_elements - len(elements)))
        return elements[: limits.max_elements], "atspi"

    def _pyatspi_roots(self, windows: list[Any]) -> list[Any]:
        pyatspi = self._pyatspi
        desktop = pyatspi.Registry.getDesktop(0)
        active_title = next((w.title for w in windows if w.active), None)
        candidates = []
        for index in range(desktop.childCount):
            app = desktop.getChildAtIndex(index)
            for child_index in range(app.childCount if app is not None else 0):
                frame = app.getChildAtIndex(child_index)
                if frame is not None and frame.getState().contains(pyatspi.STATE_ACTIVE):
                    candidates.append((app, frame))
        if not candidates:
            return []
        app, frame = next(
            (pair for pair in candidates if clean_name(pair[1].name) == active_title),
            candidates[0],
        )
        roots = [frame]
        for child_index in range(app.childCount):
            popup = app.getChildAtIndex(child_index)
            if popup is None or popup == frame:
                continue
            if popup.getRole() == pyatspi.ROLE_WINDOW and popup.getState().contains(
                pyatspi.STATE_SHOWING
            ):
                roots.append(popup)
        return roots

    def _pyatspi_walk(self, roots: list[Any], limits: WalkLimits, budget: int) -> list[RawElement]:
        pyatspi = self._pyatspi
        found: list[RawElement] = []
        queue: deque[tuple[Any, int]] = deque((root, 0) for root in roots)
        visited = 0
        while queue and len(found) < budget and visited < limits.max_nodes:
            if limits.expired():
                break
            node, depth = queue.popleft()
            visited += 1
            try:
                states = node.getState()
                if not states.contains(pyatspi.STATE_SHOWING):
                    continue
                role_name = node.getRoleName()
                role = ROLES.get(role_name)
                if role is not None and states.contains(pyatspi.STATE_VISIBLE):
                    extents = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
                    if extents.width > 0 and extents.height > 0:
                        found.append(
                            RawElement(
                                role=role,
                                name=node.name or "",
                                rect=(extents.x, extents.y, extents.width, extents.height),
                                enabled=states.contains(pyatspi.STATE_ENABLED),
                                focused=states.contains(pyatspi.STATE_FOCUSED),
                                password=role_name == "password text",
                                native=("pyatspi", node),
                            )
                        )
                if depth < limits.max_depth:
                    for index in range(node.childCount):
                        child = node.getChildAtIndex(index)
                        if child is not None:
                            queue.append((child, depth + 1))
            except Exception:
                continue
        return found

    def close(self) -> None:
        self.windows.close()
