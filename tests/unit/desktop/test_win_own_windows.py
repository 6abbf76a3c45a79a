"""Windows: the app's own windows are read at action time from user32 (EnumWindows, z-order),
untitled popups included, and a read that fails refuses the call (issue 37 item 4)."""

from __future__ import annotations

import os
import sys
import types
from dataclasses import dataclass, replace
from typing import Any

import pytest

from desktop_agent.core.errors import ObservationError
from desktop_agent.core.models import MonitorArea, Observation
from desktop_agent.core.own_windows import own_window_refusal
from desktop_agent.desktop.observer import DesktopObserver
from tests.unit.desktop import fake_ctypes
from tests.unit.desktop.fake_ctypes import ThreadErrors
from tests.unit.desktop.fake_windows import Function
from tests.unit.desktop.fakes import FakeCapture

PRIMARY = MonitorArea(1, 0, 0, 1920, 1080)
#: winuser.h / dwmapi.h
GWL_EXSTYLE, WS_EX_TRANSPARENT, DWMWA_CLOAKED = -20, 0x20, 14
ME = os.getpid()


@dataclass
class Window:
    hwnd: int
    pid: int
    rect: tuple[int, int, int, int]  # left, top, right, bottom
    visible: bool = True
    exstyle: int = 0
    cloaked: int = 0


class FakeUser32:
    """The top-level windows as user32 shows them (learn.microsoft.com, winuser.h):
    EnumWindows calls the callback with each top-level window's handle, topmost first (the
    z-order), until it answers FALSE, and answers nonzero — or 0 when it fails (`fail`);
    IsWindowVisible answers the WS_VISIBLE style, also for a window another window hides or
    DWM cloaks; GetWindowThreadProcessId fills the pid; GetWindowRect fills the window's
    rectangle in physical screen pixels (a per-monitor aware process), 0 for a window that
    is gone; GetWindowLongW(GWL_EXSTYLE) its extended style; GetForegroundWindow.
    dwmapi.DwmGetWindowAttribute(DWMWA_CLOAKED) answers S_OK (0) and the cloaked reason."""

    def __init__(self, windows: list[Window]) -> None:
        self.windows = windows  # topmost first
        self.fail = False
        self.foreground = 0
        self.gone: set[int] = set()
        self.user32 = types.SimpleNamespace(
            **{
                name: Function(getattr(self, name))
                for name in (
                    "EnumWindows", "IsWindowVisible", "GetWindowThreadProcessId",
                    "GetWindowRect", "GetWindowLongW", "GetForegroundWindow",
                )
            }
        )  # fmt: skip
        self.dwmapi = types.SimpleNamespace(
            DwmGetWindowAttribute=Function(self.DwmGetWindowAttribute)
        )
        self.errors = ThreadErrors()

    def last_error(self) -> int:
        """win_messages.SystemDlls.last_error, for a test that hands this fake over itself."""
        return self.errors.get()

    def _window(self, handle: Any) -> Window | None:
        value = int(getattr(handle, "value", handle) or 0)
        if value in self.gone:
            return None
        return next((window for window in self.windows if window.hwnd == value), None)

    def EnumWindows(self, callback: Any, param: int) -> int:  # noqa: N802
        if self.fail:
            self.errors.set(5)  # ERROR_ACCESS_DENIED
            return 0
        for window in self.windows:
            if not callback(window.hwnd, param):
                break
        return 1

    def IsWindowVisible(self, handle: Any) -> int:  # noqa: N802
        window = self._window(handle)
        return int(window is not None and window.visible)

    def GetWindowThreadProcessId(self, handle: Any, pid_ref: Any) -> int:  # noqa: N802
        window = self._window(handle)
        pid_ref._obj.value = window.pid if window else 0
        return 7 if window else 0

    def GetWindowRect(self, handle: Any, rect_ref: Any) -> int:  # noqa: N802
        window = self._window(handle)
        if window is None:
            return 0
        rect = rect_ref._obj  # RECT: LONG left, top, right, bottom
        rect.left, rect.top, rect.right, rect.bottom = window.rect
        return 1

    def GetWindowLongW(self, handle: Any, index: int) -> int:  # noqa: N802
        assert index == GWL_EXSTYLE
        window = self._window(handle)
        return window.exstyle if window else 0

    def GetForegroundWindow(self) -> int:  # noqa: N802
        return self.foreground

    def DwmGetWindowAttribute(self, handle: Any, what: int, value_ref: Any, size: int) -> int:  # noqa: N802
        assert what == DWMWA_CLOAKED and size == 4
        window = self._window(handle)
        value_ref._obj.value = window.cloaked if window else 0
        return 0


