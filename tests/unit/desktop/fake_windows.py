"""A fake of the Windows input system as user32 and kernel32 show it to one process: thread
message queues, registered hotkeys, low-level hooks and the last-input tick. It behaves as
Microsoft documents these functions (learn.microsoft.com, winuser.h):

- GetMessageW(&msg, NULL, 0, 0) waits for a message posted to the calling thread; it answers
  0 for WM_QUIT, else 1 with `msg` filled. Low-level hooks are called *on the thread that
  installed them, while it waits in GetMessage* (LowLevelKeyboardProc: "the hook is called
  in the context of the thread that installed it ... by sending a message to the thread"),
  so a hook call is run inside GetMessageW and is not returned as a message.
- RegisterHotKey(NULL, id, mods, vk) posts WM_HOTKEY (wParam = id) to the registering
  thread's queue when the combination is pressed; it fails (0, GetLastError 1409
  ERROR_HOTKEY_ALREADY_REGISTERED) when another program holds the combination.
  UnregisterHotKey frees it. The press reaches the queue whatever the thread is doing.
- SetWindowsHookExW(WH_KEYBOARD_LL | WH_MOUSE_LL, proc, hmod, 0) installs a hook;
  UnhookWindowsHookEx removes it; CallNextHookEx answers 0. "If the hook procedure times
  out, the system passes the message to the next hook. However, on Windows 7 and later, the
  hook is silently removed without being called" (LowLevelKeyboardProc, Remarks; the
  timeout is LowLevelHooksTimeout): `hooks_time_out()` does that to every hook installed.
- GetLastInputInfo fills dwTime with the tick of the last input of the session from any
  device, injected input included, whether or not any hook saw it.
- PostThreadMessageW fails for a thread that has no message queue yet (a thread gets one
  at its first PeekMessage/GetMessage); GetCurrentThreadId, GetModuleHandleW, GetLastError
  (per thread).

The user's actions: `press(vk, modifiers)` (a key of a real keyboard: hotkeys, then the
keyboard hooks, flags 0), `move_mouse(x, y)`, `into_elevated_window()`; a program's:
`inject(vk, extra)`, `send_input(inputs)` (mouse events, as the agent's driver sends them).
Each advances the tick clock by 10 ms.
"""

from __future__ import annotations

import ctypes
import itertools
import queue
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from desktop_agent.desktop.takeover.windows import KBDLLHOOKSTRUCT, MSLLHOOKSTRUCT, WH_KEYBOARD_LL
from desktop_agent.desktop.win_input import (
    INPUT,
    INPUT_MOUSE,
    MOUSEEVENTF_ABSOLUTE,
    MOUSEEVENTF_MOVE,
    MOUSEEVENTF_VIRTUALDESK,
)
from desktop_agent.desktop.win_messages import (
    ERROR_HOTKEY_ALREADY_REGISTERED,
    WM_HOTKEY,
    WM_QUIT,
)
from tests.unit.desktop.fake_ctypes import ThreadErrors

WM_KEYDOWN, WM_KEYUP, WM_MOUSEMOVE = 0x0100, 0x0101, 0x0200


class Function:
    """A stand-in for a ctypes foreign function: callable, with settable attributes."""

    def __init__(self, body: Callable[..., Any]) -> None:
        self.body = body
        self.restype: Any = ctypes.c_int
        self.argtypes: Any = None

    def __call__(self, *args: Any) -> Any:
        return self.body(*args)


@dataclass
class Hook:
    kind: int
    proc: Any
    thread: int
    live: bool = True


