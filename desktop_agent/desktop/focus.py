"""The focused control's role at action time (the core's FocusProbe), on the inventory thread.

First, on every backend: `OWN_WINDOW_ROLE` when the active window is one of this app's own
(X11: WM_CLASS `desktop-agent`; Windows: made by this process or titled "Desktop Agent…";
Wayland, which lists no windows: the active AT-SPI frame's application is this process):
keys sent now would reach the app's controls, whatever the turn's observation showed.
AT-SPI: the role name of the focused accessible of the active window ("password text",
"terminal", "text", ...). UI Automation: "password text" when IsPassword, "terminal" for a
console window, else the control type ("edit"). The X11 window list knows no controls: None.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from desktop_agent.core.call_risk import is_terminal_window
from desktop_agent.core.own_windows import OWN_WINDOW_ROLE
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


def uia_focused_role(auto: Any) -> str | None:
    """UI Automation: the focused control's kind, in the AT-SPI role names the core knows."""
    control = auto.GetFocusedControl()
    if control is None:
        return None
    if control.IsPassword:
        return "password text"
    top = control.GetTopLevelControl() if hasattr(control, "GetTopLevelControl") else None
    if top is not None and top.ClassName in _CONSOLE_CLASSES:
        return "terminal"
    kind = str(control.ControlTypeName or "")
    return kind.removesuffix("Control").lower() or None


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


def backend_focused_role(backend: Any, deadline: float) -> str | None:
    """Runs on the inventory thread: dispatch on the backend that lists the elements. A
    control the backend cannot tell (the window list alone; a terminal with no AT-SPI, as
    xterm) in a window whose title or class names a terminal is a terminal: the window is
    read now, at action time, where the turn's window list may be older."""
    active = active_x11_window(backend)
    if own_window_active(backend, active):
        return OWN_WINDOW_ROLE
    role: str | None = None
    if backend.name == "atspi":
        role = backend.focused_role(deadline)
    elif backend.name == "uia":
        role = uia_focused_role(backend._auto)
    if role is None and active is not None and is_terminal_window(active.label):
        return "terminal"
    return role


class DesktopFocusProbe:
    """FocusProbe over an inventory runner: asks on its thread, gives up at its deadline."""

    def __init__(self, inventory: InventoryRunner, *, timeout_s: float = PROBE_TIMEOUT_S) -> None:
        self.inventory = inventory
        self.timeout_s = timeout_s

    async def focused_role(self) -> str | None:
        deadline = time.monotonic() + self.timeout_s
        try:
            return await self.inventory.run(
                backend_focused_role, deadline, timeout_s=self.timeout_s + 0.05
            )
        except TimeoutError:
            log.warning("the focused control did not answer within %.0f ms", self.timeout_s * 1e3)
            return None
        except Exception as error:  # noqa: BLE001 - a D-Bus/COM fault: the role is unknown
            log.warning("cannot tell the focused control: %s", error)
            return None
