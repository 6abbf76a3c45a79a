"""A fake of the calls that tell a window's process integrity level, as Windows answers them
to a standard (medium-integrity) process (learn.microsoft.com, winuser.h / processthreadsapi.h
/ securitybaseapi.h):

- GetForegroundWindow answers the window in front, NULL "in certain circumstances, such as
  when a window is losing activation"; GetWindowThreadProcessId fills the window's pid.
- OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, ...) answers a handle (0 for no such
  process); GetCurrentProcess answers the pseudo-handle -1.
- OpenProcessToken(process, TOKEN_QUERY, &token) fails (0, ERROR_ACCESS_DENIED) for an
  elevated process's token when the caller is not elevated (the token's DACL grants
  SYSTEM and Administrators, which a filtered token holds deny-only); `readable=False`.
- GetTokenInformation(token, TokenIntegrityLevel, buffer, size, &needed) writes a
  TOKEN_MANDATORY_LABEL whose Label.Sid points at the SID written right after it in the same
  buffer: S-1-16-<rid> (revision 1, one sub-authority, authority 16); the
  SECURITY_MANDATORY_*_RID is that sub-authority ("TOKEN_MANDATORY_LABEL structure").
- SendInput answers the number of events inserted, all of them, also when UIPI dropped them
  ("neither GetLastError nor the return value will indicate the failure was due to UIPI
  blocking"): `send_input` records what was sent and what reached the window in front.
"""

from __future__ import annotations

import ctypes
import os
import types
from dataclasses import dataclass, field
from typing import Any

from tests.unit.desktop.fake_windows import Function

MEDIUM, HIGH, SYSTEM = 0x2000, 0x3000, 0x4000
ERROR_ACCESS_DENIED = 5


@dataclass
class Process:
    rid: int
    readable: bool = True


@dataclass
class FakeIntegrity:
    #: window handle → pid
    windows: dict[int, int] = field(default_factory=dict)
    #: pid → its process; ours is os.getpid() at medium integrity
    processes: dict[int, Process] = field(default_factory=dict)
    foreground: int = 0
    sent: list[Any] = field(default_factory=list)
    reached: list[Any] = field(default_factory=list)
    opened: int = 0

    def __post_init__(self) -> None:
        self.processes.setdefault(os.getpid(), Process(MEDIUM))
        self._handles: dict[int, int] = {}
        self.user32 = self._functions("GetForegroundWindow", "GetWindowThreadProcessId")
        self.kernel32 = self._functions(
            "OpenProcess", "GetCurrentProcess", "CloseHandle", "GetLastError"
        )
        self.advapi32 = self._functions("OpenProcessToken", "GetTokenInformation")
        self._error = 0

    def _functions(self, *names: str) -> types.SimpleNamespace:
        return types.SimpleNamespace(**{name: Function(getattr(self, name)) for name in names})

    def window(self, hwnd: int, pid: int, rid: int, readable: bool = True) -> None:
        self.windows[hwnd] = pid
        self.processes[pid] = Process(rid, readable)

    # -- user32 ------------------------------------------------------------------------------

    def GetForegroundWindow(self) -> int:  # noqa: N802
        return self.foreground

    def GetWindowThreadProcessId(self, hwnd: Any, pid_ref: Any) -> int:  # noqa: N802
        pid = self.windows.get(int(getattr(hwnd, "value", hwnd) or 0), 0)
        pid_ref._obj.value = pid
        return 1 if pid else 0

    def send_input(self, inputs: Any) -> int:
        """SendInput: every event counted as inserted; it reaches the window in front only when
        that window's process is at or below our integrity level (UIPI)."""
        events = list(inputs)
        self.sent.extend(events)
        front = self.processes.get(self.windows.get(self.foreground, 0))
        if front is not None and front.rid <= self.processes[os.getpid()].rid:
            self.reached.extend(events)
        return len(events)

    # -- kernel32 -----------------------------------------------------------------------------

    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int:  # noqa: N802
        assert access == 0x1000  # PROCESS_QUERY_LIMITED_INFORMATION is all that is asked
        if pid not in self.processes:
            return 0
        self.opened += 1
        handle = 0x500 + 4 * self.opened
        self._handles[handle] = pid
        return handle

    def GetCurrentProcess(self) -> int:  # noqa: N802
        return -1 & 0xFFFFFFFFFFFFFFFF

    def CloseHandle(self, handle: Any) -> int:  # noqa: N802
        value = getattr(handle, "value", handle)
        return 1 if self._handles.pop(int(value or 0), None) is not None else 0

    def GetLastError(self) -> int:  # noqa: N802
        return self._error

    # -- advapi32 -----------------------------------------------------------------------------

    def _pid_of(self, handle: Any) -> int:
        value = int(getattr(handle, "value", handle) or 0)
        if value == -1 & 0xFFFFFFFFFFFFFFFF:
            return os.getpid()
        return self._handles[value]

    def OpenProcessToken(self, process: Any, access: int, token_ref: Any) -> int:  # noqa: N802
        pid = self._pid_of(process)
        if not self.processes[pid].readable:
            self._error = ERROR_ACCESS_DENIED
            return 0
        self.opened += 1
        handle = 0x900 + 4 * self.opened
        self._handles[handle] = pid
        token_ref._obj.value = handle
        return 1

    def GetTokenInformation(  # noqa: N802
        self, token: Any, kind: int, buffer: Any, size: int, needed_ref: Any
    ) -> int:
        assert kind == 25  # TokenIntegrityLevel
        rid = self.processes[self._handles[int(token.value)]].rid
        label = ctypes.sizeof(ctypes.c_void_p) + 8  # SID_AND_ATTRIBUTES, padded (16 on x64)
        sid = bytes([1, 1, 0, 0, 0, 0, 0, 16]) + rid.to_bytes(4, "little")
        needed_ref._obj.value = label + len(sid)
        if size < label + len(sid):
            return 0
        start = ctypes.addressof(buffer)
        ctypes.c_void_p.from_address(start).value = start + label
        ctypes.c_uint32.from_address(start + ctypes.sizeof(ctypes.c_void_p)).value = 0x60
        ctypes.memmove(start + label, sid, len(sid))
        return 1
