"""Windows message-loop plumbing shared by the stop hotkey and the takeover hooks (ctypes).

The structures use fixed-width fields, so they mean the same on any OS (tests build them on
Linux); user32 and kernel32 are looked up when called, never at import.
"""

from __future__ import annotations

import ctypes
from typing import Any

WM_QUIT = 0x0012
WM_USER = 0x0400
PM_NOREMOVE = 0x0000
WM_HOTKEY = 0x0312
#: the takeover hooks' thread: unhook and hook again (WM_APP + 1)
WM_APP_REINSTALL = 0x8001
ERROR_HOTKEY_ALREADY_REGISTERED = 1409


class POINT(ctypes.Structure):
    _fields_ = (("x", ctypes.c_int32), ("y", ctypes.c_int32))


class MSG(ctypes.Structure):
    _fields_ = (
        ("hwnd", ctypes.c_void_p),
        ("message", ctypes.c_uint32),
        ("wParam", ctypes.c_size_t),
        ("lParam", ctypes.c_ssize_t),
        ("time", ctypes.c_uint32),
        ("pt", POINT),
        ("lPrivate", ctypes.c_uint32),
    )


class LASTINPUTINFO(ctypes.Structure):
    _fields_ = (("cbSize", ctypes.c_uint32), ("dwTime", ctypes.c_uint32))


def make_message_queue(user32: Any) -> None:
    """Give the calling thread its message queue now (PeekMessage's documented way): a
    PostThreadMessageW to a thread without one fails, and stop() may post WM_QUIT at once."""
    message = MSG()
    user32.PeekMessageW(ctypes.byref(message), None, WM_USER, WM_USER, PM_NOREMOVE)


def windll() -> Any:
    """ctypes.windll (Windows only; tests put a fake in its place)."""
    return getattr(ctypes, "windll")  # noqa: B009 - absent off Windows


def last_input_tick(user32: Any) -> int | None:
    """GetLastInputInfo: the tick (GetTickCount ms) of the session's last input from any
    device, injected input included; None when the call fails."""
    info = LASTINPUTINFO(cbSize=ctypes.sizeof(LASTINPUTINFO))
    if not user32.GetLastInputInfo(ctypes.byref(info)):
        return None
    return int(info.dwTime)


def tick_after(later: int, earlier: int) -> int:
    """Milliseconds from `earlier` to `later` on the 32-bit tick clock (it wraps at 49.7 days)."""
    delta = (later - earlier) & 0xFFFFFFFF
    return delta - 0x100000000 if delta & 0x80000000 else delta
