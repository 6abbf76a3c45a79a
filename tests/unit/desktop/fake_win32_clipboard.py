"""A fake of the Windows clipboard calls (user32, kernel32) that Win32Clipboard makes, behaving
as Windows documents them (learn.microsoft.com, winuser.h / winbase.h functions):

- OpenClipboard(hwnd) fails (0) while another window holds the clipboard open.
- EmptyClipboard() makes the window given to OpenClipboard the owner; "If an application calls
  OpenClipboard with hwnd set to NULL, EmptyClipboard sets the clipboard owner to NULL; this
  causes SetClipboardData to fail" (OpenClipboard, Remarks).
- SetClipboardData(format, hMem) answers NULL when the clipboard is not open or has no owner;
  on success the system owns hMem.
- GetClipboardData answers NULL for a format the clipboard does not hold.
- GlobalAlloc/GlobalLock/GlobalUnlock/GlobalFree work on real memory (ctypes buffers), so the
  caller's memmove and wstring_at run for real; `fail` names calls that answer 0.
- CreateWindowExW answers a window handle; DestroyWindow forgets it.
- A failing call sets the thread's last error (`errors`): SetClipboardData without an open
  clipboard or an owner ERROR_CLIPBOARD_NOT_OPEN (1418), a call named in `fail` 5.
- RegisterClipboardFormatW(name) answers the same id (0xC000 and up) for the same name.
- Clipboard history (Win+V) and cloud sync keep the CF_UNICODETEXT of every CloseClipboard
  after a change, unless the data carries "ExcludeClipboardContentFromMonitorProcessing" or
  "CanIncludeInClipboardHistory" holding 0 ("Clipboard Formats", Cloud Clipboard and
  Clipboard History Formats): `history`.
Every function is an object whose `restype`/`argtypes` may be set, as ctypes' are.
"""

from __future__ import annotations

import ctypes
import itertools
import types
from collections.abc import Callable
from typing import Any

from tests.unit.desktop.fake_ctypes import ThreadErrors

CF_UNICODETEXT = 13
ERROR_ACCESS_DENIED, ERROR_CLIPBOARD_NOT_OPEN = 5, 1418


class Function:
    """A stand-in for a ctypes foreign function: callable, with settable attributes."""

    def __init__(self, body: Callable[..., Any]) -> None:
        self.body = body
        self.restype: Any = ctypes.c_int
        self.argtypes: Any = None

    def __call__(self, *args: Any) -> Any:
        return self.body(*(getattr(arg, "value", arg) for arg in args))


