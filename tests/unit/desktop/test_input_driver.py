"""PyAutoGuiDriver over a fake pyautogui: fail-safe as a user stop, no pauses, safe corners."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import pytest

from desktop_agent.core.errors import StopRequested, ToolError
from desktop_agent.core.keys import normalize_key
from desktop_agent.desktop import win_input
from desktop_agent.desktop.input import PyAutoGuiDriver, typeable
from desktop_agent.desktop.win_input import AGENT_INPUT_TAG
from tests.unit.desktop.fake_pyautogui import FakePyAutoGui

__all__ = ["FakePyAutoGui"]


@pytest.fixture
def gui(monkeypatch: pytest.MonkeyPatch) -> FakePyAutoGui:
    fake = FakePyAutoGui("x11")
    monkeypatch.setitem(sys.modules, "pyautogui", fake)
    return fake


@pytest.fixture
def windows_gui(monkeypatch: pytest.MonkeyPatch) -> FakePyAutoGui:
    fake = FakePyAutoGui("win32")
    monkeypatch.setitem(sys.modules, "pyautogui", fake)
    return fake


#: the virtual desktop: a 1920×1080 primary and a 1280×1024 monitor left of it
DESK = (-1280, 0, 3200, 1080)


class User32:
    """SendInput, MapVirtualKeyW and GetSystemMetrics: records each batch with where the
    pointer was when the batch's last event went in. An absolute move lands where Windows
    puts it: origin + n * size // 65536 on the virtual desktop ("MOUSEINPUT structure")."""

    def __init__(self, gui: FakePyAutoGui) -> None:
        self.gui = gui
        self.batches: list[tuple[list[win_input.INPUT], tuple[int, int]]] = []

    def send_input(self, inputs: Sequence[win_input.INPUT]) -> int:
        left, top, width, height = DESK
        for event in inputs:
            flags = event.mi.dwFlags if event.type == win_input.INPUT_MOUSE else 0
            if flags & win_input.MOUSEEVENTF_MOVE and flags & win_input.MOUSEEVENTF_ABSOLUTE:
                assert flags & win_input.MOUSEEVENTF_VIRTUALDESK
                self.gui.pointer = (
                    left + event.mi.dx * width // 65536,
                    top + event.mi.dy * height // 65536,
                )
        self.batches.append((list(inputs), self.gui.pointer))
        return len(inputs)

    @staticmethod
    def virtual_desk() -> tuple[int, int, int, int]:
        return DESK

    @staticmethod
    def scan_code(vk: int) -> int:
        return {0x10: 0x2A, 0x11: 0x1D, 0x25: 0x4B, 0x24: 0x47, 0x41: 0x1E}.get(vk, vk & 0x7F)

    def key_events(self) -> list[tuple[int, int, int]]:
        return [
            (event.ki.wVk, event.ki.wScan, event.ki.dwFlags)
            for batch, _ in self.batches
            for event in batch
            if event.type == win_input.INPUT_KEYBOARD
        ]


def windows_driver(gui: FakePyAutoGui) -> tuple[PyAutoGuiDriver, User32]:
    user32 = User32(gui)
    driver = PyAutoGuiDriver(
        windows=True,
        send_input=user32.send_input,
        scan_code=user32.scan_code,
        virtual_desk=user32.virtual_desk,
    )
    return driver, user32


def test_scroll_on_windows_is_notches_at_the_point(windows_gui: FakePyAutoGui) -> None:
    # pyautogui's own Windows scroll turns the wheel by 3/120 of a notch where the pointer is
    driver, user32 = windows_driver(windows_gui)

    driver.scroll(3, 400, 300)
    driver.scroll(-2, None, None)

    assert [(event.mi.dwFlags, event.mi.mouseData) for batch, _ in user32.batches
            for event in batch if event.mi.dwFlags & win_input.MOUSEEVENTF_WHEEL] == [
        (win_input.MOUSEEVENTF_WHEEL, 360),
        (win_input.MOUSEEVENTF_WHEEL, (-240) & 0xFFFFFFFF),
    ]  # fmt: skip
    # the move and the wheel in one batch; the second turns where the pointer rests
    assert [(len(batch), where) for batch, where in user32.batches] == [
        (2, (400, 300)),
        (1, (400, 300)),
    ]
    assert windows_gui.events == []  # nothing went through pyautogui's wheel


def test_scroll_on_x11_is_notches_at_the_point(gui: FakePyAutoGui) -> None:
    driver = PyAutoGuiDriver(windows=False)

    driver.scroll(3, 400, 300)
    driver.scroll(-1, None, None)

    assert gui.events == [("button", 4, (400, 300))] * 3 + [("button", 5, (400, 300))]


