"""The takeover watch on Windows: low-level hooks; every event that does not carry our mark
(win_input.AGENT_INPUT_TAG in dwExtraInfo) is the user's. LLKHF_INJECTED / LLMHF_INJECTED say
only that *some* process injected it: remote-control tools, the on-screen keyboard and Mouse
Without Borders inject the user's own input. Input the session saw that no hook did (typed
into an elevated window, whose input a standard process's hooks never see, or missed by a
dropped hook) is the user's too. The hook bodies and the health check are plain Python
(tested on any OS); the Win32 calls are made only by the watch's threads."""

from __future__ import annotations

import ctypes
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from desktop_agent.desktop.takeover.base import TakeoverUnavailable, UserInputs
from desktop_agent.desktop.win_input import AGENT_INPUT_TAG
from desktop_agent.desktop.win_messages import tick_after

log = logging.getLogger(__name__)


WH_KEYBOARD_LL = 13
WH_MOUSE_LL = 14
HC_ACTION = 0
LLKHF_INJECTED = 0x10
LLMHF_INJECTED = 0x01
#: how often the hooks' health is checked, and how far the session's last input may run
#: ahead of the newest event the hooks passed on before they count as dropped
HEALTH_CHECK_S = 1.0
MISSED_INPUT_MS = 1000


