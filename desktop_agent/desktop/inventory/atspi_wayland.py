"""The element list on Wayland: AT-SPI's walk of the active window, its boxes relative to it.

AT-SPI works over D-Bus on Wayland as on X11, but a Wayland client does not know where its
window is: GTK and Qt answer a box "on the screen" as a box in the window's own surface
(measured on mutter 43: the SCREEN and WINDOW coordinates of l3afpad's parts are the same).
So the boxes are asked relative to the window (ATSPI_COORD_TYPE_WINDOW), each element says
so (`RawElement.relative`, with the outlines of the window's parts), and the observer finds
the window on the screenshot (desktop/window_place.py) before the boxes are listed. There
is no window list either: only the active frame is walked (not the popups of its
application, whose surfaces have places of their own), and nothing of another window is
read.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from typing import Any

from desktop_agent.desktop.inventory.atspi import (
    AtspiInventory,
    _accessible,
    _children,
    _value,
    _Walked,
    role_name_of,
)
from desktop_agent.desktop.inventory.atspi_bus import (
    ACCESSIBLE,
    BUS_DRIVER,
    BUS_DRIVER_PATH,
    COMPONENT,
    COORD_WINDOW,
    REGISTRY,
    ROOT_PATH,
    STATE_ACTIVE,
    Call,
    Node,
    states_contain,
)
from desktop_agent.desktop.inventory.base import (
    APP_NAME,
    RawElement,
    RelativeTo,
    WalkLimits,
    clean_name,
)
from desktop_agent.desktop.inventory.x11 import X11Windows

log = logging.getLogger(__name__)

WHY_NO_WINDOWS = "Wayland does not let a program list or raise windows"
#: the top-level roles whose place is looked for on the screenshot: windows with a frame of
#: their own; any other active top-level (a popup "window": a context menu) is listed
#: relative to itself, never placed (RelativeTo.findable)
FINDABLE_ROLES = frozenset(
    {"frame", "dialog", "file chooser", "alert", "color chooser", "font chooser"}
)


@dataclass(frozen=True, slots=True)
class _Top:
    """A top-level accessible: its node, title, role name, whether it is active, and whether
    its application is this process (None: the bus did not say)."""

    node: Node
    title: str
    role: str
    active: bool
    own: bool | None


class _NoWindowList(X11Windows):
    """No window list on Wayland: any read of it fails (the observer's own-window and
    pointer reads then say "not known"), never XWayland's list of other windows."""

    def _dpy(self) -> Any:
        raise LookupError(WHY_NO_WINDOWS)


