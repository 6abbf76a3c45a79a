"""Windows: the clicks of a double or triple click stop where the top-level window under the
point changed, read from user32 between the clicks (win_windows.Win32WindowAtPoint), as on
X11 (tests/unit/desktop/test_click_under_point.py). Before, Windows sent them unchecked."""

from __future__ import annotations

import copy
import ctypes
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

from desktop_agent.core.errors import DesktopChanged
from desktop_agent.desktop.executor import window_at_point_of
from desktop_agent.desktop.input import Button, PyAutoGuiDriver
from desktop_agent.desktop.win_windows import GA_ROOT, POINT, Win32WindowAtPoint
from tests.unit.desktop.fake_windows import Function
from tests.unit.desktop.fakes import FakeDriver, executor_with
from tests.unit.desktop.test_executor import run


@dataclass
class Window:
    hwnd: int
    rect: tuple[int, int, int, int]  # left, top, right, bottom
    visible: bool = True
    enabled: bool = True
    children: list[Window] = field(default_factory=list)


class FakeUser32:
    """user32's reads of what is at a point (learn.microsoft.com, winuser.h):
    WindowFromPoint(POINT) answers the window that holds the point — the deepest child
    control there, in the topmost top-level window holding it — and never a hidden or a
    disabled window ("does not retrieve a handle to a hidden or disabled window, even if the
    point is within the window"), NULL where no window is; GetAncestor(hwnd, GA_ROOT) answers
    the top-level window a window is in (itself for a top-level one), NULL for a handle that
    is no window. `desktop`: the desktop's own window, under every other (Progman)."""

    def __init__(self, windows: list[Window]) -> None:
        self.windows = copy.deepcopy(windows)  # topmost first; a test changes its own
        self.calls: list[tuple[str, Any]] = []
        self.user32 = types.SimpleNamespace(
            WindowFromPoint=Function(self.WindowFromPoint),
            GetAncestor=Function(self.GetAncestor),
        )

    @staticmethod
    def _holds(window: Window, x: int, y: int) -> bool:
        left, top, right, bottom = window.rect
        return window.visible and window.enabled and left <= x < right and top <= y < bottom

    def WindowFromPoint(self, point: POINT) -> int | None:  # noqa: N802
        assert isinstance(point, POINT)  # by value, as argtypes says
        self.calls.append(("WindowFromPoint", (point.x, point.y)))
        for window in self.windows:
            if self._holds(window, point.x, point.y):
                child = next((c for c in window.children if self._holds(c, point.x, point.y)), None)
                return (child or window).hwnd
        return None  # c_void_p's restype gives None for NULL

    def GetAncestor(self, handle: int, flags: int) -> int | None:  # noqa: N802
        assert flags == GA_ROOT
        self.calls.append(("GetAncestor", handle))
        for window in self.windows:
            if handle == window.hwnd or handle in [c.hwnd for c in window.children]:
                return window.hwnd
        return None


#: on the monitor left of the primary (test_executor.MAPPING: screenshot (640, 360) is the
#: screen's (-960, 540)); the file list is a child control
EXPLORER = Window(0x200, (-1920, 0, 0, 1040), children=[Window(0x210, (-1720, 100, -20, 1000))])
DESKTOP = Window(0x10010, (-1920, 0, 1920, 1080))  # Progman
#: "Delete this file?" coming up over the point after the first click
CONFIRM = Window(0x300, (-1120, 400, -720, 600), children=[Window(0x310, (-1000, 520, -900, 560))])


def test_the_read_gives_the_top_level_window_of_the_control_at_the_point() -> None:
    user32 = FakeUser32([EXPLORER, DESKTOP])
    read = Win32WindowAtPoint(user32)

    assert read(-960, 540) == "win32:0x200"  # the file list (a child) is in Explorer
    assert read(-10, 1060) == "win32:0x10010"  # below Explorer: the desktop here
    assert user32.calls[:2] == [("WindowFromPoint", (-960, 540)), ("GetAncestor", 0x210)]
    assert user32.user32.WindowFromPoint.argtypes == (POINT,)
    assert user32.user32.WindowFromPoint.restype is ctypes.c_void_p


def test_no_window_at_the_point_or_no_user32_tells_nothing() -> None:
    assert Win32WindowAtPoint(FakeUser32([]))(5, 5) is None
    # off Windows there is no ctypes.WinDLL: the system DLLs cannot be loaded
    assert Win32WindowAtPoint()(5, 5) is None


class ClickBringsUpConfirm(FakeDriver):
    """The first click makes Explorer show a modal "Delete this file?" dialog: it comes up
    over the point, or elsewhere, disabling Explorer (its owner)."""

    def __init__(self, user32: FakeUser32, *, over_the_point: bool) -> None:
        super().__init__()
        self.user32, self.over = user32, over_the_point

    def click(self, x: int, y: int, button: Button, clicks: int) -> None:
        super().click(x, y, button, clicks)
        if len(self.events) == 1:
            explorer = next(w for w in self.user32.windows if w.hwnd == EXPLORER.hwnd)
            explorer.enabled = False
            confirm = CONFIRM if self.over else Window(0x300, (100, 100, 400, 300))
            self.user32.windows.insert(0, confirm)


@pytest.mark.parametrize("over_the_point", [True, False])
async def test_a_modal_dialog_after_the_first_click_stops_the_second(over_the_point: bool) -> None:
    # over the point, the second click would press its default button; elsewhere, Explorer
    # is disabled and the read gives what lies under it: the desktop changed either way
    user32 = FakeUser32([EXPLORER, DESKTOP])
    driver = ClickBringsUpConfirm(user32, over_the_point=over_the_point)
    executor = executor_with(driver)
    executor.window_at = Win32WindowAtPoint(user32)

    with pytest.raises(DesktopChanged, match="^after 1 of 2 clicks the window under the point"):
        await run(executor, "click", x=640, y=360, clicks=2)
    assert len(driver.events) == 1


async def test_an_ordinary_double_click_on_windows_reads_the_point_before_and_between() -> None:
    user32 = FakeUser32([EXPLORER, DESKTOP])
    driver = FakeDriver()
    executor = executor_with(driver)
    executor.window_at = Win32WindowAtPoint(user32)

    result = await run(executor, "click", x=640, y=360, clicks=2)

    assert result.summary == "clicked (640, 360) twice"
    assert [call for call in user32.calls if call[0] == "WindowFromPoint"] == [
        ("WindowFromPoint", (-960, 540))
    ] * 2


def test_pyautogui_on_windows_reads_user32(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("desktop_agent.desktop.executor.sys.platform", "win32")
    assert isinstance(window_at_point_of(PyAutoGuiDriver()), Win32WindowAtPoint)
    assert window_at_point_of(FakeDriver()) is None