class FakeWindowsClipboard:
    def __init__(self, text: str | None = None) -> None:
        self._handles = itertools.count(0x1000)
        self.memory: dict[int, ctypes.Array[ctypes.c_char]] = {}
        self.data: dict[int, int] = {}
        self.windows: set[int] = set()
        self.open_by: int | None | bool = False  # False: closed; None: opened with no window
        self.owner: int | None = None
        self.other_program_holds = False
        self.fail: set[str] = set()
        self.calls: list[str] = []
        self.formats: dict[str, int] = {}
        self.history: list[str | None] = []
        self._changed = False
        #: the thread's last error, and ctypes' copy of it (fake_ctypes.py)
        self.errors = ThreadErrors()
        if text is not None:
            self.data[CF_UNICODETEXT] = self._alloc_text(text)
        functions: dict[str, Callable[..., Any]] = {
            "OpenClipboard": self.OpenClipboard,
            "CloseClipboard": self.CloseClipboard,
            "EmptyClipboard": self.EmptyClipboard,
            "SetClipboardData": self.SetClipboardData,
            "GetClipboardData": self.GetClipboardData,
            "CreateWindowExW": self.CreateWindowExW,
            "DestroyWindow": self.DestroyWindow,
            "RegisterClipboardFormatW": self.RegisterClipboardFormatW,
        }
        self.user32 = types.SimpleNamespace(**{k: Function(v) for k, v in functions.items()})
        memory: dict[str, Callable[..., Any]] = {
            "GlobalAlloc": self.GlobalAlloc,
            "GlobalLock": self.GlobalLock,
            "GlobalUnlock": self.GlobalUnlock,
            "GlobalFree": self.GlobalFree,
            "GetLastError": self.errors.get,
        }
        self.kernel32 = types.SimpleNamespace(**{k: Function(v) for k, v in memory.items()})

    # -- helpers --------------------------------------------------------------------------

    def _alloc_text(self, text: str) -> int:
        data = ctypes.create_unicode_buffer(text)
        handle = self.GlobalAlloc(2, ctypes.sizeof(data))
        ctypes.memmove(self.memory[handle], data, ctypes.sizeof(data))
        return handle

    def text(self) -> str | None:
        handle = self.data.get(CF_UNICODETEXT)
        return None if handle is None else ctypes.wstring_at(ctypes.addressof(self.memory[handle]))

    def _failing(self, name: str) -> bool:
        self.calls.append(name)
        if name in self.fail:
            self.errors.set(ERROR_ACCESS_DENIED)
        return name in self.fail

    # -- user32 ---------------------------------------------------------------------------

    def CreateWindowExW(self, *args: Any) -> int:  # noqa: N802
        if self._failing("CreateWindowExW"):
            return 0
        handle = next(self._handles)
        self.windows.add(handle)
        return handle

    def DestroyWindow(self, hwnd: int) -> int:  # noqa: N802
        self.calls.append("DestroyWindow")
        self.windows.discard(hwnd)
        return 1

    def OpenClipboard(self, hwnd: int | None) -> int:  # noqa: N802
        if self._failing("OpenClipboard") or self.other_program_holds or self.open_by is not False:
            return 0
        self.open_by = hwnd
        return 1

    def CloseClipboard(self) -> int:  # noqa: N802
        self.calls.append("CloseClipboard")
        self.open_by = False
        if self._changed and CF_UNICODETEXT in self.data and not self._private():
            self.history.append(self.text())
        self._changed = False
        return 1

    def _private(self) -> bool:
        excluded = self.formats.get("ExcludeClipboardContentFromMonitorProcessing")
        allowed = self.formats.get("CanIncludeInClipboardHistory")
        if excluded in self.data:
            return True
        if allowed in self.data:
            memory = self.memory[self.data[allowed]]
            return ctypes.c_uint32.from_buffer(memory).value == 0
        return False

    def RegisterClipboardFormatW(self, name: str) -> int:  # noqa: N802
        return self.formats.setdefault(name, 0xC000 + len(self.formats))

    def EmptyClipboard(self) -> int:  # noqa: N802
        if self._failing("EmptyClipboard") or self.open_by is False:
            return 0
        self.data.clear()
        self.owner = self.open_by if isinstance(self.open_by, int) else None
        return 1

    def SetClipboardData(self, fmt: int, handle: int) -> int:  # noqa: N802
        if self._failing("SetClipboardData"):
            return 0
        if self.open_by is False or self.owner is None:
            self.errors.set(ERROR_CLIPBOARD_NOT_OPEN)
            return 0
        self.data[fmt] = handle
        self._changed = True
        return handle

    def GetClipboardData(self, fmt: int) -> int:  # noqa: N802
        self.calls.append("GetClipboardData")
        return 0 if self.open_by is False else self.data.get(fmt, 0)

    # -- kernel32 -------------------------------------------------------------------------

    def GlobalAlloc(self, flags: int, size: int) -> int:  # noqa: N802
        if "GlobalAlloc" in self.fail:
            return 0
        handle = next(self._handles)
        self.memory[handle] = ctypes.create_string_buffer(size)
        return handle

    def GlobalLock(self, handle: int) -> int:  # noqa: N802
        if "GlobalLock" in self.fail or handle not in self.memory:
            return 0
        return ctypes.addressof(self.memory[handle])

    def GlobalUnlock(self, handle: int) -> int:  # noqa: N802
        return 0

    def GlobalFree(self, handle: int) -> int:  # noqa: N802
        self.memory.pop(handle, None)
        return 0
