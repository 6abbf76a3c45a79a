"""Windows: whether our input can reach the foreground window, from process integrity levels.

User Interface Privilege Isolation drops input a process sends to a window of a process of
higher integrity (an elevated program), and SendInput's documentation says so plainly:
"neither GetLastError nor the return value will indicate the failure was due to UIPI
blocking" (learn.microsoft.com, "SendInput function (winuser.h)", Remarks); pyautogui's
`mouse_event` returns nothing at all. So before input the foreground window's process
integrity level is read (GetTokenInformation(TokenIntegrityLevel): a TOKEN_MANDATORY_LABEL
whose SID's last sub-authority is the level, learn.microsoft.com, "TOKEN_MANDATORY_LABEL
structure (winnt.h)"); higher than ours, or not readable (an elevated process's token is
closed to a standard one), is a refusal. ctypes is used on call; nothing at import.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from desktop_agent.core.errors import ToolError

PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
TOKEN_QUERY = 0x0008
TOKEN_INTEGRITY_LEVEL = 25  # TOKEN_INFORMATION_CLASS TokenIntegrityLevel
#: SECURITY_MANDATORY_*_RID (winnt.h)
LEVELS = {0x0000: "untrusted", 0x1000: "low", 0x2000: "medium", 0x2100: "medium-plus",
          0x3000: "high", 0x4000: "system", 0x5000: "protected"}  # fmt: skip
#: a TOKEN_MANDATORY_LABEL and its SID fit in far less (16 + 12 bytes on x64)
_BUFFER = 256


def level_name(rid: int) -> str:
    return LEVELS.get(rid, f"0x{rid:x}")


def _label_rid(buffer: ctypes.Array[ctypes.c_char]) -> int | None:
    """The integrity RID in a TOKEN_MANDATORY_LABEL GetTokenInformation filled: Label.Sid
    points at a SID in the same buffer (Revision, SubAuthorityCount, 6 bytes of authority,
    then the sub-authorities); the level is the last one. None when it does not point there."""
    start = ctypes.addressof(buffer)
    sid = ctypes.c_void_p.from_buffer(buffer).value or 0
    if not start <= sid <= start + len(buffer) - 12:
        return None
    count = ctypes.c_uint8.from_address(sid + 1).value
    last = sid + 8 + 4 * (count - 1)
    if count < 1 or last + 4 > start + len(buffer):
        return None
    return int(ctypes.c_uint32.from_address(last).value)


def _token_rid(windll: Any, process: ctypes.c_void_p) -> int | None:
    advapi32, kernel32 = windll.advapi32, windll.kernel32
    token = ctypes.c_void_p()
    if not advapi32.OpenProcessToken(process, TOKEN_QUERY, ctypes.byref(token)):
        return None
    try:
        buffer = ctypes.create_string_buffer(_BUFFER)
        needed = ctypes.c_uint32()
        if not advapi32.GetTokenInformation(
            token, TOKEN_INTEGRITY_LEVEL, buffer, _BUFFER, ctypes.byref(needed)
        ):
            return None
        return _label_rid(buffer)
    finally:
        kernel32.CloseHandle(token)


def process_rid(windll: Any, pid: int | None) -> int | None:
    """The integrity RID of process `pid` (None: this one), None when it cannot be read."""
    kernel32 = windll.kernel32
    if pid is None:
        kernel32.GetCurrentProcess.restype = ctypes.c_void_p
        return _token_rid(windll, ctypes.c_void_p(kernel32.GetCurrentProcess()))
    kernel32.OpenProcess.restype = ctypes.c_void_p
    handle = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
    if not handle:
        return None
    try:
        return _token_rid(windll, ctypes.c_void_p(handle))
    finally:
        kernel32.CloseHandle(ctypes.c_void_p(handle))


def foreground_refusal(windll: Any, keys: bool = False) -> str | None:
    """Why input would not reach the foreground window (one line), None when it would.
    `keys`: keyboard input, which is refused into the app's own window in front too (the
    gate's focus probe reads it through UI Automation, which may not answer in time)."""
    user32 = windll.user32
    user32.GetForegroundWindow.restype = ctypes.c_void_p
    window = user32.GetForegroundWindow()
    if not window:
        return "no window is in front (Windows is switching windows, or a secure desktop shows)"
    pid = ctypes.c_uint32()
    user32.GetWindowThreadProcessId(ctypes.c_void_p(window), ctypes.byref(pid))
    if pid.value == os.getpid():
        if keys:
            return (
                "the app's own window is in front: the agent may not type into its own "
                "controls (click the window to type into first)"
            )
        return None
    theirs = process_rid(windll, pid.value)
    ours = process_rid(windll, None)
    if theirs is None or ours is None:
        return (
            f"the window in front (process {pid.value}) may run as administrator: its integrity "
            "level cannot be read, and Windows drops input into a more privileged program "
            "without telling; the agent cannot type into it"
        )
    if theirs > ours:
        levels = f"{level_name(theirs)} integrity, the agent {level_name(ours)}"
        return (
            f"the window in front (process {pid.value}) runs as administrator ({levels}); "
            "Windows drops the agent's input into it without telling, so the agent cannot "
            "type into it"
        )
    return None


def refuse_unreachable_foreground(keys: bool) -> None:
    """Raise ToolError when input (`keys`: keyboard input) would not reach the foreground
    window, or keys would go to the app's own (Windows only)."""
    reason = foreground_refusal(getattr(ctypes, "windll"), keys)  # noqa: B009 - Windows only
    if reason is not None:
        raise ToolError(reason)