class FakeWindows:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[int, queue.SimpleQueue[tuple[Any, ...]]] = {}
        self._handles = itertools.count(0x100)
        self.tick = 1_000_000
        self.last_input = self.tick
        self.hotkeys: dict[tuple[int, int], tuple[int, int]] = {}  # (mods, vk) → (thread, id)
        self.taken_by_others: set[tuple[int, int]] = set()
        #: the shell's own Windows-key shortcuts (win+E, win+L, ...): RegisterHotKey fails
        #: with the same 1409 for them ("reserved for use by the operating system")
        self.shell_keys: set[tuple[int, int]] = {(0x8, ord("E")), (0x8, ord("L")), (0x8, ord("R"))}
        self.hooks: dict[int, Hook] = {}
        self.installs = 0
        #: each thread's last error, and ctypes' copy of it (tests/unit/desktop/fake_ctypes.py)
        self.errors = ThreadErrors()
        self.user32 = self._functions(
            "GetMessageW", "PeekMessageW", "PostThreadMessageW", "RegisterHotKey",
            "UnregisterHotKey", "SetWindowsHookExW", "UnhookWindowsHookEx", "CallNextHookEx",
            "GetLastInputInfo",
        )  # fmt: skip
        self.kernel32 = self._functions("GetCurrentThreadId", "GetModuleHandleW", "GetLastError")
        #: the virtual desktop (left, top, width, height) and where the pointer is
        self.desk = (0, 0, 1920, 1080)
        self.pointer = (0, 0)

    def _functions(self, *names: str) -> types.SimpleNamespace:
        return types.SimpleNamespace(**{name: Function(getattr(self, name)) for name in names})

    def _queue(self, thread: int) -> queue.SimpleQueue[tuple[Any, ...]]:
        with self._lock:
            return self._queues.setdefault(thread, queue.SimpleQueue())

    @staticmethod
    def _me() -> int:
        return threading.get_ident() & 0xFFFFFFFF

    # -- kernel32 -------------------------------------------------------------------------

    def GetCurrentThreadId(self) -> int:  # noqa: N802
        return self._me()

    def GetModuleHandleW(self, name: Any) -> int:  # noqa: N802
        return 0x400000

    def GetLastError(self) -> int:  # noqa: N802
        return self.errors.get()

    # -- messages -------------------------------------------------------------------------

    def PeekMessageW(self, msg_ref: Any, hwnd: Any, low: int, high: int, remove: int) -> int:  # noqa: N802
        """Used to make the thread's queue; a queue exists here once asked for."""
        self._queue(self._me())
        return 0

    def PostThreadMessageW(self, thread: int, message: int, w: int, l: int) -> int:  # noqa: N802, E741
        """Fails (0) for a thread that has no message queue yet, as Windows does."""
        with self._lock:
            known = int(thread) in self._queues
        if not known:
            return 0
        self._queue(int(thread)).put(("message", message, w, l))
        return 1

    def GetMessageW(self, msg_ref: Any, hwnd: Any, low: int, high: int) -> int:  # noqa: N802
        msg = msg_ref._obj  # ctypes.byref(msg)
        own = self._queue(self._me())
        while True:
            item = own.get()
            if item[0] == "hook":
                _, hook, w_param, data = item
                if hook.live:
                    hook.proc(0, w_param, ctypes.addressof(data))
                continue
            _, message, w_param, l_param = item
            if message == WM_QUIT:
                return 0
            msg.message, msg.wParam, msg.lParam = message, w_param, l_param
            return 1

    # -- hotkeys --------------------------------------------------------------------------

    def RegisterHotKey(self, hwnd: Any, ident: int, modifiers: int, vk: int) -> int:  # noqa: N802
        combo = (modifiers & 0xF, vk)
        if combo in self.taken_by_others or combo in self.hotkeys or combo in self.shell_keys:
            self.errors.set(ERROR_HOTKEY_ALREADY_REGISTERED)
            return 0
        self.hotkeys[combo] = (self._me(), ident)
        return 1

    def UnregisterHotKey(self, hwnd: Any, ident: int) -> int:  # noqa: N802
        mine = [c for c, (t, i) in self.hotkeys.items() if (t, i) == (self._me(), ident)]
        for combo in mine:
            del self.hotkeys[combo]
        return 1 if mine else 0

    # -- hooks ----------------------------------------------------------------------------

    def SetWindowsHookExW(self, kind: int, proc: Any, module: Any, thread: int) -> int:  # noqa: N802
        handle = next(self._handles)
        self.hooks[handle] = Hook(kind, proc, self._me())
        self.installs += 1
        return handle

    def UnhookWindowsHookEx(self, handle: Any) -> int:  # noqa: N802
        hook = self.hooks.pop(int(getattr(handle, "value", handle) or 0), None)
        return 1 if hook is not None else 0

    def CallNextHookEx(self, *args: Any) -> int:  # noqa: N802
        return 0

    def GetLastInputInfo(self, info_ref: Any) -> int:  # noqa: N802
        info_ref._obj.dwTime = self.last_input
        return 1

    # -- the system -------------------------------------------------------------------------

    def hooks_time_out(self) -> None:
        """Windows removed every hook that answered too late; nobody is told."""
        for hook in self.hooks.values():
            hook.live = False

    def live_hooks(self, kind: int) -> list[Hook]:
        return [hook for hook in self.hooks.values() if hook.live and hook.kind == kind]

    def _input(self) -> int:
        self.tick += 10
        self.last_input = self.tick
        return self.tick

    def press(self, vk: int, modifiers: int = 0) -> None:
        """A key of a real keyboard, with the hotkey modifiers (MOD_*) held."""
        tick = self._input()
        target = self.hotkeys.get((modifiers, vk))
        if target is not None:
            thread, ident = target
            self._queue(thread).put(("message", WM_HOTKEY, ident, 0))
        for hook in self.live_hooks(WH_KEYBOARD_LL):
            data = KBDLLHOOKSTRUCT(vkCode=vk, scanCode=0, flags=0, time=tick, dwExtraInfo=0)
            self._queue(hook.thread).put(("hook", hook, WM_KEYDOWN, data))

    def inject(self, vk: int, extra: int) -> None:
        """A key some process injected with SendInput (dwExtraInfo `extra`): the hooks see it
        with LLKHF_INJECTED and that dwExtraInfo (KBDLLHOOKSTRUCT); no hotkey fires."""
        tick = self._input()
        for hook in self.live_hooks(WH_KEYBOARD_LL):
            data = KBDLLHOOKSTRUCT(vkCode=vk, scanCode=0, flags=0x10, time=tick, dwExtraInfo=extra)
            self._queue(hook.thread).put(("hook", hook, WM_KEYDOWN, data))

    def into_elevated_window(self) -> None:
        """The user types into an elevated window: the session's last input moves on, the
        low-level hooks of a process of lower integrity are not called (UIPI)."""
        self._input()

    def move_mouse(self, x: int = 1, y: int = 1) -> None:
        """The user's mouse moved to (x, y): per-monitor-aware screen coordinates, negative
        on a monitor left of or above the primary (MSLLHOOKSTRUCT's pt)."""
        tick = self._input()
        self.pointer = (x, y)
        for hook in self.live_hooks(14):  # WH_MOUSE_LL
            data = MSLLHOOKSTRUCT(x=x, y=y, mouseData=0, flags=0, time=tick, dwExtraInfo=0)
            self._queue(hook.thread).put(("hook", hook, WM_MOUSEMOVE, data))

    def send_input(self, inputs: Sequence[INPUT]) -> int:
        """SendInput of a process's mouse events (winuser.h): each goes in, and the low-level
        mouse hooks see it with LLMHF_INJECTED, the INPUT's own dwExtraInfo, and pt where the
        pointer is after it. An absolute move on the virtual desktop (`desk`: left, top,
        width, height) puts the pointer at origin + n * size // 65536 ("MOUSEINPUT
        structure", Remarks). Answers how many events went in: all."""
        left, top, width, height = self.desk
        for event in inputs:
            if event.type != INPUT_MOUSE:
                continue
            flags = event.mi.dwFlags
            if flags & MOUSEEVENTF_MOVE and flags & MOUSEEVENTF_ABSOLUTE:
                assert flags & MOUSEEVENTF_VIRTUALDESK, "absolute moves span every monitor"
                self.pointer = (
                    left + event.mi.dx * width // 65536,
                    top + event.mi.dy * height // 65536,
                )
            tick = self._input()
            x, y = self.pointer
            extra = event.mi.dwExtraInfo
            for hook in self.live_hooks(14):  # WH_MOUSE_LL
                data = MSLLHOOKSTRUCT(
                    x=x, y=y, mouseData=0, flags=0x01, time=tick, dwExtraInfo=extra
                )
                self._queue(hook.thread).put(("hook", hook, WM_MOUSEMOVE, data))
        return len(inputs)
