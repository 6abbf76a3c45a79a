"""Noticing the user take over: mouse or keyboard input during a run that is not the agent's.

X11: the agent's input (pyautogui → XTEST) and a user's remote or scripted input (xdotool,
also XTEST) look the same, so the agent's input is told apart by its injection windows. The
input layer wraps every call in `InjectionWindows.injecting()`; each window opening and
closing changes a property on the watcher's own window (a "fence"), with a round trip, so the
X server puts a PropertyNotify into the watcher's event stream right before and right after
the agent's device events. A raw input event (XInput2, on the root window, any grab) that
arrives outside a begin/end pair is the user's. Ordering, not time, decides: a watcher thread
that runs late (two busy cores) still classifies exactly, which a time window with a grace
period would not. Windows: low-level hooks; an event without LLMHF_INJECTED /
LLKHF_INJECTED comes from a real device.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import queue
import select
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from desktop_agent.core.errors import DesktopAgentError
from desktop_agent.desktop.win_messages import tick_after

log = logging.getLogger(__name__)

#: property names the fences change on the watcher's window
BEGIN_ATOM = "_DESKTOP_AGENT_INPUT_BEGIN"
END_ATOM = "_DESKTOP_AGENT_INPUT_END"
FLUSH_ATOM = "_DESKTOP_AGENT_WATCH_FLUSH"


class TakeoverUnavailable(DesktopAgentError):
    """The user's input cannot be watched (no display, no XInput2, the hooks refused)."""


class Fence(Protocol):
    """Told, on the injecting thread, when an injection window opens and closes."""

    def opened(self) -> None: ...

    def closed(self) -> None: ...


class InjectionWindows:
    """When the agent is sending input. Thread-safe; windows may nest or overlap.

    The fences are called under the lock, so a watcher added or removed mid-run sees every
    window that opens or closes after it, and never half of one call.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._fences: list[Fence] = []

    @contextlib.contextmanager
    def injecting(self) -> Iterator[None]:
        """Wrap one call that sends input events; they must have reached the server on exit."""
        with self._lock:
            self._depth += 1
            for fence in self._fences:
                fence.opened()
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                for fence in self._fences:
                    fence.closed()

    @property
    def active(self) -> bool:
        """Whether a window is open now."""
        with self._lock:
            return self._depth > 0

    def add_fence(self, fence: Fence) -> int:
        """Register `fence`; how many windows are open at this instant."""
        with self._lock:
            self._fences.append(fence)
            return self._depth

    def remove_fence(self, fence: Fence) -> None:
        """Unregister `fence`; once this returns it is never called again."""
        with self._lock, contextlib.suppress(ValueError):
            self._fences.remove(fence)


class TakeoverWatch(Protocol):
    backend: str

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait until every input event made before this call is classified (and reported):
        True, or False after `timeout`. Call it after an action to learn of a takeover
        before the next observation."""
        ...

    def user_idle_s(self) -> float:
        """Seconds since the user's last input was reported (inf before any): resume only
        once the user has let go, or the hand still on the mouse pauses the run again."""
        ...

    def stop(self) -> None:
        """End the watch and its thread; safe to call twice."""
        ...


def start_takeover_watch(
    on_user_input: Callable[[], None], injections: InjectionWindows
) -> TakeoverWatch:
    """Call `on_user_input()` from the watch's own thread whenever the user moves the mouse,
    clicks, scrolls or types — never for input sent inside `injections`' windows. It may be
    called many times for one gesture (once per burst of events on X11, per event on Windows):
    make it cheap, idempotent and thread-safe (e.g. loop.call_soon_threadsafe).
    TakeoverUnavailable with the reason when the input cannot be watched.
    """
    inputs = UserInputs(on_user_input)
    if sys.platform == "win32":
        return _WindowsHookWatch.start(inputs)
    return _X11Watch.start(inputs, injections)


