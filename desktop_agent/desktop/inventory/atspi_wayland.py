"""The element list on Wayland: AT-SPI's walk of the active window, its boxes relative to it.

AT-SPI works over D-Bus on Wayland as on X11, but a Wayland client does not know where its
window is: GTK and Qt answer a box "on the screen" as a box in the window's own surface
(measured on mutter 43: the SCREEN and WINDOW coordinates of l3afpad's parts are the same).
So the boxes are asked relative to the window (ATSPI_COORD_TYPE_WINDOW), each element says
so (`RawElement.relative`, with the outlines of the window's parts), and the observer finds
the window on the screenshot (desktop/window_place.py) before the boxes are listed. There
is no window list either: only the active frame is walked (not the popups of its
application, whose surfaces have places of their own), and nothing of another window is
read. Where the list gives no control of another application's active window (none on
the bus: a program not on it, a menu open), the injection guard reads the screen's pixels
instead (`SCREEN`).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from typing import Any

from desktop_agent.core.ports import Focus
from desktop_agent.desktop.inventory.atspi import (
    AtspiInventory,
    _accessible,
    _around,
    _children,
    _untold,
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
#: a pixel-only region over every place a monitor may have: the observer reads the part on
#: the monitor it shows (the whole screenshot; observer._read_pixels clips a region to it)
SCREEN = (-(1 << 15), -(1 << 15), 1 << 16, 1 << 16)
TOO_LATE = "the accessibility read of the screen's text came too late"
FAILED = "the accessibility read of the screen's text failed"


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
    #: no window list (desktop/focus.py asks this inventory's `focused` alone): an X11
    #: window list that fails still fails the probe there
    lists_windows = False

    def __init__(self, *, own_pid: int | None = None) -> None:
        super().__init__()
        self.windows = _NoWindowList()
        #: the process whose windows are the app's own (this one)
        self.own_pid = os.getpid() if own_pid is None else own_pid
        #: the window the last snapshot's boxes are relative to, and its frame
        self._relative: RelativeTo | None = None
        self._frame: Node | None = None

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

    def focused(self, deadline: float) -> Focus:
        """The role name and place of the focused accessible of the active window; APP_NAME
        (the core's OWN_WINDOW_ROLE) when a window of this process is active: its keys would
        reach the app's own controls. Nothing known when it cannot be told: no active window
        on the bus (a program that is not on AT-SPI has the focus), an active window whose
        process the bus does not say, or no focused accessible found by `deadline`."""
        limits = WalkLimits(deadline=deadline)
        try:
            active = [top for top in self._tops(limits) if top.active]
        except TimeoutError:
            return Focus()
        if any(top.own for top in active):
            return Focus(APP_NAME)
        if any(top.own is None for top in active):
            return Focus()
        return self._focused_under([top.node for top in active], limits)

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        """The active window's controls, each `relative` to it; what its texts say is
        `read_texts`'s."""
        self._seen = None
        self._relative = None
        self._frame = None
        self._listed = frozenset()
        self.late = False
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
        cut: list[bool] = []
        opaque: list[tuple[int, int, int, int]] = []
        controls = self._walk(
            [frame],
            limits,
            budget=limits.max_elements,
            contents=contents,
            outlines=outlines,
            cut=cut,
            opaque=opaque,
        )
        relative = RelativeTo(
            title,
            (*outlines, *(element.rect for element in controls)),
            findable=role in FINDABLE_ROLES,
        )
        self._relative, self._frame = relative, frame
        self._listed = frozenset(control.native for control in controls)
        if not self._cut(limits):
            self._seen = _Walked(
                [], [], frame, contents, bool(controls), cut=bool(cut), opaque=opaque
            )
        # else the walk may have been cut before the window's texts (as on X11, atspi.py):
        # read_texts walks the frame again within its own budget
        return [replace(element, relative=relative) for element in controls], "atspi"

    def read_texts(self, limits: WalkLimits) -> list[RawElement]:
        """The text contents of the active window the last snapshot listed, relative to it
        (no other window: its place is not known); its controls' names too when the list's
        walk was cut and this walk had to find them. Where the list gave no control of
        another application's window, by which the observer finds that window's place on the
        screenshot, the screen's pixels (`SCREEN`): the guard reads what the model sees. What
        the deadline cut, or a fault left out, is said in `texts_unread`."""
        self.texts_unread = ""
        self.late = False
        try:
            texts = self._texts(limits)
        except TimeoutError:
            log.debug("the screen's texts cut at their deadline")
            self.texts_unread = TOO_LATE
            return []
        except Exception as error:  # noqa: BLE001 - any AT-SPI/D-Bus fault: no texts
            log.warning("the screen's texts could not be read: %s", error)
            self.texts_unread = FAILED
            return []
        if self._cut(limits):
            log.debug("the screen's texts cut at their deadline")
            self.texts_unread = TOO_LATE
        return texts

    def _texts(self, limits: WalkLimits) -> list[RawElement]:
        relative, frame = self._relative, self._frame
        if relative is None or frame is None or not self._listed:
            return self._unplaced(limits)
        seen = self._seen
        if seen is None:
            contents: list[tuple[Node, str]] = []
            cut: list[bool] = []
            opaque: list[tuple[int, int, int, int]] = []
            controls = self._walk(
                [frame], limits, limits.max_elements, contents=contents, cut=cut, opaque=opaque
            )
            # the element list did not have them: their names are text on the screen
            names = [
                RawElement(e.role, e.name, e.rect, contents=True, native=e.native)
                for e in controls
                if e.name and e.native not in self._listed
            ]
            seen = _Walked([], [], frame, contents, bool(controls), names, bool(cut), opaque)
        texts = [*seen.names, *self._contents(seen.contents, limits)]
        more: list[RawElement] = []
        if seen.cut:
            # more than the walk's bounds: what the rest says is read from the screen's
            # pixels (the window's place is not known), as an unplaced window's
            more = self._unplaced(limits)
        elif untold := _untold(seen.opaque, texts):
            # parts whose text AT-SPI does not tell (as on X11): one region around them,
            # relative to the window as its texts are (the observer places it, or reads the
            # screen's pixels where the window was not found)
            texts.append(RawElement("window text", "", _around(untold), pixels=True))
        return [*(replace(text, relative=relative) for text in texts), *more]

    def _unplaced(self, limits: WalkLimits) -> list[RawElement]:
        """The texts of a screen whose active window has no place the observer can find:
        nothing when it is this app's own (as on X11); else the screen's pixels. So a program
        not on the bus (the model sees its pixels all the same), a menu bar's menu open (GTK
        leaves no top-level active then), a window whose process is not known, and one the
        list gave no control of (cut before it found the window or its first control, or a
        window with none: its boxes would be read as the screen's) are read by OCR."""
        if any(top.active and top.own for top in self._tops(limits)):
            return []
        return [RawElement("window text", "", SCREEN, pixels=True)]

    def _cut(self, limits: WalkLimits) -> bool:
        """Whether a walk or read since `late` was cleared may have been cut: it ended at or
        past the deadline, or a batch timed out (a hung application)."""
        return self.late or limits.expired()

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
