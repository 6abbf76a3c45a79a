"""A window on the multi-monitor desk that records where each button press reached it."""

from __future__ import annotations

import threading

from desktop_agent.eval.monitors_desk import MonitorsSession

#: the window's title (openbox frames it; the element lists name it)
TITLE = "Monitor target"


class TargetWindow:
    """A titled, managed X window (openbox frames it) that records the root position of each
    button press it gets, read on a thread of its own."""

    def __init__(self, session: MonitorsSession) -> None:
        from Xlib import X, display

        self.session = session
        self.display = display.Display(session.display)
        screen = self.display.screen()
        self.window = screen.root.create_window(
            0, 0, 400, 300, 0, screen.root_depth,
            background_pixel=screen.white_pixel,
            event_mask=X.ButtonPressMask | X.StructureNotifyMask,
        )  # fmt: skip
        self.window.set_wm_name(TITLE)
        self.window.set_wm_class("target", "Target")
        self.window.map()
        self.display.sync()
        self.presses: list[tuple[int, int]] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        from Xlib import X

        while not self._closed.is_set():
            try:
                event = self.display.next_event()
            except Exception:  # the connection closed at the end of the test
                return
            if event.type == X.ButtonPress:
                with self._lock:
                    self.presses.append((event.root_x, event.root_y))

    @property
    def id(self) -> str:
        return str(self.window.id)

    def place(self, left: int, top: int) -> None:
        """Move the window (its client area) to left, top and make it the active window."""
        self.session.xdotool("windowmove", "--sync", self.id, str(left), str(top))
        self.session.xdotool("windowactivate", "--sync", self.id)

    def client_rect(self) -> tuple[int, int, int, int]:
        """The window's client area at the X server: root left, top, width, height."""
        geometry = self.window.get_geometry()
        # the root's origin in the window's coordinates (openbox reparents it into a frame)
        at = self.window.translate_coords(self.display.screen().root, 0, 0)
        return -at.x, -at.y, geometry.width, geometry.height

    def pressed(self) -> list[tuple[int, int]]:
        with self._lock:
            return list(self.presses)

    def close(self) -> None:
        self._closed.set()
        self.display.close()
