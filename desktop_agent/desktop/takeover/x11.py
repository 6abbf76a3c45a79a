"""The takeover watch on X11: XInput2 raw events, told apart from the agent's own by fences.

The agent's input (pyautogui → XTEST) and a user's remote or scripted input (xdotool, also
XTEST) look the same, so the agent's input is told apart by its injection windows. The input
layer wraps every call in `InjectionWindows.injecting()`; each window opening and closing
changes a property on the watcher's own window (a "fence"), with a round trip, so the X server
puts a PropertyNotify into the watcher's event stream right before and right after the
agent's device events. A raw input event (XInput2, on the root window, any grab) that arrives
outside a begin/end pair is the user's. Ordering, not time, decides: a watcher thread that
runs late (two busy cores) still classifies exactly, which a time window with a grace period
would not.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
from typing import Any

from desktop_agent.desktop.takeover.base import InjectionWindows, TakeoverUnavailable, UserInputs

log = logging.getLogger(__name__)

#: property names the fences change on the watcher's window
BEGIN_ATOM = "_DESKTOP_AGENT_INPUT_BEGIN"
END_ATOM = "_DESKTOP_AGENT_INPUT_END"
FLUSH_ATOM = "_DESKTOP_AGENT_WATCH_FLUSH"


class X11Fence:
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


class X11Watch:
    """XInput2 raw events on a connection of its own, read by a thread until stop()."""

    backend = "XInput2 raw events (X11)"

    def __init__(
        self, display: Any, fence: X11Fence, injections: InjectionWindows, inputs: UserInputs
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
    def start(cls, inputs: UserInputs, injections: InjectionWindows) -> X11Watch:
        name = os.environ.get("DISPLAY")
        if not name:
            raise TakeoverUnavailable("no X display to watch the user's input: DISPLAY is not set")
        from Xlib import X

        dpy = _open_display(name)
        fence: X11Fence | None = None
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
            fence = X11Fence(_open_display(name), window.id, atoms)
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
