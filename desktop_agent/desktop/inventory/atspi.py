"""The Linux accessibility tree (AT-SPI through pyatspi) of the active window, plus the windows.

pyatspi aborts the whole process (dbind-ERROR) when it cannot reach the accessibility bus, so
`atspi_status()` finds that bus itself first, without ever auto-launching a D-Bus daemon.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections import deque
from typing import Any

from desktop_agent.desktop.inventory.base import RawElement, WalkLimits, clean_name
from desktop_agent.desktop.inventory.x11 import (
    X11Windows,
    activate_by_title,
    focus_x11,
    window_elements,
)

log = logging.getLogger(__name__)

#: AT-SPI role name → the role the model sees; anything else is structure, not listed
ROLES = {
    "push button": "button",
    "toggle button": "toggle",
    "check box": "checkbox",
    "radio button": "radio",
    "menu": "menu",
    "menu item": "menuitem",
    "check menu item": "menuitem",
    "radio menu item": "menuitem",
    "text": "edit",
    "entry": "edit",
    "password text": "edit",
    "combo box": "combobox",
    "list item": "listitem",
    "table cell": "cell",
    "tree item": "treeitem",
    "page tab": "tab",
    "link": "link",
    "slider": "slider",
    "spin button": "spinbutton",
}
#: preferred action names for invoke, in order
INVOKE_ACTIONS = ("click", "press", "activate", "toggle", "open", "jump")
#: D-Bus method timeout (ms): a hung application must not hold the walk for 25 s
CALL_TIMEOUT_MS = 800


def _session_bus_address() -> str | None:
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if address:
        return address
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.exists(os.path.join(runtime, "bus")):
        return f"unix:path={os.path.join(runtime, 'bus')}"
    return None


def _import_atspi() -> tuple[Any, Any, Any, Any]:
    """(pyatspi, Atspi, Gio, GLib). Debian's PyGObject warns (ImportWarning) on Python 3.11
    that its importer lacks exec_module; harmless, so it is not passed on."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ImportWarning)
        import gi

        gi.require_version("Atspi", "2.0")
        import pyatspi
        from gi.repository import Atspi, Gio, GLib
    return pyatspi, Atspi, Gio, GLib


def atspi_status() -> tuple[bool, str]:
    """(usable, why): can this process reach the AT-SPI bus? Never starts a daemon."""
    try:
        _, _, Gio, GLib = _import_atspi()  # noqa: N806 - GObject module names
    except (ImportError, ValueError) as error:
        return False, (
            f"pyatspi is not importable ({error}); install python3-pyatspi gir1.2-atspi-2.0 "
            "and let the venv see /usr/lib/python3/dist-packages"
        )
    if os.environ.get("AT_SPI_BUS_ADDRESS"):
        return True, "AT_SPI_BUS_ADDRESS is set"
    address = _session_bus_address()
    if address is None:
        return False, "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
    try:
        flags = (
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
            | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        )
        bus = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
        try:
            reply = bus.call_sync(
                "org.a11y.Bus",
                "/org/a11y/bus",
                "org.a11y.Bus",
                "GetAddress",
                None,
                GLib.VariantType.new("(s)"),
                Gio.DBusCallFlags.NO_AUTO_START,
                1000,
                None,
            )
        finally:
            bus.close_sync(None)
    except GLib.Error as error:
        return False, (
            f"the AT-SPI bus is not running ({error.message}); "
            "start at-spi-bus-launcher (package at-spi2-core) in the desktop session"
        )
    if not reply.unpack()[0]:
        return False, "the AT-SPI bus launcher gave no bus address"
    return True, "the AT-SPI bus answers"


