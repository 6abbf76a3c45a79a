"""Whether a process lives, and since when, as the OS says: the standard library alone.

`desktop-agent stop-all` imports this from a fresh process (instances/stop_all.py) to tell a live
instance from a stale file; store/process.py builds ProcessIdentity on it.
"""

from __future__ import annotations

import os
import sys


def running_since(pid: int) -> str | None:
    """The OS start time of the live process `pid` ("" where it cannot be read); None when
    there is no such process (a zombie counts as gone)."""
    if pid <= 0 or not _pid_alive(pid):
        return None
    started = start_time(pid)
    if started is None and sys.platform.startswith("linux"):
        return None  # it ended between the two looks, or it is a zombie
    return started or ""


def still_running(pid: int, started: str) -> bool:
    """Is the process `pid` that started at `started` still running (and not a later one
    with its pid)? An empty `started` on either side: the pid alone decides."""
    now = running_since(pid)
    if now is None:
        return False
    if started and now:
        return started == now
    return True


def _pid_alive(pid: int) -> bool:
    if sys.platform == "win32":
        return _windows_start_time(pid) is not None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, it belongs to someone else
    except OSError:
        return False
    return True


def start_time(pid: int) -> str | None:
    """The OS start time of `pid` (clock ticks since boot on Linux, a FILETIME on Windows,
    "" elsewhere); None when the process is gone."""
    if sys.platform == "win32":
        return _windows_start_time(pid)
    if sys.platform.startswith("linux"):
        return _linux_start_time(pid)
    return ""


def _linux_start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat; None when the process is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces and ')'.
    fields = text[text.rfind(")") + 2 :].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def _windows_start_time(pid: int) -> str | None:
    """The creation time of a running process; None when it is gone.

    os.kill(pid, 0) would terminate the process on Windows, so this asks
    OpenProcess / GetExitCodeProcess / GetProcessTimes instead.
    """
    if sys.platform != "win32":
        return None
    import ctypes
    from ctypes import wintypes

    query_limited_information = 0x1000
    still_active = 259
    access_denied = 5
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    handle = kernel32.OpenProcess(query_limited_information, False, pid)
    if not handle:
        # A process we may not query still exists; its start time is unknown.
        return "" if ctypes.get_last_error() == access_denied else None
    try:
        code = wintypes.DWORD()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return None
        if code.value != still_active:
            return None
        created, exited, kernel, user = (wintypes.FILETIME() for _ in range(4))
        if not kernel32.GetProcessTimes(
            handle,
            ctypes.byref(created),
            ctypes.byref(exited),
            ctypes.byref(kernel),
            ctypes.byref(user),
        ):
            return ""
        return str((created.dwHighDateTime << 32) | created.dwLowDateTime)
    finally:
        kernel32.CloseHandle(handle)