class UserInputs:
    """Calls the watch's callback, shielding the watch from its faults, and keeps the time
    (monotonic) of the last call."""

    def __init__(
        self, on_user_input: Callable[[], None], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._on_user_input = on_user_input
        self._clock = clock
        self._last: float | None = None

    def __call__(self) -> None:
        self._last = self._clock()
        try:
            self._on_user_input()
        except Exception:  # noqa: BLE001 - the watch must outlive a faulty callback
            log.exception("the takeover callback failed")

    def idle_s(self) -> float:
        last = self._last
        return float("inf") if last is None else self._clock() - last


# -- X11 ---------------------------------------------------------------------------------------


class _X11Fence:
    """Changes properties on the watcher's window from a connection of its own, each with a
    round trip: the server has queued the PropertyNotify before the caller goes on."""

    def __init__(self, display: Any, window_id: int, atoms: dict[str, int]) -> None:
        self._display = display
        self._window = display.create_resource_object("window", window_id)
        self._atoms = atoms
        self._lock = threading.Lock()  # injecting threads and flush() share the connection
        self._broken = False

    def opened(self) -> None:
        self.mark(BEGIN_ATOM)

    def closed(self) -> None:
        self.mark(END_ATOM)

    def mark(self, name: str) -> bool:
        from Xlib import Xatom, error

        with self._lock:
            if self._broken:
                return False
            refused = error.CatchError()  # BadWindow once the watch's connection is gone
            try:
                self._window.change_property(
                    self._atoms[name], Xatom.INTEGER, 32, [0], onerror=refused
                )
                self._display.sync()
            except Exception as problem:  # noqa: BLE001 - the X server went away
                self._broken = True
                log.warning("takeover fence failed, the watch is blind from now: %s", problem)
                return False
            if refused.get_error() is not None:
                self._broken = True
                log.debug("takeover fence refused: %s", refused.get_error())
                return False
            return True

    def close(self) -> None:
        with self._lock:
            self._broken = True
            try:
                self._display.close()
            except Exception as problem:  # noqa: BLE001 - closing a dead connection raises
                log.debug("closing the takeover fence's X connection: %s", problem)


def _open_display(name: str) -> Any:
    from Xlib import display

    try:
        return display.Display(name)
    except Exception as problem:  # noqa: BLE001 - Xlib raises several kinds
        raise TakeoverUnavailable(f"cannot open X display {name}: {problem}") from None


def _select_raw_input(dpy: Any) -> int:
    """Ask for XInput2 raw device events of every master device on the root window; the
    extension's opcode. Raw events reach the root whatever window or grab has the input
    (XInput >= 2.1), and warping the pointer (XWarpPointer) makes none: no device moved."""
    from Xlib.ext import xinput

    info = dpy.query_extension(xinput.extname)
    if info is None or not info.present:
        raise TakeoverUnavailable("the X server has no XInput extension: cannot watch the user")
    reply = xinput.XIQueryVersion(
        display=dpy.display, opcode=info.major_opcode, major_version=2, minor_version=2
    )
    if (reply.major_version, reply.minor_version) < (2, 1):
        raise TakeoverUnavailable(
            f"the X server has XInput {reply.major_version}.{reply.minor_version}; "
            "watching the user needs 2.1 or later"
        )
    mask = (
        xinput.RawKeyPressMask
        | xinput.RawKeyReleaseMask
        | xinput.RawButtonPressMask
        | xinput.RawButtonReleaseMask
        | xinput.RawMotionMask
    )
    dpy.screen().root.xinput_select_events([(xinput.AllMasterDevices, mask)])
    dpy.sync()
    return int(info.major_opcode)


class _X11Watch:
    """XInput2 raw events on a connection of its own, read by a thread until stop()."""

    backend = "XInput2 raw events (X11)"

    def __init__(
        self, display: Any, fence: _X11Fence, injections: InjectionWindows, inputs: UserInputs
    ) -> None:
        self._display = display
        self._inputs = inputs
        self._fence = fence
        self._injections = injections
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._flushes = threading.Condition()
        self._flushes_sent = 0
        self._flushes_seen = 0

    @classmethod
    def start(cls, inputs: UserInputs, injections: InjectionWindows) -> _X11Watch:
        name = os.environ.get("DISPLAY")
        if not name:
            raise TakeoverUnavailable("no X display to watch the user's input: DISPLAY is not set")
        from Xlib import X

        dpy = _open_display(name)
        fence: _X11Fence | None = None
        try:
            window = dpy.screen().root.create_window(
                -1,
                -1,
                1,
                1,
                0,
                X.CopyFromParent,
                X.InputOnly,
                X.CopyFromParent,
                event_mask=X.PropertyChangeMask,
            )
            atoms = {name: dpy.intern_atom(name) for name in (BEGIN_ATOM, END_ATOM, FLUSH_ATOM)}
            dpy.sync()
            fence = _X11Fence(_open_display(name), window.id, atoms)
            # the fence first: every window opening or closing from now on is in the stream,
            # so the raw events selected next are all classified against an exact depth
            depth = injections.add_fence(fence)
            opcode = _select_raw_input(dpy)
        except BaseException:
            if fence is not None:
                injections.remove_fence(fence)
                fence.close()
            dpy.close()
            raise
        watch = cls(dpy, fence, injections, inputs)
        watch._thread = threading.Thread(
            target=watch._listen,
            args=(window.id, atoms, opcode, depth),
            name="takeover watch",
            daemon=True,
        )
        watch._thread.start()
        return watch

    def _listen(
        self,
        window_id: int,
        atoms: dict[str, int],
        opcode: int,
        depth: int,
    ) -> None:
        from Xlib import X
        from Xlib.ext import ge

        dpy = self._display
        begin, end, flush = atoms[BEGIN_ATOM], atoms[END_ATOM], atoms[FLUSH_ATOM]
        try:
            while True:
                user = False
                flushed = 0
                while dpy.pending_events():
                    event = dpy.next_event()
                    if event.type == X.PropertyNotify and event.window.id == window_id:
                        if event.atom == begin:
                            depth += 1
                        elif event.atom == end:
                            depth = max(0, depth - 1)
                        elif event.atom == flush:
                            flushed += 1
                    elif event.type == ge.GenericEventCode and event.extension == opcode:
                        user = user or depth == 0
                if user:
                    self._inputs()
                if flushed:  # after the report: a flush returns once the user is reported
                    with self._flushes:
                        self._flushes_seen += flushed
                        self._flushes.notify_all()
                ready, _, _ = select.select([dpy.fileno(), self._wake_r], [], [])
                if self._wake_r in ready:
                    return
        except Exception as problem:  # noqa: BLE001 - the X server went away
            log.warning("takeover watch ended: %s", problem)
        finally:
            # before the window goes with the connection: no fence is sent to it after
            self._injections.remove_fence(self._fence)
            try:
                dpy.close()
            except Exception as problem:  # noqa: BLE001 - closing a dead connection raises
                log.debug("closing the takeover watch's X connection: %s", problem)
            os.close(self._wake_r)
            with self._flushes:
                self._stopped = True
                self._flushes.notify_all()

    def flush(self, timeout: float = 2.0) -> bool:
        with self._flushes:
            if self._stopped:
                return False
            self._flushes_sent += 1
            wanted = self._flushes_sent
        if not self._fence.mark(FLUSH_ATOM):
            return False
        with self._flushes:
            return (
                self._flushes.wait_for(
                    lambda: self._flushes_seen >= wanted or self._stopped, timeout
                )
                and self._flushes_seen >= wanted
            )

    def user_idle_s(self) -> float:
        return self._inputs.idle_s()

    def stop(self) -> None:
        with self._flushes:
            if self._stopped and self._thread is None:
                return
            self._stopped = True
            self._flushes.notify_all()
        thread, self._thread = self._thread, None
        # unregistered under the windows' lock: no fence is being sent while it closes
        self._injections.remove_fence(self._fence)
        self._fence.close()
        with contextlib.suppress(OSError):  # the listener may have ended by itself
            os.write(self._wake_w, b"x")
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)
        with contextlib.suppress(OSError):
            os.close(self._wake_w)


# -- Windows -----------------------------------------------------------------------------------

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


#: what a hook puts on its queue: (from a device, the event's tick)
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
            self._events.put((not data.flags & LLKHF_INJECTED, data.time))
        return self._call_next(n_code, w_param, l_param)

    def mouse(self, n_code: int, w_param: int, l_param: int) -> int:
        if n_code == HC_ACTION:
            data = MSLLHOOKSTRUCT.from_address(l_param)
            self._events.put((not data.flags & LLMHF_INJECTED, data.time))
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


class _WindowsHookWatch:
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
    def start(cls, inputs: UserInputs) -> _WindowsHookWatch:
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
                self._problem = f"cannot install the input hooks (error {kernel32.GetLastError()})"
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
                self.reinstalls += 1
                log.warning(
                    "the input hooks missed the user's input (Windows drops a hook that "
                    "answers late): installing them again (%d)",
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
