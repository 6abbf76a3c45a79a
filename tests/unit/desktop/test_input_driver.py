"""PyAutoGuiDriver over a fake pyautogui: fail-safe as a user stop, no pauses, safe corners."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from desktop_agent.core.errors import StopRequested, ToolError
from desktop_agent.desktop.input import PyAutoGuiDriver, typeable


class FailSafeException(Exception):  # noqa: N818 - pyautogui's name
    pass


class FakePyAutoGui(types.ModuleType):
    def __init__(self) -> None:
        super().__init__("pyautogui")
        self.FailSafeException = FailSafeException
        self.FAILSAFE = False
        self.FAILSAFE_POINTS = [(0, 0), (0, 1079), (1919, 0), (1919, 1079)]
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.in_corner = False

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self.in_corner:
            raise FailSafeException("PyAutoGUI fail-safe triggered")
        self.calls.append((name, args, kwargs))

    def click(self, *args: Any, **kwargs: Any) -> None:
        self._call("click", args, kwargs)

    def press(self, *args: Any, **kwargs: Any) -> None:
        self._call("press", args, kwargs)

    def hotkey(self, *args: Any, **kwargs: Any) -> None:
        self._call("hotkey", args, kwargs)

    def size(self) -> tuple[int, int]:
        return 1920, 1080

    def position(self) -> tuple[int, int]:
        return 5, 6


@pytest.fixture
def gui(monkeypatch: pytest.MonkeyPatch) -> FakePyAutoGui:
    fake = FakePyAutoGui()
    monkeypatch.setitem(sys.modules, "pyautogui", fake)
    return fake


def test_fail_safe_is_switched_on_and_calls_skip_pyautoguis_pause(gui: FakePyAutoGui) -> None:
    driver = PyAutoGuiDriver()

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
        PyAutoGuiDriver().press("a")


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
