"""The Wayland desktop path: which session this is, and capture and input through the portal.

`session_kind()` reads XDG_SESSION_TYPE (then WAYLAND_DISPLAY): an X11 session keeps the mss
and pyautogui path; a Wayland session sees and acts through one `PortalDesk` (the
RemoteDesktop + ScreenCast portal session and its PipeWire frames) shared by `PortalScreen`,
which ScreenCapture reads as it reads mss, and `PortalDriver`, the InputDriver.
There is no global pointer position on Wayland, so there is no fail-safe corner either: the
stop is the desktop shortcut, the tray and the window (docs/wayland.md).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from desktop_agent.core.errors import ObservationError, ToolError
from desktop_agent.desktop.pipewire_frames import FrameError, FrameStream
from desktop_agent.desktop.portal import (
    VERTICAL,
    PortalDeclined,
    PortalScreenshots,
    PortalSession,
    PortalUnavailable,
    Stream,
    probe,
)

# the session's kind lives apart (the inventory reads it too); named here as before
from desktop_agent.desktop.session import OVERRIDE as OVERRIDE
from desktop_agent.desktop.session import SessionKind as SessionKind
from desktop_agent.desktop.session import session_kind as session_kind
from desktop_agent.desktop.takeover import InjectionWindows

log = logging.getLogger(__name__)

#: see PortalDriver._point
POINTER_SETTLE_S = 0.03


def wayland_parts(
    settings: Any, injections: InjectionWindows
) -> tuple[Any, PortalDriver, PortalDesk]:
    """The observer, input driver and portal desk of a Wayland session: the capture reads the
    portal's stream (mss's face), the driver sends through the same session; no X window is
    read (where the work is: the one shared monitor). The desk's owner closes it."""
    from desktop_agent.desktop.capture import ScreenCapture
    from desktop_agent.desktop.observer import DesktopObserver

    desk = PortalDesk()
    capture = ScreenCapture(
        width=settings.capture_width,
        monitor=settings.monitor,
        screen=lambda: PortalScreen(desk),
    )
    observer = DesktopObserver.from_settings(settings, capture=capture, locate=lambda: None)
    # no window list on Wayland: the gate asks before pointer and key calls (core/loop.py)
    observer.sees_own_windows = False
    return observer, PortalDriver(desk, injections), desk


#: how the screen is seen: the ScreenCast stream, or the Screenshot portal's pictures
SCREENCAST, SCREENSHOT = "screencast", "screenshot"


class PortalDesk:
    """The portal session and its frame stream, started on first use (the person's dialog
    then) by whichever worker thread comes first; the capture and the input share it.

    The capture's way is chosen at the first grab from the portal's properties (no dialog):
    the ScreenCast stream where the portal offers one, else the Screenshot portal (slower: a
    PNG file per picture). A ScreenCast the portal could not start (not a person's "no",
    which stays a no) falls back to the Screenshot portal too, where there is one."""

    def __init__(
        self, session: PortalSession | None = None, shots: PortalScreenshots | None = None
    ) -> None:
        self.session = session or PortalSession()
        self.shots = shots or PortalScreenshots(connect=self.session._connect)
        self._frames: FrameStream | None = None
        self._lock = threading.Lock()
        #: when the last input was sent (monotonic): a grab waits briefly for a newer frame
        self.last_input = 0.0
        #: SCREENCAST or SCREENSHOT once chosen; the Screenshot portal's version (0: none)
        self.way = ""
        self.screenshot_version = 0

    def choose(self) -> str:
        """The capture's way, read from the portal's properties on first use."""
        with self._lock:
            if not self.way:
                try:
                    parts = probe(self.session._connect)
                except PortalUnavailable:
                    self.way = SCREENCAST  # the session's start says why
                else:
                    self.screenshot_version = parts.screenshot_version
                    self.way = SCREENSHOT if parts.screenshot_only else SCREENCAST
            return self.way

    def fall_back(self, error: PortalUnavailable) -> bool:
        """The ScreenCast could not start: take the Screenshot portal's way where there is
        one (True), else the error stands (False)."""
        if not self.screenshot_version:
            return False
        log.warning("no ScreenCast (%s): capturing through the Screenshot portal", error)
        self.way = SCREENSHOT
        return True

    def stream(self) -> Stream:
        return self.session.start()

    def frames(self) -> FrameStream:
        with self._lock:
            if self._frames is None:
                stream = self.stream()
                self._frames = FrameStream(
                    stream.node, self.session.pipewire_fd, stream.width, stream.height
                )
            return self._frames

    def close(self) -> None:
        with self._lock:
            if self._frames is not None:
                self._frames.close()
                self._frames = None
        self.shots.close()
        self.session.close()


