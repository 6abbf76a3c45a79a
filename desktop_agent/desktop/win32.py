"""Windows-only helpers (ctypes, winreg), imported lazily: DPI awareness, programs, clipboard."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

log = logging.getLogger(__name__)

_PER_MONITOR_AWARE_V2 = -4  # DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2
_PROCESS_PER_MONITOR_DPI_AWARE = 2
_CF_UNICODETEXT = 13
_GMEM_MOVEABLE = 0x0002
_HWND_MESSAGE = -3


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


#: the DLL directory is the process's: two starts at once would each restore the other's "none"
_DLL_DIRECTORY = threading.Lock()
#: GetDllDirectoryW's buffer: a path of up to 32,767 characters and its terminating null
_LONGEST_PATH = 32768


@contextlib.contextmanager
def system_dll_search() -> Iterator[None]:
    """Inside: the DLL search order of a program started now is the system's, not the bundle's.

    PyInstaller's Windows bootloader calls SetDllDirectoryW(sys._MEIPASS), and CreateProcess
    hands the DLL directory to every child: it would load our python311.dll, Qt6*.dll,
    libcrypto… before System32's (PyInstaller's "Common Issues and Pitfalls: Launching
    external programs from the frozen application" asks for SetDllDirectory(NULL) around the
    start). SetDllDirectoryW(NULL) "restores the default search order"; GetDllDirectoryW
    answers the length copied, 0 when none is set (learn.microsoft.com, "SetDllDirectoryW
    function (winbase.h)", "GetDllDirectoryW function (winbase.h)"). The bundle's directory
    comes back afterwards: the app's own lazy imports need it. Not frozen, or not Windows:
    nothing to undo. OSError when the directory cannot be dropped (nothing is started then).
    """
    if sys.platform != "win32" or not getattr(sys, "frozen", False):
        yield
        return
    import ctypes

    from desktop_agent.desktop.win_messages import windll

    dlls = windll()
    kernel32 = dlls.kernel32
    with _DLL_DIRECTORY:
        buffer = ctypes.create_unicode_buffer(_LONGEST_PATH)
        length = int(kernel32.GetDllDirectoryW(_LONGEST_PATH, buffer))
        before = buffer.value if 0 < length < _LONGEST_PATH else None
        if not kernel32.SetDllDirectoryW(None):
            raise _failed(dlls, "SetDllDirectoryW(NULL)")
        try:
            yield
        finally:
            if before is not None and not kernel32.SetDllDirectoryW(before):
                log.warning("cannot restore the bundle's DLL directory %s", before)


def input_idle(process: int) -> bool:
    """Whether a started GUI program is up: WaitForInputIdle with no wait answers 0 once its
    first thread has made its windows and waits for input; WAIT_TIMEOUT while it starts, and
    WAIT_FAILED at once for a console program (no message queue). learn.microsoft.com,
    "WaitForInputIdle function (winuser.h)"."""
    import ctypes

    user32: Any = ctypes.windll.user32  # type: ignore[attr-defined]
    return bool(user32.WaitForInputIdle(ctypes.c_void_p(process), 0) == 0)


#: PATHEXT when the environment has none (cmd's default)
_PATHEXT = (".COM", ".EXE", ".BAT", ".CMD")


def on_path(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """`name` (with each PATHEXT extension unless it has one) in the absolute folders on PATH,
    in order; never in the current directory. shutil.which on Windows looks there first
    ("The current directory takes precedence on Windows", Lib/shutil.py 3.11, whatever
    `path` it is given): a notepad.bat planted in it would be started for `notepad`."""
    source = os.environ if environ is None else environ
    if os.path.dirname(name) or "/" in name:
        return name if os.path.isfile(name) else None
    listed = source.get("PATHEXT") or os.pathsep.join(_PATHEXT)
    extensions = [ext for ext in listed.split(os.pathsep) if ext]  # ";" on Windows
    has_one = any(name.lower().endswith(ext.lower()) for ext in extensions)
    names = [name] if has_one else [name + ext for ext in extensions]
    for folder in source.get("PATH", "").split(os.pathsep):
        folder = folder.strip().strip('"')
        if not folder or not os.path.isabs(folder):
            continue  # "." or a relative entry: the current directory again
        for candidate in names:
            path = os.path.join(folder, candidate)
            if os.path.isfile(path):
                return path
    return None


def resolve_program(name: str) -> str | None:
    """A program name as Windows' Run box finds it: PATH with PATHEXT (`on_path`, never the
    current directory), then App Paths."""
    found = on_path(name)
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
    """Unicode text on the Windows clipboard through user32 (no extra package).

    Use it as a context manager on one thread: it opens the clipboard with a hidden
    (message-only) owner window of its own. With no owner, EmptyClipboard leaves the
    clipboard without one and SetClipboardData then fails (OpenClipboard's documentation);
    every call's result is checked and a failure is an OSError naming the call.
    """

    def __init__(self) -> None:
        self._owner: int | None = None
        self._dlls: Any = None

    def __enter__(self) -> Win32Clipboard:
        import ctypes

        from desktop_agent.desktop.win_messages import windll

        self._dlls = windll()
        user32 = self._dlls.user32
        user32.CreateWindowExW.restype = ctypes.c_void_p
        owner = user32.CreateWindowExW(
            0, "STATIC", None, 0, 0, 0, 0, 0, ctypes.c_void_p(_HWND_MESSAGE), None, None, None
        )
        if not owner:
            raise _failed(self._dlls, "CreateWindowExW (the clipboard's owner window)")
        self._owner = int(owner)
        return self

    def __exit__(self, *exc: object) -> None:
        import ctypes

        if self._owner is not None:
            self._dlls.user32.DestroyWindow(ctypes.c_void_p(self._owner))
            self._owner = None

    def _open(self) -> Any:
        import ctypes

        if self._owner is None:
            raise RuntimeError("Win32Clipboard is used inside `with`")
        user32 = self._dlls.user32
        for _ in range(20):  # another program may hold it for a moment
            if user32.OpenClipboard(ctypes.c_void_p(self._owner)):
                return user32
            time.sleep(0.01)
        raise OSError("the clipboard is held by another program")

    def get_text(self) -> str | None:
        import ctypes

        user32 = self._open()
        kernel32 = self._dlls.kernel32
        try:
            user32.GetClipboardData.restype = ctypes.c_void_p
            handle = user32.GetClipboardData(_CF_UNICODETEXT)
            if not handle:
                return None
            kernel32.GlobalLock.restype = ctypes.c_void_p
            pointer = kernel32.GlobalLock(ctypes.c_void_p(handle))
            if not pointer:
                raise _failed(self._dlls, "GlobalLock")
            try:
                return ctypes.wstring_at(pointer)
            finally:
                kernel32.GlobalUnlock(ctypes.c_void_p(handle))
        finally:
            user32.CloseClipboard()

    def set_text(self, text: str | None) -> None:
        """Put `text` on the clipboard (None: leave it empty), kept out of the clipboard history
        and the cloud clipboard (`_PRIVATE_FORMATS`); OSError naming the call that failed.
        Every set of this app's is the agent's paste or the user's text put back: Win+V
        history and cloud sync would otherwise keep what the agent typed, a password too."""
        import ctypes

        user32 = self._open()
        try:
            if not user32.EmptyClipboard():
                raise _failed(self._dlls, "EmptyClipboard")
            if text is None:
                return
            self._put(user32, _CF_UNICODETEXT, ctypes.create_unicode_buffer(text))
            for name, value in _PRIVATE_FORMATS:
                user32.RegisterClipboardFormatW.restype = ctypes.c_uint
                fmt = user32.RegisterClipboardFormatW(name)
                if not fmt:
                    raise _failed(self._dlls, f"RegisterClipboardFormatW({name})")
                self._put(user32, int(fmt), ctypes.c_uint32(value))
        finally:
            user32.CloseClipboard()

    def _put(self, user32: Any, fmt: int, data: Any) -> None:
        """`data` (a ctypes object) copied into global memory handed to SetClipboardData."""
        import ctypes

        kernel32 = self._dlls.kernel32
        size = ctypes.sizeof(data)
        kernel32.GlobalAlloc.restype = ctypes.c_void_p
        kernel32.GlobalLock.restype = ctypes.c_void_p
        handle = kernel32.GlobalAlloc(_GMEM_MOVEABLE, size)
        if not handle:
            raise _failed(self._dlls, "GlobalAlloc")
        pointer = kernel32.GlobalLock(ctypes.c_void_p(handle))
        if not pointer:
            kernel32.GlobalFree(ctypes.c_void_p(handle))
            raise _failed(self._dlls, "GlobalLock")
        ctypes.memmove(pointer, ctypes.addressof(data), size)
        kernel32.GlobalUnlock(ctypes.c_void_p(handle))
        user32.SetClipboardData.restype = ctypes.c_void_p
        if not user32.SetClipboardData(fmt, ctypes.c_void_p(handle)):
            kernel32.GlobalFree(ctypes.c_void_p(handle))  # still ours when refused
            raise _failed(self._dlls, "SetClipboardData")


#: registered formats that keep clipboard data out of Win+V history, cloud sync and clipboard
#: monitors, with the DWORD each holds (learn.microsoft.com, "Clipboard Formats": "Cloud
#: Clipboard and Clipboard History Formats")
_PRIVATE_FORMATS = (
    ("ExcludeClipboardContentFromMonitorProcessing", 0),
    ("CanIncludeInClipboardHistory", 0),
    ("CanUploadToCloudClipboard", 0),
)


def _failed(dlls: Any, call: str) -> OSError:
    """The failed call named with its error, as ctypes kept it right after the call (a
    GlobalFree since, or the interpreter's work, does not change it: win_messages.SystemDlls)."""
    return OSError(f"{call} failed (Windows error {dlls.last_error()})")
