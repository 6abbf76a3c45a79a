"""Windows-only helpers (ctypes, winreg), imported lazily: DPI awareness, programs, clipboard."""

from __future__ import annotations

import functools
import logging
import os
import shutil
import sys
import time
from typing import Any

log = logging.getLogger(__name__)

_PER_MONITOR_AWARE_V2 = -4  # DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2
_PROCESS_PER_MONITOR_DPI_AWARE = 2
_CF_UNICODETEXT = 13
_GMEM_MOVEABLE = 0x0002


@functools.cache
def enable_dpi_awareness() -> str:
    """Make this process per-monitor DPI aware, so capture and input both use physical pixels.

    Call it before any window or capture exists (DesktopObserver and DesktopExecutor do). The
    answer names the mode that took effect; a process that already had one keeps it.
    """
    if sys.platform != "win32":
        return "not Windows"
    import ctypes

    windll: Any = ctypes.windll
    try:
        if windll.user32.SetProcessDpiAwarenessContext(ctypes.c_void_p(_PER_MONITOR_AWARE_V2)):
            return "per-monitor v2"
    except (AttributeError, OSError):
        pass
    try:
        if windll.shcore.SetProcessDpiAwareness(_PROCESS_PER_MONITOR_DPI_AWARE) == 0:
            return "per-monitor"
    except (AttributeError, OSError):
        pass
    try:
        if windll.user32.SetProcessDPIAware():
            return "system"
    except (AttributeError, OSError):
        pass
    # E_ACCESSDENIED: awareness was set already (by the manifest, Qt or mss)
    return "set before"


def resolve_program(name: str) -> str | None:
    """A program name as Windows' Run box finds it: PATH with PATHEXT, then App Paths."""
    found = shutil.which(name)
    if found:
        return found
    if sys.platform != "win32" or os.sep in name or "/" in name:
        return None
    import winreg

    exe = name if name.lower().endswith(".exe") else f"{name}.exe"
    for hive in (winreg.HKEY_CURRENT_USER, winreg.HKEY_LOCAL_MACHINE):
        key = rf"SOFTWARE\Microsoft\Windows\CurrentVersion\App Paths\{exe}"
        try:
            with winreg.OpenKey(hive, key) as handle:
                value, _ = winreg.QueryValueEx(handle, "")
        except OSError:
            continue
        path = os.path.expandvars(str(value)).strip('"')
        if os.path.exists(path):
            return path
    return None


class Win32Clipboard:
    """Unicode text on the Windows clipboard through user32 (no extra package)."""

    def _open(self) -> Any:
        import ctypes

        user32: Any = ctypes.windll.user32  # type: ignore[attr-defined]
        for _ in range(20):  # another program may hold it for a moment
            if user32.OpenClipboard(None):
                return user32
            time.sleep(0.01)
        raise OSError("the clipboard is held by another program")

    def get_text(self) -> str | None:
        import ctypes

        user32 = self._open()
        kernel32: Any = ctypes.windll.kernel32  # type: ignore[attr-defined]
        try:
            user32.GetClipboardData.restype = ctypes.c_void_p
            handle = user32.GetClipboardData(_CF_UNICODETEXT)
            if not handle:
                return None
            kernel32.GlobalLock.restype = ctypes.c_void_p
            pointer = kernel32.GlobalLock(ctypes.c_void_p(handle))
            try:
                return ctypes.wstring_at(pointer)
            finally:
                kernel32.GlobalUnlock(ctypes.c_void_p(handle))
        finally:
            user32.CloseClipboard()

    def set_text(self, text: str | None) -> None:
        import ctypes

        user32 = self._open()
        kernel32: Any = ctypes.windll.kernel32  # type: ignore[attr-defined]
        try:
            user32.EmptyClipboard()
            if text is None:
                return
            data = ctypes.create_unicode_buffer(text)
            size = ctypes.sizeof(data)
            kernel32.GlobalAlloc.restype = ctypes.c_void_p
            kernel32.GlobalLock.restype = ctypes.c_void_p
            handle = kernel32.GlobalAlloc(_GMEM_MOVEABLE, size)
            pointer = kernel32.GlobalLock(ctypes.c_void_p(handle))
            ctypes.memmove(pointer, data, size)
            kernel32.GlobalUnlock(ctypes.c_void_p(handle))
            user32.SetClipboardData(_CF_UNICODETEXT, ctypes.c_void_p(handle))
        finally:
            user32.CloseClipboard()