class KBDLLHOOKSTRUCT(ctypes.Structure):
    _fields_ = (
        ("vkCode", ctypes.c_uint32),
        ("scanCode", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("time", ctypes.c_uint32),
        ("dwExtraInfo", ctypes.c_size_t),
    )


class MSLLHOOKSTRUCT(ctypes.Structure):
    _fields_ = (
        ("x", ctypes.c_int32),
        ("y", ctypes.c_int32),
        ("mouseData", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("time", ctypes.c_uint32),
        ("dwExtraInfo", ctypes.c_size_t),
    )


#: what a hook puts on its queue: (the user's, the event's tick)
HookEvent = tuple[bool, int]


class LowLevelHooks:
    """The hook procedures' bodies, apart from the Win32 plumbing (tested on any OS).

    Windows silently removes a low-level hook that answers later than LowLevelHooksTimeout,
    so a body reads the event's flags and time, puts one tuple on `events` and passes the
    event on: no callback, no lock, no logging in the hook.
    """

    def __init__(
        self, events: queue.SimpleQueue[Any], call_next: Callable[[int, int, int], int]
    ) -> None:
        self._events = events
        self._call_next = call_next

    def keyboard(self, n_code: int, w_param: int, l_param: int) -> int:
        if n_code == HC_ACTION:
            data = KBDLLHOOKSTRUCT.from_address(l_param)
            self._events.put((data.dwExtraInfo != AGENT_INPUT_TAG, data.time))
        return self._call_next(n_code, w_param, l_param)

    def mouse(self, n_code: int, w_param: int, l_param: int) -> int:
        if n_code == HC_ACTION:
            data = MSLLHOOKSTRUCT.from_address(l_param)
            self._events.put((data.dwExtraInfo != AGENT_INPUT_TAG, data.time))
        return self._call_next(n_code, w_param, l_param)


class HookHealth:
    """Whether the hooks still see the session's input.

    Windows tells nobody when it drops a hook, but GetLastInputInfo says when the session
    last had input from any device, injected input included — all of which passes the
    low-level hooks. Input the system saw more than `missed_ms` after the newest event a
    hook passed on means the hooks are gone: install them again. (Chosen over a heartbeat of
    injected keys: those would reset the session's idle timer, so the screen would never
    lock while a watch runs.)
    """

    def __init__(self, missed_ms: int = MISSED_INPUT_MS) -> None:
        self.missed_ms = missed_ms
        self._seen: int | None = None

    def saw(self, tick: int) -> None:
        if self._seen is None or tick_after(tick, self._seen) > 0:
            self._seen = tick

    def missed(self, last_input: int | None) -> bool:
        """Whether the hooks missed input the system saw (check with the queue drained)."""
        if last_input is None:
            return False
        if self._seen is None:
            self._seen = last_input
            return False
        return tick_after(last_input, self._seen) > self.missed_ms

    def reinstalled(self, last_input: int | None) -> None:
        if last_input is not None:
            self._seen = last_input


class WindowsHookWatch:
    """WH_KEYBOARD_LL and WH_MOUSE_LL on a thread that pumps messages until WM_QUIT (and
    installs them again on WM_APP_REINSTALL); a second thread takes their events off the
    queue, reports the user's, and checks the hooks' health every HEALTH_CHECK_S.
    """

    backend = "low-level hooks (Windows)"

    def __init__(self, inputs: UserInputs, dlls: Any) -> None:
        self._inputs = inputs
        self._dlls = dlls
        self._events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._hook_thread: threading.Thread | None = None
        self._reader: threading.Thread | None = None
        self._thread_id = 0
        self._ready = threading.Event()
        self._problem = ""
        self._stopped = False
        #: how many times the hooks were found dropped and installed again
        self.reinstalls = 0

    @classmethod
    def start(cls, inputs: UserInputs) -> WindowsHookWatch:
        from desktop_agent.desktop.win_messages import windll

        watch = cls(inputs, windll())
        watch._hook_thread = threading.Thread(target=watch._run, name="takeover hooks", daemon=True)
        watch._hook_thread.start()
        watch._ready.wait(5.0)
        if watch._problem or not watch._ready.is_set():
            watch._hook_thread.join(timeout=2.0)
            raise TakeoverUnavailable(watch._problem or "the input hooks did not start")
        watch._reader = threading.Thread(
            target=watch._read, name="takeover hook events", daemon=True
        )
        watch._reader.start()
        return watch

    def _run(self) -> None:
        from desktop_agent.desktop.win_messages import MSG, WM_APP_REINSTALL, make_message_queue

        user32, kernel32 = self._dlls.user32, self._dlls.kernel32
        make_message_queue(user32)
        proc_type = getattr(ctypes, "WINFUNCTYPE")(  # noqa: B009 - Windows only
            ctypes.c_ssize_t, ctypes.c_int, ctypes.c_size_t, ctypes.c_ssize_t
        )
        user32.SetWindowsHookExW.argtypes = (
            ctypes.c_int,
            proc_type,
            ctypes.c_void_p,
            ctypes.c_uint32,
        )
        user32.SetWindowsHookExW.restype = ctypes.c_void_p
        user32.CallNextHookEx.argtypes = (
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.c_size_t,
            ctypes.c_ssize_t,
        )
        user32.CallNextHookEx.restype = ctypes.c_ssize_t
        user32.UnhookWindowsHookEx.argtypes = (ctypes.c_void_p,)
        kernel32.GetModuleHandleW.restype = ctypes.c_void_p
        hooks = LowLevelHooks(
            self._events, lambda code, w, lp: int(user32.CallNextHookEx(None, code, w, lp))
        )
        keyboard, mouse = proc_type(hooks.keyboard), proc_type(hooks.mouse)
        module = kernel32.GetModuleHandleW(None)
        self._thread_id = int(kernel32.GetCurrentThreadId())

        def install() -> list[Any]:
            return [
                user32.SetWindowsHookExW(WH_KEYBOARD_LL, keyboard, module, 0),
                user32.SetWindowsHookExW(WH_MOUSE_LL, mouse, module, 0),
            ]

        handles = install()
        try:
            if not all(handles):
                self._problem = f"cannot install the input hooks (error {self._dlls.last_error()})"
                return
            self._ready.set()
            message = MSG()
            while user32.GetMessageW(ctypes.byref(message), None, 0, 0) > 0:
                if message.message == WM_APP_REINSTALL:
                    for handle in handles:
                        user32.UnhookWindowsHookEx(handle)  # gone already: harmless
                    handles = install()
        finally:
            for handle in handles:
                if handle:
                    user32.UnhookWindowsHookEx(handle)
            self._ready.set()

    def _read(self) -> None:
        """Report the user's events; when the queue is quiet, check the hooks' health."""
        from desktop_agent.desktop.win_messages import (
            WM_APP_REINSTALL,
            last_input_tick,
        )

        health = HookHealth()
        user32 = self._dlls.user32
        next_check = time.monotonic() + HEALTH_CHECK_S
        while True:
            try:
                item = self._events.get(timeout=max(0.0, next_check - time.monotonic()))
            except queue.Empty:
                item = None
            if item is _STOP:
                return
            if isinstance(item, threading.Event):  # flush()
                item.set()
            elif item is not None:
                from_device, tick = item
                health.saw(tick)
                if from_device:
                    self._inputs()
            if time.monotonic() < next_check or not self._events.empty():
                continue
            next_check = time.monotonic() + HEALTH_CHECK_S
            last_input = last_input_tick(user32)
            if health.missed(last_input):
                # the session had input no hook passed on: ours always passes them (it is
                # refused into elevated windows), so it was the user's
                self._inputs()
                self.reinstalls += 1
                log.warning(
                    "the input hooks missed the user's input (into an elevated window, or "
                    "Windows dropped a hook that answered late): installing them again (%d)",
                    self.reinstalls,
                )
                user32.PostThreadMessageW(self._thread_id, WM_APP_REINSTALL, 0, 0)
                health.reinstalled(last_input)

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait until the events the hooks have queued so far are reported."""
        if self._stopped:
            return False
        done = threading.Event()
        self._events.put(done)
        return done.wait(timeout)

    def user_idle_s(self) -> float:
        return self._inputs.idle_s()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        from desktop_agent.desktop.win_messages import WM_QUIT

        self._dlls.user32.PostThreadMessageW(self._thread_id, WM_QUIT, 0, 0)
        self._events.put(_STOP)
        for thread in (self._hook_thread, self._reader):
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=2.0)


_STOP = object()
