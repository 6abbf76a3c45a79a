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


class SystemDlls:
    """user32, kernel32, … (any system DLL by its name) as WinDLL objects of their own, loaded
    with use_last_error=True, and `last_error()`: the error ctypes saved right after the
    last call on this thread (Windows only; tests put a fake ctypes.WinDLL in place).

    Not `ctypes.windll`: a separate `kernel32.GetLastError()` call reads the thread's error
    after Python's own work since the failed call, which may have changed it (TlsGetValue
    "calls SetLastError to clear a thread's last error when it succeeds", learn.microsoft.com,
    "TlsGetValue function"); with use_last_error ctypes swaps it into a private copy right
    around each call (CPython Modules/_ctypes/callproc.c, `FUNCFLAG_USE_LASTERROR`), which
    `ctypes.get_last_error()` reads. And `ctypes.windll` is shared by every library of the
    process: the prototypes we set (restype, argtypes) would be theirs, and theirs ours.
    """

    def __getattr__(self, name: str) -> Any:
        dll = getattr(ctypes, "WinDLL")(name, use_last_error=True)  # noqa: B009 - Windows only
        setattr(self, name, dll)
        return dll

    @staticmethod
    def last_error() -> int:
        return int(getattr(ctypes, "get_last_error")())  # noqa: B009 - Windows only


def windll() -> SystemDlls:
    """The system DLLs, with their last errors kept (see SystemDlls)."""
    return SystemDlls()


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