class WaylandAtspiInventory(AtspiInventory):
    """The active window's controls (AT-SPI), boxes relative to that window."""

    name = "atspi"
    coords = COORD_WINDOW
    #: no window list (desktop/focus.py asks this inventory's focused_role alone): an X11
    #: window list that fails still fails the probe there
    lists_windows = False

    def __init__(self, *, own_pid: int | None = None) -> None:
        super().__init__()
        self.windows = _NoWindowList()
        #: the process whose windows are the app's own (this one)
        self.own_pid = os.getpid() if own_pid is None else own_pid
        #: the window the last snapshot's boxes are relative to
        self._relative: RelativeTo | None = None

    def _tops(self, limits: WalkLimits) -> list[_Top]:
        """Every top-level accessible of every application on the bus, with whether it is
        active and whether its application is this process (the bus's word for the process
        behind the application's connection, or the app's own name)."""
        registry = Node(REGISTRY, ROOT_PATH)
        apps = _children(self._call(Call(registry, ACCESSIBLE, "GetChildren"), limits))
        driver = Node(BUS_DRIVER, BUS_DRIVER_PATH)
        calls: list[Call] = []
        for app in apps:
            calls += [
                Call.prop(app, ACCESSIBLE, "Name"),
                Call(app, ACCESSIBLE, "GetChildren"),
                # at-spi2-core's atspi_accessible_get_process_id: the application's bus name
                # asked of the bus itself
                Call(driver, BUS_DRIVER, "GetConnectionUnixProcessID", "s", (app.bus,)),
            ]
        replies = self._call_many(calls, limits)
        owned: list[tuple[Node, bool | None]] = []
        for index in range(len(apps)):
            name, children, pid = replies[3 * index : 3 * index + 3]
            if isinstance(children, Exception):
                continue  # gone: no window of it is active
            if not isinstance(name, Exception) and str(_value(name)) == APP_NAME:
                own: bool | None = True
            elif isinstance(pid, Exception):
                own = None  # whose it is cannot be told
            else:
                own = int(pid[0]) == self.own_pid
            owned += [(top, own) for top in _children(children)]
        calls = []
        for top, _ in owned:
            calls += [
                Call(top, ACCESSIBLE, "GetState"),
                Call.prop(top, ACCESSIBLE, "Name"),
                Call(top, ACCESSIBLE, "GetRole"),
            ]
        replies = self._call_many(calls, limits)
        found: list[_Top] = []
        for index, (top, own) in enumerate(owned):
            states, name, role = replies[3 * index : 3 * index + 3]
            if any(isinstance(reply, Exception) for reply in (states, name, role)):
                continue
            active = states_contain(states[0], STATE_ACTIVE)
            title = clean_name(str(_value(name)))
            found.append(_Top(top, title, role_name_of(role[0]), active, own))
        return found

    def _active_frame(self, limits: WalkLimits) -> tuple[Node, str, str] | None:
        """(frame, title, role name) of the active top-level accessible of an application
        other than this one (a frame, a dialog, or a popup such as a context menu); None when
        there is none. An application whose process cannot be told is not listed."""
        for top in self._tops(limits):
            if top.active and top.own is False:
                return top.node, top.title, top.role
        return None

    def focused_role(self, deadline: float) -> str | None:
        """The role name of the focused accessible of the active window; APP_NAME (the core's
        OWN_WINDOW_ROLE) when a window of this process is active: its keys would reach the
        app's own controls. None when it cannot be told: no active window on the bus (a
        program that is not on AT-SPI has the focus), an active window whose process the bus
        does not say, or no focused accessible found by `deadline`."""
        limits = WalkLimits(deadline=deadline)
        try:
            active = [top for top in self._tops(limits) if top.active]
        except TimeoutError:
            return None
        if any(top.own for top in active):
            return APP_NAME
        if any(top.own is None for top in active):
            return None
        return self._focused_under([top.node for top in active], limits)

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        """The active window's controls, each `relative` to it; what its texts say is
        `read_texts`'s."""
        self._seen = None
        self._relative = None
        try:
            found = self._active_frame(limits)
        except TimeoutError:
            log.debug("AT-SPI walk cut at the deadline before the active window was found")
            return [], "none"
        if found is None:
            return [], "none"
        frame, title, role = found
        contents: list[tuple[Node, str]] = []
        outlines: list[tuple[int, int, int, int]] = []
        controls = self._walk(
            [frame], limits, budget=limits.max_elements, contents=contents, outlines=outlines
        )
        relative = RelativeTo(
            title,
            (*outlines, *(element.rect for element in controls)),
            findable=role in FINDABLE_ROLES,
        )
        self._relative = relative
        self._seen = _Walked([], [], frame, contents, bool(controls))
        return [replace(element, relative=relative) for element in controls], "atspi"

    def read_texts(self, limits: WalkLimits) -> list[RawElement]:
        """The text contents of the active window the last snapshot walked, relative to it
        (no other window: its place is not known)."""
        self.texts_unread = ""
        seen, relative = self._seen, self._relative
        if seen is None or relative is None:
            return []
        try:
            texts = self._contents(seen.contents, limits)
        except TimeoutError:
            return []
        except Exception as error:  # noqa: BLE001 - any AT-SPI/D-Bus fault: no texts
            log.warning("the screen's texts could not be read: %s", error)
            return []
        return [replace(text, relative=relative) for text in texts]

    def focus(self, native: Any) -> str:
        node = _accessible(native)
        if COMPONENT not in self._interfaces(node):
            raise LookupError("the element cannot take the focus")
        if not self._call(Call(node, COMPONENT, "GrabFocus"))[0]:
            raise LookupError("the element refused the focus")
        return "focused it through AT-SPI"

    def activate_window(self, title: str) -> str:
        raise LookupError(f"{WHY_NO_WINDOWS}: click the window {title!r} on the screenshot")

    def close(self) -> None:
        if self.bus is not None:
            self.bus.close()
            self.bus = None
