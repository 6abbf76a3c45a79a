"""InputRecorder: a window over the whole test screen that records the input the X server
delivers to it (key and button presses and releases, in the server's order), and a mark of
"the stop was pressed" in the same stream.

The mark is a property change on the recorder's own window, made right after the test sets
the stop: its PropertyNotify reaches the recorder's queue in the order the server handled it
among the input events, so "an event after the mark" is an event the server got after the
stop, whatever the clients' clocks say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support.xdisplay import wait_until


@dataclass(frozen=True)
class Recorded:
    """One input event: its kind ("key_press", "key_release", "button_press",
    "button_release"), its detail (keycode or button) and the server's time (ms)."""

    kind: str
    detail: int
    time: int


class InputRecorder:
    """A mapped, override-redirect window covering the screen, holding the input focus."""

    def __init__(self, display_name: str) -> None:
        from Xlib import X, display

        self.display = display.Display(display_name)
        screen = self.display.screen()
        self.window = screen.root.create_window(
            0,
            0,
            screen.width_in_pixels,
            screen.height_in_pixels,
            0,
            screen.root_depth,
            background_pixel=screen.white_pixel,
            override_redirect=True,
            event_mask=(
                X.KeyPressMask
                | X.KeyReleaseMask
                | X.ButtonPressMask
                | X.ButtonReleaseMask
                | X.PropertyChangeMask
            ),
        )
        self._mark_atom = self.display.intern_atom("DESKTOP_AGENT_TEST_STOP_MARK")
        self.window.map()
        self.display.sync()
        wait_until(
            lambda: self.window.get_attributes().map_state == X.IsViewable,
            what="the recorder window to map",
        )
        self.window.set_input_focus(X.RevertToParent, X.CurrentTime)
        screen.root.warp_pointer(screen.width_in_pixels // 2, screen.height_in_pixels // 2)
        self.display.sync()
        #: every event so far, the marks as ("mark", n, time)
        self.events: list[Recorded] = []
        self._marks = 0

    def _drain(self) -> None:
        from Xlib import X

        kinds = {
            X.KeyPress: "key_press",
            X.KeyRelease: "key_release",
            X.ButtonPress: "button_press",
            X.ButtonRelease: "button_release",
        }
        while self.display.pending_events():
            event: Any = self.display.next_event()
            if event.type in kinds:
                self.events.append(Recorded(kinds[event.type], event.detail, event.time))
            elif event.type == X.PropertyNotify and event.atom == self._mark_atom:
                self.events.append(Recorded("mark", 0, event.time))

    def sync(self) -> list[Recorded]:
        """Every event the server has delivered so far (a round trip first)."""
        self.display.sync()
        self._drain()
        return list(self.events)

    def wait_for(self, kind: str, count: int = 1, timeout: float = 10.0) -> None:
        def enough() -> bool:
            self.display.sync()
            self._drain()
            return sum(event.kind == kind for event in self.events) >= count

        wait_until(enough, timeout=timeout, what=f"{count} {kind} event(s)")

    def mark(self) -> None:
        """The stop moment, in the server's order of events."""
        from Xlib import X, Xatom

        self._marks += 1
        self.window.change_property(
            self._mark_atom, Xatom.STRING, 8, str(self._marks).encode(), X.PropModeReplace
        )
        self.display.sync()

    def after_mark(self) -> list[Recorded]:
        """The input events the server delivered after the last mark."""
        events = self.sync()
        last = max(i for i, event in enumerate(events) if event.kind == "mark")
        return events[last + 1 :]

    def buttons_held(self) -> int:
        """The pointer's button mask now (Button1Mask = 256, …): 0 when none is held."""
        from Xlib import X

        mask = self.window.query_pointer().mask
        held: int = mask & (X.Button1Mask | X.Button2Mask | X.Button3Mask)
        return held

    def keys_held(self) -> list[int]:
        """The keycodes the server holds down now."""
        keymap = self.display.query_keymap()
        return [
            byte * 8 + bit
            for byte, bits in enumerate(keymap)
            for bit in range(8)
            if bits >> bit & 1
        ]

    def close(self) -> None:
        """Let go of whatever a failed test left held (a later test must not inherit a held
        button), then go."""
        from Xlib import X
        from Xlib.ext import xtest

        held = self.buttons_held()
        for button, mask in ((1, X.Button1Mask), (2, X.Button2Mask), (3, X.Button3Mask)):
            if held & mask:
                xtest.fake_input(self.display, X.ButtonRelease, button)
        for keycode in self.keys_held():
            xtest.fake_input(self.display, X.KeyRelease, keycode)
        self.display.sync()
        self.window.destroy()
        self.display.close()
