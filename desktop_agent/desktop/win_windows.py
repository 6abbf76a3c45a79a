"""Windows: the top-level windows in z-order with this process's own marked, from user32.

The gate reads the app's own windows again at action time (DesktopObserver.own_windows_now).
Through UI Automation that read missed its deadline under load (and then refused nothing),
skipped untitled windows (Qt's menus and popups) and saw only the desktop's direct children.
EnumWindows lists every top-level window, topmost first ("EnumWindows function (winuser.h)":
"The EnumWindows function does not enumerate child windows"; the order is the z-order), and
with GetWindowThreadProcessId, IsWindowVisible and GetWindowRect it neither sends a message
nor crosses into another process: it answers in well under a millisecond. When it fails, the
answer is unknown and the caller refuses. ctypes is used on call; nothing at import.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from desktop_agent.core.own_windows import APP_NAME
from desktop_agent.desktop.inventory.base import RawElement

GWL_EXSTYLE = -20
#: a click-through window (overlays): what is under it gets the click, so it covers nothing
WS_EX_TRANSPARENT = 0x00000020
#: DwmGetWindowAttribute: nonzero for a window DWM does not draw though it is "visible" (on
#: another virtual desktop, a suspended Store app's frame) — it covers nothing either
DWMWA_CLOAKED = 14


class RECT(ctypes.Structure):
    _fields_ = (
        ("left", ctypes.c_int32),
        ("top", ctypes.c_int32),
        ("right", ctypes.c_int32),
        ("bottom", ctypes.c_int32),
    )


#: BOOL CALLBACK EnumWindowsProc(HWND, LPARAM); stdcall is the only x64 convention
ENUM_PROC = getattr(ctypes, "WINFUNCTYPE", ctypes.CFUNCTYPE)(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_ssize_t
)


def _covers(windll: Any, window: int) -> bool:
    """Whether another program's visible window takes the clicks on its rectangle: not a
    click-through overlay, not cloaked (a failed DWM answer: it counts as not covering, so
    our window under it stays refused)."""
    style = int(windll.user32.GetWindowLongW(ctypes.c_void_p(window), GWL_EXSTYLE))
    if style & WS_EX_TRANSPARENT:
        return False
    cloaked = ctypes.c_uint32()
    done = windll.dwmapi.DwmGetWindowAttribute(
        ctypes.c_void_p(window), DWMWA_CLOAKED, ctypes.byref(cloaked), ctypes.sizeof(cloaked)
    )
    return done == 0 and not cloaked.value


def top_level_windows(windll: Any) -> list[RawElement]:
    """The visible top-level windows, topmost first, as RawElements (`own`: this process's);
    OSError when they cannot be listed, or an own window's rectangle cannot be read."""
    user32 = windll.user32
    me = os.getpid()
    user32.GetForegroundWindow.restype = ctypes.c_void_p
    foreground = user32.GetForegroundWindow() or 0
    handles: list[int] = []

    def listed(window: int | None, _: int) -> int:
        handles.append(int(window or 0))
        return 1

    callback = ENUM_PROC(listed)
    if not user32.EnumWindows(callback, 0):
        raise OSError(f"EnumWindows failed (Windows error {windll.last_error()})")
    found = []
    for window in handles:
        handle = ctypes.c_void_p(window)
        if not user32.IsWindowVisible(handle):
            continue
        pid = ctypes.c_uint32()
        user32.GetWindowThreadProcessId(handle, ctypes.byref(pid))
        own = pid.value == me
        if not own and not _covers(windll, window):
            continue
        rect = RECT()
        if not user32.GetWindowRect(handle, ctypes.byref(rect)):
            if own:
                raise OSError(f"GetWindowRect of the app's window {window:#x} failed")
            continue  # another program's window that closed meanwhile
        width, height = rect.right - rect.left, rect.bottom - rect.top
        if width <= 0 or height <= 0:
            continue
        found.append(
            RawElement(
                role="window",
                name=APP_NAME if own else "",
                rect=(rect.left, rect.top, width, height),
                focused=window == foreground,
                own=own,
            )
        )
    return found


def system_windll() -> Any:
    """The system DLLs, last errors kept (win_messages.SystemDlls)."""
    from desktop_agent.desktop.win_messages import windll

    return windll()


#: GetAncestor's flag for the root window: the top-level window a child window is in
#: (winuser.h GA_ROOT)
GA_ROOT = 2


class POINT(ctypes.Structure):
    _fields_ = (("x", ctypes.c_int32), ("y", ctypes.c_int32))


class Win32WindowAtPoint:
    """What holds a screen point now on Windows, as the executor compares it between the
    clicks of a double or triple click (executor.WindowAtPoint), from user32: WindowFromPoint
    gives the window at the point (a child control too; "does not retrieve a handle to a
    hidden or disabled window", learn.microsoft.com, "WindowFromPoint function": a modal
    dialog that disabled its owner changes what it gives), GetAncestor(GA_ROOT) the
    top-level window it is in. No message is sent, nothing crosses into another process.
    None when it cannot be told (no window there, a failed call). Physical pixels: the app
    is per-monitor DPI aware (win32.py), as pyautogui's points are."""

    def __init__(self, windll: Any | None = None) -> None:
        self._windll = windll
        #: user32 with the two prototypes set, loaded at the first read (on the input thread)
        self._user32: Any = None

    def _loaded(self) -> Any:
        if self._user32 is None:
            user32 = (self._windll or system_windll()).user32
            user32.WindowFromPoint.argtypes = (POINT,)
            user32.WindowFromPoint.restype = ctypes.c_void_p
            user32.GetAncestor.argtypes = (ctypes.c_void_p, ctypes.c_uint)
            user32.GetAncestor.restype = ctypes.c_void_p
            self._user32 = user32
        return self._user32

    def __call__(self, x: int, y: int) -> str | None:
        try:
            user32 = self._loaded()
            window = user32.WindowFromPoint(POINT(x, y))
            if not window:
                return None
            root = user32.GetAncestor(window, GA_ROOT)
        except Exception:  # noqa: BLE001 - no user32 (not Windows), a ctypes fault: not known
            return None
        return f"win32:{int(root or window):#x}"

    def close(self) -> None:
        """Nothing to let go: user32 holds no connection of ours."""
