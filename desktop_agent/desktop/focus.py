"""The focused control's role and place at action time (the core's FocusProbe), on the
inventory thread.

First, on every backend: `OWN_WINDOW_ROLE` when the active window is one of this app's own
(X11: WM_CLASS `desktop-agent`; Windows: made by this process or titled "Desktop Agent…";
Wayland, which lists no windows: the active AT-SPI frame's application is this process):
keys sent now would reach the app's controls, whatever the turn's observation showed.
AT-SPI: the role name of the focused accessible of the active window ("password text",
"terminal", "text", ...). UI Automation: "password text" when IsPassword, "terminal" for a
console window, else the control type ("edit"). The X11 window list knows no controls: None.
The place (`Focus.place`: where the keys go, so that another window or control of the same
role is not taken for the one a person approved) is the active window's X11 id and the focused
accessible's AT-SPI object; UI Automation: the foreground window's handle and the focused
control's runtime id. Wayland lists no windows: the AT-SPI object alone.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from desktop_agent.core.call_risk import is_terminal_window
from desktop_agent.core.own_windows import OWN_WINDOW_ROLE
from desktop_agent.core.ports import Focus
from desktop_agent.desktop.inventory import InventoryRunner

log = logging.getLogger(__name__)

#: the probe's own bound; the loop's deadline (FOCUS_TIMEOUT_S) is the outer one
PROBE_TIMEOUT_S = 0.4
#: window classes of Windows terminals: conhost, Windows Terminal, Git Bash's mintty, ConEmu
#: and cmder (ConEmu's ConEmu.h: VirtualConsoleClassMain), PuTTY
_CONSOLE_CLASSES = frozenset(
    {
        "ConsoleWindowClass",
        "CASCADIA_HOSTING_WINDOW_CLASS",
        "mintty",
        "VirtualConsoleClass",
        "PuTTY",
    }
)


def uia_focus(auto: Any) -> Focus:
    """UI Automation: the focused control's kind, in the AT-SPI role names the core knows,
    and its place (its top-level window's handle and its runtime id)."""
    control = auto.GetFocusedControl()
    if control is None:
        return Focus()
    top = control.GetTopLevelControl() if hasattr(control, "GetTopLevelControl") else None
    place = uia_place(control, top)
    if control.IsPassword:
        return Focus("password text", place)
    if top is not None and top.ClassName in _CONSOLE_CLASSES:
        return Focus("terminal", place)
    kind = str(control.ControlTypeName or "")
    return Focus(kind.removesuffix("Control").lower() or None, place)


def uia_place(control: Any, top: Any) -> str | None:
    """The focused control's place: `uia:<window handle>:<runtime id>` (uiautomation's
    Control.GetRuntimeId, unique among the desktop's live elements); None when the control
    has no runtime id."""
    runtime_id = control.GetRuntimeId() if hasattr(control, "GetRuntimeId") else None
    if not runtime_id:
        return None
    handle = getattr(top, "NativeWindowHandle", 0) or 0
    return f"uia:{handle}:{'.'.join(str(part) for part in runtime_id)}"


def active_x11_window(backend: Any) -> Any:
    """The active window of the backend's X11 window list (AT-SPI's and the window list's
    backends have one), or None."""
    windows = getattr(backend, "windows", None)
    if windows is None or not hasattr(windows, "active_id"):
        return None
    if not getattr(backend, "lists_windows", True):
        return None  # Wayland's: no window list; the backend's own probe says the rest
    active = windows.active_id()
    return windows.info(active, active) if active else None


def own_window_active(backend: Any, active: Any = None) -> bool:
    """Whether the active window is one of this app's own (`active`: the X11 window list's
    active window; else UI Automation's foreground window)."""
    if active is not None:
        return bool(active.own)
    if backend.name == "uia":
        from desktop_agent.desktop.inventory.uia import is_own

        foreground = backend._auto.GetForegroundControl()
        return foreground is not None and is_own(foreground)
    return False


def backend_focus(backend: Any, deadline: float) -> Focus:
    """Runs on the inventory thread: dispatch on the backend that lists the elements. A
    control the backend cannot tell (the window list alone; a terminal with no AT-SPI, as
    xterm) in a window whose title or class names a terminal is a terminal: the window is
    read now, at action time, where the turn's window list may be older. The place is the
    active X11 window's id beside the control's place (either alone where only one is
    known)."""
    active = active_x11_window(backend)
    if own_window_active(backend, active):
        return Focus(OWN_WINDOW_ROLE)
    focus = Focus()
    if backend.name == "atspi":
        focus = backend.focused(deadline)
    elif backend.name == "uia":
        focus = uia_focus(backend._auto)
    role, place = focus.role, focus.place
    if active is not None:
        place = " ".join(part for part in (f"x11:{active.id}", place) if part)
        if role is None and is_terminal_window(active.label):
            role = "terminal"
    return Focus(role, place)


class DesktopFocusProbe:
    """FocusProbe over an inventory runner: asks on its thread, gives up at its deadline."""

    def __init__(self, inventory: InventoryRunner, *, timeout_s: float = PROBE_TIMEOUT_S) -> None:
        self.inventory = inventory
        self.timeout_s = timeout_s

    async def focused(self) -> Focus:
        deadline = time.monotonic() + self.timeout_s
        try:
            return await self.inventory.run(
                backend_focus, deadline, timeout_s=self.timeout_s + 0.05
            )
        except TimeoutError:
            log.warning("the focused control did not answer within %.0f ms", self.timeout_s * 1e3)
            return Focus()
        except Exception as error:  # noqa: BLE001 - a D-Bus/COM fault: the focus is unknown
            log.warning("cannot tell the focused control: %s", error)
            return Focus()