@dataclass(frozen=True, slots=True)
class _Grab:
    """What ScreenCapture reads of an mss grab: BGRA bytes and their size."""

    bgra: bytes
    width: int
    height: int


class PortalScreen:
    """mss's face (`monitors`, `grab(region)`, `close`) on the portal: the ScreenCast stream
    of the one monitor the person shared, at its place on the desktop; or, where the desk
    takes the Screenshot portal's way, its whole-screen pictures (one monitor at 0,0)."""

    def __init__(self, desk: PortalDesk) -> None:
        self.desk = desk
        #: the Screenshot way: the last picture's size, and a picture taken to learn the
        #: size and not yet handed out (so the first grab does not take a second one)
        self._size: tuple[int, int] | None = None
        self._unused: Any = None

    @property
    def monitors(self) -> list[dict[str, int]]:
        stream = self._stream()
        if stream is None:
            if self._size is None:
                self._unused = self._picture()
            assert self._size is not None
            width, height = self._size
            place = {"left": 0, "top": 0, "width": width, "height": height}
        else:
            place = {
                "left": stream.left,
                "top": stream.top,
                "width": stream.width,
                "height": stream.height,
            }
        return [dict(place), dict(place)]

    def _stream(self) -> Stream | None:
        """The ScreenCast stream; None on the Screenshot portal's way."""
        if self.desk.choose() == SCREENSHOT:
            return None
        try:
            return self.desk.stream()
        except PortalUnavailable as error:
            if self.desk.fall_back(error):
                return None
            raise ObservationError(
                f"the screen cannot be seen through the portal: {error}"
            ) from None
        except PortalDeclined as error:
            raise ObservationError(
                f"the screen cannot be seen through the portal: {error}"
            ) from None

    def _picture(self) -> Any:
        try:
            picture = self.desk.shots.take()
        except (PortalUnavailable, PortalDeclined) as error:
            raise ObservationError(
                f"the screen cannot be seen through the Screenshot portal: {error}"
            ) from None
        self._size = picture.size
        return picture

    def grab(self, region: Mapping[str, int]) -> _Grab:
        stream = self._stream()
        if stream is None:
            picture, self._unused = self._unused or self._picture(), None
            box = (
                region["left"],
                region["top"],
                region["left"] + region["width"],
                region["top"] + region["height"],
            )
            if box[0] < 0 or box[1] < 0 or box[2] > picture.width or box[3] > picture.height:
                raise ObservationError("the region lies outside the screen")
            if box != (0, 0, picture.width, picture.height):
                picture = picture.crop(box)
            return _Grab(picture.tobytes("raw", "BGRX"), picture.width, picture.height)
        try:
            frame = self.desk.frames().frame(after=self.desk.last_input)
        except FrameError as error:
            raise ObservationError(f"screen capture failed: {error}") from None
        left, top = region["left"] - stream.left, region["top"] - stream.top
        width, height = region["width"], region["height"]
        if (left, top, width, height) == (0, 0, frame.width, frame.height):
            return _Grab(frame.bgra, frame.width, frame.height)
        if left < 0 or top < 0 or left + width > frame.width or top + height > frame.height:
            raise ObservationError("the region lies outside the shared monitor")
        stride = frame.width * 4
        rows = (
            frame.bgra[(top + row) * stride + left * 4 : (top + row) * stride + (left + width) * 4]
            for row in range(height)
        )
        return _Grab(b"".join(rows), width, height)

    def close(self) -> None:
        """The desk outlives one capture: its owner closes it."""


#: pyautogui's key names (the tools' key vocabulary) as X keysym names
KEYSYM_NAMES = {
    "enter": "Return",
    "return": "Return",
    "tab": "Tab",
    "space": "space",
    "backspace": "BackSpace",
    "delete": "Delete",
    "del": "Delete",
    "esc": "Escape",
    "escape": "Escape",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "home": "Home",
    "end": "End",
    "pageup": "Prior",
    "pgup": "Prior",
    "pagedown": "Next",
    "pgdn": "Next",
    "insert": "Insert",
    "ctrl": "Control_L",
    "ctrlleft": "Control_L",
    "ctrlright": "Control_R",
    "control": "Control_L",
    "alt": "Alt_L",
    "altleft": "Alt_L",
    "altright": "Alt_R",
    "shift": "Shift_L",
    "shiftleft": "Shift_L",
    "shiftright": "Shift_R",
    "win": "Super_L",
    "winleft": "Super_L",
    "winright": "Super_R",
    "super": "Super_L",
    "command": "Super_L",
    "capslock": "Caps_Lock",
    "printscreen": "Print",
    "menu": "Menu",
    **{f"f{number}": f"F{number}" for number in range(1, 25)},
}
CHAR_KEYSYMS = {"\n": 0xFF0D, "\t": 0xFF09}


