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
from dataclasses import replace
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


class _NoWindowList(X11Windows):
    """No window list on Wayland: any read of it fails (the observer's own-window and
    pointer reads then say "not known"), never XWayland's list of other windows."""

    def _dpy(self) -> Any:
        raise LookupError(WHY_NO_WINDOWS)


class WaylandAtspiInventory(AtspiInventory):
    """The active window's controls (AT-SPI), boxes relative to that window."""

    name = "atspi"
    coords = COORD_WINDOW

    def __init__(self) -> None:
        super().__init__()
        self.windows = _NoWindowList()
        #: the window the last snapshot's boxes are relative to
        self._relative: RelativeTo | None = None

    def _active_frame(self, limits: WalkLimits) -> tuple[Node, str, str] | None:
        """(frame, title, role name) of the active top-level accessible of an application
        other than this one (a frame, a dialog, or a popup such as a context menu); None when
        there is none."""
        registry = Node(REGISTRY, ROOT_PATH)
        apps = _children(self._call(Call(registry, ACCESSIBLE, "GetChildren"), limits))
        calls: list[Call] = []
        for app in apps:
            calls += [Call.prop(app, ACCESSIBLE, "Name"), Call(app, ACCESSIBLE, "GetChildren")]
        replies = self._call_many(calls, limits)
        tops: list[Node] = []
        for index in range(len(apps)):
            name, children = replies[2 * index], replies[2 * index + 1]
            if isinstance(name, Exception) or isinstance(children, Exception):
                continue
            if str(_value(name)) == APP_NAME:
                continue  # this app's own windows are not the agent's to list
            tops += _children(children)
        calls = []
        for top in tops:
            calls += [
                Call(top, ACCESSIBLE, "GetState"),
                Call.prop(top, ACCESSIBLE, "Name"),
                Call(top, ACCESSIBLE, "GetRole"),
            ]
        replies = self._call_many(calls, limits)
        for index, top in enumerate(tops):
            states, name, role = replies[3 * index : 3 * index + 3]
            if any(isinstance(reply, Exception) for reply in (states, name, role)):
                continue
            if states_contain(states[0], STATE_ACTIVE):
                return top, clean_name(str(_value(name))), role_name_of(role[0])
        return None

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