def test_windows_keys_carry_scan_codes_and_extended_keys_the_extended_flag(
    windows_gui: FakePyAutoGui,
) -> None:
    # keybd_event(vk, 0, 0) without KEYEVENTF_EXTENDEDKEY: with NumLock on, shift+left is
    # read as the numpad's 4 and the shift is dropped (pyautogui #590, #522)
    driver, user32 = windows_driver(windows_gui)
    ext, up = win_input.KEYEVENTF_EXTENDEDKEY, win_input.KEYEVENTF_KEYUP

    driver.hotkey(["shift", "left"])
    driver.press("home")
    driver.press("A")

    assert [len(batch) for batch, _ in user32.batches] == [4, 2, 4]  # one SendInput each
    assert user32.key_events() == [
        (0x10, 0x2A, 0), (0x25, 0x4B, ext), (0x25, 0x4B, ext | up), (0x10, 0x2A, up),
        (0x24, 0x47, ext), (0x24, 0x47, ext | up),
        (0x10, 0x2A, 0), (0x41, 0x1E, 0), (0x41, 0x1E, up), (0x10, 0x2A, up),
    ]  # fmt: skip
    assert windows_gui.events == []  # no keybd_event


def test_a_refused_send_input_is_a_failed_step(windows_gui: FakePyAutoGui) -> None:
    driver = PyAutoGuiDriver(windows=True, send_input=lambda inputs: 0, scan_code=lambda vk: 0)

    with pytest.raises(ToolError, match="Windows took 0 of 2 input events"):
        driver.press("enter")


def test_a_combination_windows_took_in_part_leaves_no_key_held(
    windows_gui: FakePyAutoGui,
) -> None:
    # SendInput "returns the number of events that it successfully inserted into the keyboard
    # or mouse input stream" (learn.microsoft.com, winuser.h SendInput): ctrl and v went down,
    # their ups did not go in
    batches: list[list[tuple[int, bool]]] = []

    def send_input(inputs: Sequence[win_input.INPUT]) -> int:
        batches.append([(e.ki.wVk, bool(e.ki.dwFlags & win_input.KEYEVENTF_KEYUP)) for e in inputs])
        return 2 if len(batches) == 1 else len(inputs)

    driver = PyAutoGuiDriver(windows=True, send_input=send_input, scan_code=lambda vk: 0)

    with pytest.raises(ToolError, match="Windows took 2 of 4 input events"):
        driver.hotkey(["ctrl", "v"])
    assert batches[1:] == [[(0x56, True), (0x11, True)]]  # let go, the last down first


