"""The X11 window list through EWMH (python-xlib): titles, classes, frames, the active window."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from desktop_agent.desktop.inventory.base import (
    APP_NAME,
    NoSuchWindow,
    RawElement,
    WalkLimits,
    clean_name,
)

log = logging.getLogger(__name__)

_SKIPPED_TYPES = ("_NET_WM_WINDOW_TYPE_DOCK", "_NET_WM_WINDOW_TYPE_DESKTOP")


def is_own_class(wm_class: Any) -> bool:
    """Whether a WM_CLASS (instance, class) is this app's (`desktop-agent`, app.py)."""
    if not wm_class:
        return False
    return any(str(name).casefold() == APP_NAME for name in wm_class)


@dataclass(frozen=True, slots=True)
class WindowInfo:
    id: int
    title: str
    wm_class: str
    rect: tuple[int, int, int, int]
    active: bool
    #: one of this app's own windows (WM_CLASS `desktop-agent`): never listed to the model,
    #: never a target of input (core/own_windows.py)
    own: bool = False

    @property
    def label(self) -> str:
        """The title, with the program's class when the title does not end with it (a
        terminal titled "~/kitty pictures" is still "… — kitty": core/call_risk.py matches
        a terminal's name that is also a word only where the class stands)."""
        if not self.title:
            return self.wm_class
        if self.wm_class and not self.title.lower().endswith(self.wm_class.lower()):
            return f"{self.title} — {self.wm_class}"
        return self.title