def keysym(key: str) -> int:
    """The X keysym of a key name or of one character; ToolError when there is none."""
    if len(key) == 1:
        code = ord(key)
        if key in CHAR_KEYSYMS:
            return CHAR_KEYSYMS[key]
        if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
            return code  # Latin-1 keysyms are their code points
        if code >= 0x100:
            return 0x01000000 | code  # the Unicode keysyms (X11 keysymdef.h)
        raise ToolError(f"there is no key {key!r} to press")
    name = KEYSYM_NAMES.get(key.lower())
    if name is None:
        raise ToolError(f"there is no key {key!r} to press on this system")
    from Xlib import XK

    return int(XK.string_to_keysym(name))


class PortalDriver:
    """InputDriver (and TextTyping, each character as its keysym) through the RemoteDesktop
    portal; each call runs inside an injection window of `injections`."""

    def __init__(self, desk: PortalDesk, injections: InjectionWindows | None = None) -> None:
        self.desk = desk
        self.injections = injections or InjectionWindows()

    @contextlib.contextmanager
    def _sending(self) -> Iterator[PortalSession]:
        try:
            with self.injections.injecting():
                yield self.desk.session
        except (PortalUnavailable, PortalDeclined) as error:
            raise ToolError(f"no input through the portal: {error}") from None
        finally:
            self.desk.last_input = time.monotonic()

    def ready(self) -> None:
        with self._sending():
            self.desk.session._require_input()

    def safe_point(self, x: int, y: int) -> tuple[int, int]:
        return x, y  # no fail-safe corner on Wayland (the pointer cannot be read)

    def move(self, x: int, y: int) -> None:
        with self._sending() as portal:
            portal.pointer_to(x, y)

    @staticmethod
    def _point(portal: PortalSession, x: int, y: int) -> None:
        """Move, then give the compositor time to apply it before a button: mutter 43 applies
        an absolute motion on its input thread, and a press sent at once was seen at the
        pointer's old place (measured on the headless desk; the portal offers nothing to
        wait on)."""
        portal.pointer_to(x, y)
        time.sleep(POINTER_SETTLE_S)

    def click(self, x: int, y: int, button: Any, clicks: int) -> None:
        with self._sending() as portal:
            self._point(portal, x, y)
            for _ in range(clicks):
                portal.button(button, True)
                portal.button(button, False)

    def mouse_down(self, x: int, y: int, button: Any) -> None:
        with self._sending() as portal:
            self._point(portal, x, y)
            portal.button(button, True)

    def mouse_up(self, x: int, y: int, button: Any) -> None:
        with self._sending() as portal:
            self._point(portal, x, y)
            portal.button(button, False)

    def scroll(self, amount: int, x: int | None, y: int | None) -> None:
        """`amount` notches, + up (the portal's discrete steps are + down)."""
        with self._sending() as portal:
            if x is not None and y is not None:
                portal.pointer_to(x, y)
            portal.scroll(VERTICAL, -amount)

    def _keys(self, keys: list[str]) -> None:
        codes = [keysym(key) for key in keys]  # all known before any goes down
        with self._sending() as portal:
            pressed: list[int] = []
            try:
                for code in codes:
                    portal.keysym(code, True)
                    pressed.append(code)
            finally:
                for code in reversed(pressed):
                    portal.keysym(code, False)

    def press(self, key: str) -> None:
        self._keys([key])

    def hotkey(self, keys: list[str]) -> None:
        self._keys(keys)

    @property
    def types_any_text(self) -> bool:
        """False: mutter 43 types a keysym only when the keyboard map has a key for it (an Ü
        sent on a US map was dropped without a word, measured), so the text of other
        characters takes the clipboard way, as on X11."""
        return False

    def type_char(self, char: str) -> None:
        self._keys([char])

    def key_down(self, key: str) -> None:
        code = keysym(key)
        with self._sending() as portal:
            portal.keysym(code, True)

    def key_up(self, key: str) -> None:
        code = keysym(key)
        with self._sending() as portal:
            portal.keysym(code, False)