NOTEPAD = Window(0x100, 4100, (0, 0, 1200, 900))
#: a Qt menu of the app: no title, popped up over Notepad
OWN_MENU = Window(0x200, ME, (300, 200, 500, 500))
MAIN = Window(0x300, ME, (100, 100, 900, 700))


@pytest.fixture
def user32(monkeypatch: pytest.MonkeyPatch) -> FakeUser32:
    fake = FakeUser32([OWN_MENU, NOTEPAD])
    monkeypatch.setattr(sys, "platform", "win32")
    fake_ctypes.install(monkeypatch, fake, fake.errors)
    return fake


def observation() -> Observation:
    return Observation(image=b"", mime="image/jpeg", width=1920, height=1080)


async def windows_now(user32: FakeUser32) -> Any:
    observer = DesktopObserver(inventory=False, capture=FakeCapture(PRIMARY, (1920, 1080)))
    try:
        return await observer.own_windows_now(observation())
    finally:
        observer.close()


async def test_an_untitled_own_popup_is_found_and_a_click_on_it_refused(
    user32: FakeUser32,
) -> None:
    now = await windows_now(user32)

    # on old main: None, and the click on the app's own menu went through
    assert now is not None and [window.box for window in now] == [(300, 200, 200, 300)]
    seen = observation().with_(own_windows=now)
    assert "app's own window" in own_window_refusal("click", {"x": 400, "y": 300}, seen)
    assert own_window_refusal("click", {"x": 1000, "y": 800}, seen) == ""


@pytest.mark.parametrize(
    ("above", "refused"),
    [
        (NOTEPAD, False),  # Notepad covers the main window there: the click is Notepad's
        (replace(NOTEPAD, exstyle=WS_EX_TRANSPARENT), True),  # a click-through overlay
        (replace(NOTEPAD, cloaked=2), True),  # on another virtual desktop: not drawn
        (replace(NOTEPAD, visible=False), True),
    ],
)
async def test_only_a_window_that_takes_the_click_covers_the_apps_own(
    user32: FakeUser32, above: Window, refused: bool
) -> None:
    user32.windows = [above, MAIN]

    now = await windows_now(user32)

    seen = observation().with_(own_windows=now)
    assert bool(own_window_refusal("click", {"x": 500, "y": 400}, seen)) is refused


@pytest.mark.parametrize("how", ["enum_fails", "own_rect_gone"])
async def test_own_windows_that_cannot_be_read_are_an_error_not_none(
    user32: FakeUser32, how: str
) -> None:
    if how == "enum_fails":
        user32.fail = True
    else:
        user32.gone.add(OWN_MENU.hwnd)
        user32.windows = [OWN_MENU, NOTEPAD]
        # visible, its pid read, then its rectangle cannot be: not known where it is
        user32.IsWindowVisible = lambda handle: 1  # type: ignore[method-assign]
        user32.user32.IsWindowVisible = Function(user32.IsWindowVisible)

        def thread_process_id(handle: object, ref: Any) -> int:
            ref._obj.value = ME
            return 7

        user32.user32.GetWindowThreadProcessId = Function(thread_process_id)

    with pytest.raises(ObservationError):
        await windows_now(user32)


async def test_another_programs_window_that_closed_meanwhile_is_skipped(
    user32: FakeUser32,
) -> None:
    user32.windows = [NOTEPAD, MAIN]
    user32.gone.add(NOTEPAD.hwnd)

    now = await windows_now(user32)

    assert now is not None and [window.box for window in now] == [(100, 100, 800, 600)]


async def test_the_apps_own_menu_on_a_150_percent_monitor_left_of_the_primary_is_refused(
    user32: FakeUser32,
) -> None:
    # issue 33 item 5 on Windows: GetWindowRect answers physical pixels in a per-monitor-v2
    # process, negative left of the primary; the refusal maps them into the image of the
    # monitor shown (2880 x 1620 physical at x = -2880, shown at 1280 x 720)
    from desktop_agent.desktop.geometry import mapping_for

    left = MonitorArea(1, -2880, 0, 2880, 1620)
    menu = Window(0x400, ME, (-2000, 300, -1700, 700))
    user32.windows = [menu, replace(NOTEPAD, rect=(-2880, 0, 0, 1580))]
    seen = Observation(
        image=b"", mime="image/jpeg", width=1280, height=720, mapping=mapping_for(left, (1280, 720))
    )
    observer = DesktopObserver(inventory=False, capture=FakeCapture(left, (1280, 720)))
    try:
        now = await observer.own_windows_now(seen)
    finally:
        observer.close()

    assert now is not None and len(now) == 1
    seen = seen.with_(own_windows=now)
    # the menu's middle, (-1850, 500) physical, is image (456, 222)
    assert "app's own window" in own_window_refusal("click", {"x": 456, "y": 222}, seen)
    assert own_window_refusal("click", {"x": 100, "y": 100}, seen) == ""