@pytest.mark.parametrize("platform", ["win32", "x11"])
def test_a_key_pyautogui_does_not_know_fails_before_any_key_goes_down(
    monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    # pyautogui's press of an unknown name returns silently: the step would say "pressed"
    gui = FakePyAutoGui(platform)
    monkeypatch.setitem(sys.modules, "pyautogui", gui)
    user32 = User32(gui)
    driver = PyAutoGuiDriver(
        windows=platform == "win32", send_input=user32.send_input, scan_code=user32.scan_code
    )

    with pytest.raises(ToolError, match="there is no key 'menu' to press on this system"):
        driver.hotkey(["shift", "menu"])
    with pytest.raises(ToolError, match="no key 'browserback'"):
        driver.press("browserback")

    assert gui.events == [] and user32.batches == []


@pytest.mark.parametrize("platform", ["win32", "x11"])
def test_the_menu_key_is_pressed_as_pyautoguis_apps(
    monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    gui = FakePyAutoGui(platform)
    monkeypatch.setitem(sys.modules, "pyautogui", gui)
    user32 = User32(gui)
    driver = PyAutoGuiDriver(
        windows=platform == "win32", send_input=user32.send_input, scan_code=user32.scan_code
    )

    driver.press(normalize_key("menu"))

    if platform == "win32":
        assert [vk for vk, _, _ in user32.key_events()] == [0x5D, 0x5D]
    else:
        assert gui.events == [("key", "apps", "down"), ("key", "apps", "up")]


def test_every_key_name_the_tools_accept_is_one_pyautogui_knows() -> None:
    from desktop_agent.core.keys import KEY_NAMES

    gui = FakePyAutoGui("win32")
    assert sorted(name for name in KEY_NAMES if not gui.isValidKey(name)) == []


def test_fail_safe_is_switched_on_and_calls_skip_pyautoguis_pause(gui: FakePyAutoGui) -> None:
    driver = PyAutoGuiDriver(windows=False)

    driver.click(10, 20, "right", 2)
    driver.press("a")
    driver.hotkey(["ctrl", "s"])

    assert gui.FAILSAFE is True
    assert gui.calls == [
        ("click", (10, 20), {"_pause": False, "clicks": 2, "interval": 0.05, "button": "right"}),
        ("press", ("a",), {"_pause": False}),
        ("hotkey", ("ctrl", "s"), {"_pause": False}),
    ]


def test_the_fail_safe_corner_is_a_user_stop(gui: FakePyAutoGui) -> None:
    gui.in_corner = True

    with pytest.raises(StopRequested, match="screen corner"):
        PyAutoGuiDriver(windows=False).press("a")


def test_the_fail_safe_corner_is_a_user_stop_on_windows_too(windows_gui: FakePyAutoGui) -> None:
    driver, user32 = windows_driver(windows_gui)
    windows_gui.in_corner = True

    with pytest.raises(StopRequested, match="screen corner"):
        driver.press("a")
    assert user32.batches == []


def test_a_button_held_is_let_go_where_the_pointer_is_in_a_fail_safe_corner(
    gui: FakePyAutoGui,
) -> None:
    driver = PyAutoGuiDriver(windows=False)
    driver.mouse_down(500, 400, "left")
    gui.pointer = (0, 0)  # the user threw the pointer into the corner mid-drag

    driver.mouse_up(520, 420, "left")

    assert gui.calls[-1] == ("_mouseUp", (0, 0, "left"), {})
    assert gui.pointer == (0, 0)


def test_a_button_held_is_let_go_in_a_fail_safe_corner_on_windows(
    windows_gui: FakePyAutoGui,
) -> None:
    driver, user32 = windows_driver(windows_gui)
    driver.mouse_down(500, 400, "left")
    windows_gui.pointer = (0, 0)

    driver.mouse_up(520, 420, "left")

    release, where = user32.batches[-1]
    assert [(e.mi.dwFlags, e.mi.dwExtraInfo) for e in release] == [(0x0004, AGENT_INPUT_TAG)]
    assert where == (0, 0)  # let go there, not moved back out


def test_every_windows_event_carries_our_mark_and_clicks_land_on_the_pixel(
    windows_gui: FakePyAutoGui,
) -> None:
    # the takeover watch tells ours from any other program's injected input by dwExtraInfo;
    # on old main the pointer went through pyautogui's SetCursorPos and mouse_event, unmarked
    driver, user32 = windows_driver(windows_gui)
    points = [(-1280, 0), (-1, 517), (0, 1), (1918, 1078), (1919, 5), (733, 411)]

    for x, y in points:
        driver.click(x, y, "left", 2)
        assert user32.batches[-1][1] == (x, y)
    driver.move(10, 20)
    driver.mouse_down(30, 40, "right")
    driver.mouse_up(50, 60, "right")
    driver.scroll(-1, 70, 80)
    driver.hotkey(["ctrl", "a"])

    events = [event for batch, _ in user32.batches for event in batch]
    tags = {
        (event.mi if event.type == win_input.INPUT_MOUSE else event.ki).dwExtraInfo
        for event in events
    }
    assert tags == {AGENT_INPUT_TAG}
    assert windows_gui.calls == [] and windows_gui.events == []  # nothing through pyautogui
    first_click = [event.mi.dwFlags for event in user32.batches[0][0]]
    assert first_click == [0xC001, 0x0002, 0x0004, 0x0002, 0x0004]  # move, down, up ×2


def test_a_button_is_let_go_where_the_drag_left_it_out_of_the_corners(gui: FakePyAutoGui) -> None:
    driver = PyAutoGuiDriver(windows=False)

    driver.mouse_up(520, 420, "left")

    assert gui.calls == [("_mouseUp", (520, 420, "left"), {})]


@pytest.mark.parametrize(
    ("point", "safe"),
    [((0, 0), (1, 1)), ((1919, 1079), (1918, 1078)), ((0, 1079), (1, 1078)), ((5, 0), (5, 0))],
)
def test_points_on_fail_safe_corners_move_one_pixel_in(
    gui: FakePyAutoGui, point: tuple[int, int], safe: tuple[int, int]
) -> None:
    assert PyAutoGuiDriver().safe_point(*point) == safe


def test_pyautogui_without_a_display_is_a_tool_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class Importer:
        def find_spec(self, name: str, *args: Any) -> None:
            if name == "pyautogui":
                raise KeyError("DISPLAY")
            return None

    monkeypatch.delitem(sys.modules, "pyautogui", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Importer(), *sys.meta_path])

    with pytest.raises(ToolError, match="no X display: DISPLAY is not set"):
        PyAutoGuiDriver().press("a")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Hello, world! ~{}\n\t", True), ("héllo", False), ("€", False), ("日本", False)],
)
def test_only_printable_ascii_newline_and_tab_are_typed_as_keys(text: str, expected: bool) -> None:
    assert typeable(text) is expected


def test_a_key_held_is_let_go_in_a_fail_safe_corner_on_x11(gui: FakePyAutoGui) -> None:
    driver = PyAutoGuiDriver(windows=False)
    driver.key_down("shift")
    gui.in_corner = True  # the user threw the pointer into the corner while it was held

    driver.key_up("shift")

    assert gui.calls[-1] == ("_keyUp", ("shift",), {})
    assert gui.events[-1] == ("key", "shift", "up")


def test_a_key_held_is_let_go_in_a_fail_safe_corner_on_windows(windows_gui: FakePyAutoGui) -> None:
    driver, _ = windows_driver(windows_gui)
    driver.key_down("shift")
    windows_gui.in_corner = True

    driver.key_up("shift")

    assert windows_gui.calls[-1] == ("_keyUp", ("shift",), {})
    assert windows_gui.events[-2:] == [
        ("keybd_event", 0x10, 0),
        ("keybd_event", 0x10, win_input.KEYEVENTF_KEYUP),
    ]
