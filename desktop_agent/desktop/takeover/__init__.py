"""Noticing the user take over: mouse or keyboard input during a run that is not the agent's.

    base.py      the port: InjectionWindows (when the agent sends input), TakeoverWatch,
                 UserInputs (the callback and the time of the last input), TakeoverUnavailable
    x11.py       XInput2 raw events, told apart from the agent's by fences (X11Watch)
    windows.py   low-level hooks and their health check (WindowsHookWatch)

`start_takeover_watch` picks the backend for this machine; each is imported only when it is
the one (the Windows one never on Linux, the X11 one never on Windows).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from desktop_agent.desktop.takeover.base import (
    Fence,
    InjectionWindows,
    TakeoverUnavailable,
    TakeoverWatch,
    UserInputs,
)

__all__ = [
    "Fence",
    "InjectionWindows",
    "TakeoverUnavailable",
    "TakeoverWatch",
    "UserInputs",
    "start_takeover_watch",
]


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
        from desktop_agent.desktop.takeover.windows import WindowsHookWatch

        return WindowsHookWatch.start(inputs)
    from desktop_agent.desktop.session import session_kind
    from desktop_agent.desktop.takeover.x11 import X11Watch

    try:
        return X11Watch.start(inputs, injections)
    except TakeoverUnavailable:
        if session_kind() == "wayland":
            # the X reason ("DISPLAY is not set") is true but not why: say Wayland's
            raise TakeoverUnavailable(WAYLAND_WHY) from None
        raise


#: why the person's input is not watched on a Wayland session without XWayland (with it, the
#: X watch sees the input to XWayland's windows only: docs/wayland.md)
WAYLAND_WHY = (
    "a Wayland session lets no program watch the person's input; stop a run with the "
    "desktop shortcut, the tray or the window"
)