class AtspiInventory:
    """Top-level windows (X11) and the interactive elements of the active window (AT-SPI)."""

    name = "atspi"

    def __init__(self) -> None:
        self.windows = X11Windows()
        self._pyatspi: Any = None

    def thread_init(self) -> None:
        pyatspi, Atspi, _, _ = _import_atspi()  # noqa: N806 - GObject module name
        Atspi.set_timeout(CALL_TIMEOUT_MS, 15000)
        self._pyatspi = pyatspi

    # -- listing -------------------------------------------------------------------------

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        windows = self.windows.windows(limits)
        elements = window_elements(windows)
        try:
            roots = self._active_roots(windows)
        except Exception as error:  # noqa: BLE001 - any AT-SPI/D-Bus fault: windows only
            log.warning("AT-SPI listing failed, using the window list: %s", error)
            roots = []
        if not roots:
            return elements[: limits.max_elements], "x11"
        elements.extend(self._walk(roots, limits, budget=limits.max_elements - len(elements)))
        return elements[: limits.max_elements], "atspi"

    def _active_roots(self, windows: list[Any]) -> list[Any]:
        """The active frame (and the open popups of its application)."""
        pyatspi = self._pyatspi
        desktop = pyatspi.Registry.getDesktop(0)
        active_title = next((w.title for w in windows if w.active), None)
        candidates: list[tuple[Any, Any]] = []
        for index in range(desktop.childCount):
            app = desktop.getChildAtIndex(index)
            if app is None:
                continue
            for child_index in range(app.childCount):
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

    def _walk(self, roots: list[Any], limits: WalkLimits, budget: int) -> list[RawElement]:
        """Breadth first, so a walk cut short by the deadline still has the outer controls."""
        pyatspi = self._pyatspi
        found: list[RawElement] = []
        queue: deque[tuple[Any, int]] = deque((root, 0) for root in roots)
        visited = 0
        while queue and len(found) < budget and visited < limits.max_nodes:
            if limits.expired():
                log.debug("AT-SPI walk cut at the deadline after %d nodes", visited)
                break
            node, depth = queue.popleft()
            visited += 1
            try:
                states = node.getState()
                if not states.contains(pyatspi.STATE_SHOWING):
                    continue  # nothing under a hidden node shows either (closed menus)
                role_name = node.getRoleName()
                role = ROLES.get(role_name)
                if role is not None and states.contains(pyatspi.STATE_VISIBLE):
                    element = self._element(node, role, role_name, states)
                    if element is not None:
                        found.append(element)
                if depth < limits.max_depth:
                    for index in range(node.childCount):
                        child = node.getChildAtIndex(index)
                        if child is not None:
                            queue.append((child, depth + 1))
            except Exception as error:  # noqa: BLE001 - a node that vanished mid-walk
                log.debug("skipping an AT-SPI node: %s", error)
        return found

    def _element(self, node: Any, role: str, role_name: str, states: Any) -> RawElement | None:
        pyatspi = self._pyatspi
        extents = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        if extents.width <= 0 or extents.height <= 0:
            return None
        if role == "edit" and role_name == "text" and not states.contains(pyatspi.STATE_EDITABLE):
            role = "text"
        return RawElement(
            role=role,
            name=node.name or "",
            rect=(extents.x, extents.y, extents.width, extents.height),
            enabled=states.contains(pyatspi.STATE_ENABLED)
            or states.contains(pyatspi.STATE_SENSITIVE),
            focused=states.contains(pyatspi.STATE_FOCUSED),
            password=role_name == "password text",
            native=("atspi", node),
        )

    # -- actions ---------------------------------------------------------------------------

    def invoke(self, native: Any) -> str:
        node = _accessible(native)
        try:
            action = node.queryAction()
        except NotImplementedError:
            raise LookupError("the element offers no AT-SPI action; use click") from None
        names = [action.getName(index) for index in range(action.nActions)]
        if not names:
            raise LookupError("the element offers no AT-SPI action; use click")
        index = next(
            (names.index(name) for name in INVOKE_ACTIONS if name in names),
            0,
        )
        if not action.doAction(index):
            raise LookupError(f"the element refused its action {names[index]!r}")
        return f"AT-SPI action {names[index]!r}"

    def set_value(self, native: Any, value: str) -> str:
        node = _accessible(native)
        try:
            editable = node.queryEditableText()
        except NotImplementedError:
            editable = None
        if editable is not None:
            if not editable.setTextContents(value):
                raise LookupError("the element refused the new text (read-only?)")
            return "set its text through AT-SPI"
        try:
            numeric = node.queryValue()
        except NotImplementedError:
            raise LookupError("the element has no editable text or value; use type_text") from None
        try:
            numeric.currentValue = float(value)
        except ValueError:
            raise LookupError(f"the element takes a number, not {value!r}") from None
        return "set its value through AT-SPI"

    def focus(self, native: Any) -> str:
        if isinstance(native, tuple) and native[0] == "x11":
            return focus_x11(self.windows, native)
        node = _accessible(native)
        try:
            component = node.queryComponent()
        except NotImplementedError:
            raise LookupError("the element cannot take the focus") from None
        if not component.grabFocus():
            raise LookupError("the element refused the focus")
        return "focused it through AT-SPI"

    def activate_window(self, title: str) -> str:
        return activate_by_title(self.windows, title)

    def close(self) -> None:
        self.windows.close()


def _accessible(native: Any) -> Any:
    if isinstance(native, tuple) and native[0] == "atspi":
        return native[1]
    raise LookupError("that element is a window, not a control; use focus_window or click")