class X11Windows:
    """EWMH queries and window activation on one X connection (use it from one thread)."""

    def __init__(self, display_name: str | None = None) -> None:
        self._display_name = display_name
        self._display: Any = None
        self._atoms: dict[str, int] = {}

    def _dpy(self) -> Any:
        if self._display is None:
            name = self._display_name or os.environ.get("DISPLAY")
            if not name:
                raise LookupError("no X display: DISPLAY is not set")
            from Xlib import display

            self._display = display.Display(name)
        return self._display

    def _atom(self, name: str) -> int:
        if name not in self._atoms:
            self._atoms[name] = self._dpy().intern_atom(name)
        return self._atoms[name]

    def _prop(self, window: Any, name: str) -> Any:
        from Xlib import X, error

        try:
            prop = window.get_full_property(self._atom(name), X.AnyPropertyType)
        except (error.BadWindow, error.BadMatch):
            return None
        return prop.value if prop is not None else None

    def active_id(self) -> int | None:
        value = self._prop(self._dpy().screen().root, "_NET_ACTIVE_WINDOW")
        return int(value[0]) if value is not None and len(value) and value[0] else None

    def client_ids(self) -> list[int]:
        """Managed windows, topmost first."""
        root = self._dpy().screen().root
        stacking = self._prop(root, "_NET_CLIENT_LIST_STACKING")
        if stacking is not None:
            return [int(w) for w in reversed(stacking)]
        clients = self._prop(root, "_NET_CLIENT_LIST")
        return [int(w) for w in clients] if clients is not None else []

    def client_pids(self) -> set[int]:
        """The process ids the managed windows say are theirs (_NET_WM_PID; a window that
        does not say is left out)."""
        pids = set()
        for window_id in self.client_ids():
            window = self._dpy().create_resource_object("window", window_id)
            value = self._prop(window, "_NET_WM_PID")
            if value is not None and len(value):
                pids.add(int(value[0]))
        return pids

    def info(self, window_id: int, active: int | None = None) -> WindowInfo | None:
        """Title, class and frame rectangle of a visible window; None if hidden or gone."""
        from Xlib import X, error

        dpy = self._dpy()
        window = dpy.create_resource_object("window", window_id)
        try:
            attributes = window.get_attributes()
            if attributes.map_state != X.IsViewable:
                return None
            types = self._prop(window, "_NET_WM_WINDOW_TYPE")
            if types is not None and any(self._atom(t) in types for t in _SKIPPED_TYPES):
                return None
            state = self._prop(window, "_NET_WM_STATE")
            if state is not None and self._atom("_NET_WM_STATE_HIDDEN") in state:
                return None
            geometry = window.get_geometry()
            origin = dpy.screen().root.translate_coords(window, 0, 0)
            title = self._prop(window, "_NET_WM_NAME")
            if title is None:
                title = self._prop(window, "WM_NAME")
            wm_class = window.get_wm_class()
        except (error.BadWindow, error.BadDrawable, error.BadMatch):
            return None
        if isinstance(title, bytes):
            title = title.decode("utf-8", "replace")
        left, right, top, bottom = self._prop(window, "_NET_FRAME_EXTENTS") or (0, 0, 0, 0)
        rect = (
            origin.x - left,
            origin.y - top,
            geometry.width + left + right,
            geometry.height + top + bottom,
        )
        return WindowInfo(
            id=window_id,
            title=clean_name(title or ""),
            wm_class=wm_class[1] if wm_class else "",
            rect=rect,
            active=window_id == active,
            own=is_own_class(wm_class),
        )

    def _top_children(
        self, limits: WalkLimits | None, pick: Callable[[Any, Any], WindowInfo | None]
    ) -> list[WindowInfo]:
        """What `pick(window, its attributes)` makes of each child of the root, topmost first
        (None: not one of them), until `limits` expire; a window gone meanwhile is passed
        over."""
        from Xlib import error
        from Xlib.protocol import request

        dpy = self._dpy()
        root = dpy.screen().root
        children = list(reversed(root.query_tree().children))  # bottom to top, reversed
        # every child's attributes asked at once, the replies read after: one round trip for
        # the whole tree instead of one per window (a desktop has dozens to hundreds)
        asked = [
            request.GetWindowAttributes(display=dpy.display, defer=True, window=child)
            for child in children
        ]
        found = []
        for child, attributes in zip(children, asked, strict=True):
            if limits is not None and limits.expired():
                break
            try:
                attributes.reply()
                info = pick(child, attributes)
            except (error.BadWindow, error.BadDrawable, error.BadMatch):
                continue
            if info is not None:
                found.append(info)
        return found

    def own_popups(self, limits: WalkLimits | None = None) -> list[WindowInfo]:
        """This app's mapped override-redirect windows (menus: the tray menu, a context menu),
        topmost first: no window manager lists them, and they lie above every managed one."""
        from Xlib import X

        def popup(child: Any, attributes: Any) -> WindowInfo | None:
            if not attributes.override_redirect or attributes.map_state != X.IsViewable:
                return None
            if not is_own_class(child.get_wm_class()):
                return None
            geometry = child.get_geometry()
            rect = (geometry.x, geometry.y, geometry.width, geometry.height)
            return WindowInfo(child.id, "menu", APP_NAME, rect, active=False, own=True)

        return self._top_children(limits, popup)

    def notifications(self, limits: WalkLimits | None = None) -> list[WindowInfo]:
        """The mapped notification windows (_NET_WM_WINDOW_TYPE_NOTIFICATION: dunst,
        xfce4-notifyd), topmost first: their daemons draw them unmanaged and most have no
        accessible text, so the observer reads them by OCR."""
        from Xlib import X

        notification = self._atom("_NET_WM_WINDOW_TYPE_NOTIFICATION")

        def shown(child: Any, attributes: Any) -> WindowInfo | None:
            if attributes.map_state != X.IsViewable:
                return None
            types = self._prop(child, "_NET_WM_WINDOW_TYPE")
            if types is None or notification not in types:
                return None
            geometry = child.get_geometry()
            wm_class = child.get_wm_class()
            rect = (geometry.x, geometry.y, geometry.width, geometry.height)
            label = wm_class[1] if wm_class else "notification"
            return WindowInfo(child.id, label, label, rect, active=False)

        return self._top_children(limits, shown)

    def windows(self, limits: WalkLimits | None = None) -> list[WindowInfo]:
        active = self.active_id()
        found = []
        for window_id in self.client_ids():
            if limits is not None and limits.expired():
                break
            info = self.info(window_id, active)
            if info is not None:
                found.append(info)
        return found

    def find(self, title: str) -> WindowInfo | None:
        """The topmost visible window whose title (or class) contains `title`, any case; never
        one of this app's own windows."""
        wanted = title.casefold()
        for window in self.windows():
            if window.own:
                continue
            if wanted in window.title.casefold() or wanted == window.wm_class.casefold():
                return window
        return None

    def activate(self, window_id: int, *, timeout: float = 1.0) -> bool:
        """Ask the window manager to raise and focus the window; True once it is active."""
        from Xlib import X, protocol

        dpy = self._dpy()
        root = dpy.screen().root
        window = dpy.create_resource_object("window", window_id)
        if not self._prop(root, "_NET_SUPPORTING_WM_CHECK"):
            # no EWMH window manager: focus it ourselves
            window.raise_window()
            window.set_input_focus(X.RevertToParent, X.CurrentTime)
            dpy.sync()
            return True
        event = protocol.event.ClientMessage(
            window=window,
            client_type=self._atom("_NET_ACTIVE_WINDOW"),
            data=(32, [2, X.CurrentTime, 0, 0, 0]),  # 2: asked for by a pager-like tool
        )
        root.send_event(event, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        dpy.flush()
        return _wait(lambda: self.active_id() == window_id, timeout)

    def window_at(self, x: int, y: int) -> int:
        """The id of the top-level window that holds the root point `x`, `y` (a window
        manager's frame, an override-redirect popup), 0 for the bare root: one round trip
        (XTranslateCoordinates gives the root's mapped child there)."""
        root = self._dpy().screen().root
        child = root.translate_coords(root, x, y).child
        return int(getattr(child, "id", child))

    def close(self) -> None:
        if self._display is not None:
            self._display.close()
            self._display = None


class X11WindowAtPoint:
    """What holds a screen point now, as the executor compares it between the clicks of a
    double or triple click (`WindowAtPoint`): the top-level window there, on an X connection
    of its own, used from one thread (the input thread). None when it cannot be read (no
    display, a broken connection: opened anew at the next read)."""

    def __init__(self, display_name: str | None = None) -> None:
        self._display_name = display_name
        self._windows = X11Windows(display_name)

    def __call__(self, x: int, y: int) -> str | None:
        try:
            return f"x11:{self._windows.window_at(x, y)}"
        except Exception as error:  # noqa: BLE001 - no display, an X error: not known
            log.debug("the window at (%d, %d) could not be read: %s", x, y, error)
            self.close()
            return None

    def close(self) -> None:
        windows, self._windows = self._windows, X11Windows(self._display_name)
        try:
            windows.close()
        except Exception:  # noqa: BLE001 - a connection already broken: nothing to let go
            log.debug("the window-at-point connection was broken at its close", exc_info=True)


def _wait(condition: Callable[[], bool], timeout: float, interval: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
    return True


def window_elements(windows: list[WindowInfo]) -> list[RawElement]:
    """The windows as elements, in their order (topmost first); this app's own are marked."""
    return [
        RawElement(
            role="window",
            name=window.label,
            rect=window.rect,
            focused=window.active,
            own=window.own,
            native=("x11", window.id),
        )
        for window in windows
    ]


def notification_elements(
    windows: X11Windows, limits: WalkLimits | None = None
) -> list[RawElement]:
    """The notification windows as `pixels` regions (role "notification"); none when they
    cannot be listed."""
    try:
        found = windows.notifications(limits)
    except Exception as error:  # noqa: BLE001 - X errors of a window that closed meanwhile
        log.debug("notification windows not listed: %s", error)
        return []
    return [
        RawElement("notification", "", w.rect, pixels=True, native=("x11", w.id)) for w in found
    ]


def listed_windows(windows: X11Windows, limits: WalkLimits | None = None) -> list[WindowInfo]:
    """The managed windows topmost first, under this app's own popup menus (which lie above
    them all); a failure to list the popups only leaves them out."""
    managed = windows.windows(limits)
    try:
        popups = windows.own_popups(limits)
    except Exception as error:  # noqa: BLE001 - X errors of a menu that closed meanwhile
        log.debug("own popup windows not listed: %s", error)
        popups = []
    return [*popups, *managed]


class X11Inventory:
    """The window list alone: what the model gets when AT-SPI is not available."""

    name = "x11"

    def __init__(self, reason: str = "") -> None:
        #: why a richer backend is not used (shown by the doctor)
        self.reason = reason
        self.windows = X11Windows()

    def thread_init(self) -> None:
        return None

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        listed = window_elements(listed_windows(self.windows, limits))[: limits.max_elements]
        return [*listed, *notification_elements(self.windows, limits)], "x11"

    def invoke(self, native: Any) -> str:
        raise LookupError("invoke needs the accessibility tree (AT-SPI); X11 lists windows only")

    def set_value(self, native: Any, value: str) -> str:
        raise LookupError("set_value needs the accessibility tree (AT-SPI); X11 lists windows only")

    def focus(self, native: Any) -> str:
        return focus_x11(self.windows, native)

    def activate_window(self, title: str) -> str:
        return activate_by_title(self.windows, title)

    def close(self) -> None:
        self.windows.close()


def focus_x11(windows: X11Windows, native: Any) -> str:
    if not (isinstance(native, tuple) and native[0] == "x11"):
        raise LookupError("that element is not a window")
    info = windows.info(native[1])
    if info is None:
        raise LookupError("that window is gone or hidden")
    if not windows.activate(info.id):
        raise LookupError(f'the window manager did not activate "{info.label}"')
    return f'focused window "{info.label}"'


def activate_by_title(windows: X11Windows, title: str) -> str:
    info = windows.find(title)
    if info is None:
        others = [w for w in windows.windows() if not w.own]
        titles = ", ".join(f'"{w.label}"' for w in others[:8]) or "none"
        raise NoSuchWindow(f"no window titled {title!r}; open windows: {titles}")
    if not windows.activate(info.id):
        raise LookupError(f'the window manager did not activate "{info.label}"')
    return f'focused window "{info.label}"'
