"""Injection windows, the driver's marking of them, and the Windows hooks' reading of flags."""

from __future__ import annotations

import ctypes
import sys
import threading

import pytest

from desktop_agent.core.errors import StopRequested
from desktop_agent.desktop.input import PyAutoGuiDriver
from desktop_agent.desktop.takeover import (
    HC_ACTION,
    KBDLLHOOKSTRUCT,
    LLKHF_INJECTED,
    LLMHF_INJECTED,
    MSLLHOOKSTRUCT,
    InjectionWindows,
    LowLevelHooks,
    UserInputs,
)
from tests.fakes import ManualClock
from tests.unit.desktop.fake_pyautogui import FakePyAutoGui


class Recorder:
    """A fence writing down what it was told."""

    def __init__(self, log: list[str], name: str = "") -> None:
        self.log = log
        self.name = name

    def opened(self) -> None:
        self.log.append(f"{self.name}open")

    def closed(self) -> None:
        self.log.append(f"{self.name}close")


def test_a_window_opens_and_closes_its_fences_around_the_call_also_when_it_raises() -> None:
    windows = InjectionWindows()
    log: list[str] = []
    assert windows.add_fence(Recorder(log)) == 0

    with windows.injecting():
        log.append("input")
        assert windows.active
    with pytest.raises(RuntimeError), windows.injecting():
        raise RuntimeError("pyautogui failed")

    assert log == ["open", "input", "close", "open", "close"]
    assert not windows.active


def test_a_fence_added_inside_a_window_learns_the_depth_and_a_removed_one_hears_nothing() -> None:
    windows = InjectionWindows()
    log: list[str] = []
    early, late = Recorder(log, "early "), Recorder(log, "late ")
    windows.add_fence(early)

    with windows.injecting():
        assert windows.add_fence(late) == 1  # the watcher starts inside a window
        with windows.injecting():
            pass
    windows.remove_fence(early)
    windows.remove_fence(early)  # twice is harmless
    with windows.injecting():
        pass

    assert log == [
        "early open",
        "early open",
        "late open",
        "early close",
        "late close",
        "early close",
        "late close",
        "late open",
        "late close",
    ]


def test_windows_from_two_threads_never_interleave_a_fence_call() -> None:
    windows = InjectionWindows()
    inside = threading.Event()
    overlap: list[bool] = []

    class Slow:
        busy = False

        def _mark(self) -> None:
            overlap.append(self.busy)
            self.busy = True
            inside.wait(0.001)  # widen the race a lock must close
            self.busy = False

        opened = closed = _mark

    windows.add_fence(Slow())

    def inject() -> None:
        for _ in range(20):
            with windows.injecting():
                pass

    threads = [threading.Thread(target=inject) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(overlap) == 120
    assert not any(overlap)


def test_every_pyautogui_call_of_the_driver_runs_inside_a_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gui = FakePyAutoGui("x11")
    monkeypatch.setitem(sys.modules, "pyautogui", gui)
    windows = InjectionWindows()
    driver = PyAutoGuiDriver(windows, windows=False)
    seen: list[tuple[str, bool]] = []
    original = gui._call

    def record(name: str, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
        seen.append((name, windows.active))
        original(name, args, kwargs)

    monkeypatch.setattr(gui, "_call", record)

    driver.click(10, 20, "left", 1)
    driver.press("a")
    driver.hotkey(["ctrl", "v"])  # the clipboard paste's only input
    gui.in_corner = True
    with pytest.raises(StopRequested):
        driver.press("b")

    assert seen == [("click", True), ("press", True), ("hotkey", True), ("press", True)]
    assert not windows.active  # the fail-safe's exception closed its window too
    assert driver.injections is windows
    assert isinstance(PyAutoGuiDriver().injections, InjectionWindows)


class NextHook:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int, int]] = []

    def __call__(self, n_code: int, w_param: int, l_param: int) -> int:
        self.calls.append((n_code, w_param, l_param))
        return 7


WM_KEYDOWN, WM_MOUSEMOVE = 0x0100, 0x0200


@pytest.mark.parametrize(
    ("flags", "reported"),
    [(0, 1), (LLKHF_INJECTED, 0), (LLKHF_INJECTED | 0x02, 0), (0x20, 1)],
    ids=["a key of the keyboard", "injected", "injected at lower integrity", "with alt held"],
)
def test_the_keyboard_hook_reports_keys_from_a_device_only(flags: int, reported: int) -> None:
    reports: list[None] = []
    following = NextHook()
    hooks = LowLevelHooks(lambda: reports.append(None), following)
    data = KBDLLHOOKSTRUCT(vkCode=0x41, scanCode=30, flags=flags, time=1, dwExtraInfo=0)
    address = ctypes.addressof(data)

    assert hooks.keyboard(HC_ACTION, WM_KEYDOWN, address) == 7

    assert len(reports) == reported
    assert following.calls == [(HC_ACTION, WM_KEYDOWN, address)]  # always passed on


@pytest.mark.parametrize(
    ("flags", "reported"),
    [(0, 1), (LLMHF_INJECTED, 0), (LLMHF_INJECTED | 0x02, 0)],
    ids=["a mouse", "injected", "injected at lower integrity"],
)
def test_the_mouse_hook_reports_moves_from_a_device_only(flags: int, reported: int) -> None:
    reports: list[None] = []
    hooks = LowLevelHooks(lambda: reports.append(None), NextHook())
    data = MSLLHOOKSTRUCT(x=5, y=6, mouseData=0, flags=flags, time=1, dwExtraInfo=0)

    hooks.mouse(HC_ACTION, WM_MOUSEMOVE, ctypes.addressof(data))

    assert len(reports) == reported


def test_a_hook_call_that_is_not_an_action_is_only_passed_on() -> None:
    reports: list[None] = []
    following = NextHook()
    hooks = LowLevelHooks(lambda: reports.append(None), following)
    data = MSLLHOOKSTRUCT(flags=0)

    hooks.mouse(-1, WM_MOUSEMOVE, ctypes.addressof(data))

    assert reports == []
    assert len(following.calls) == 1


def test_a_failing_callback_does_not_break_the_hook(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> None:
        raise RuntimeError("the loop is closed")

    hooks = LowLevelHooks(UserInputs(broken), NextHook())
    data = KBDLLHOOKSTRUCT(flags=0)

    assert hooks.keyboard(HC_ACTION, WM_KEYDOWN, ctypes.addressof(data)) == 7
    assert "the takeover callback failed" in caplog.text


def test_user_inputs_keep_the_time_of_the_last_report() -> None:
    clock = ManualClock()
    reports: list[float] = []
    inputs = UserInputs(lambda: reports.append(clock()), clock)

    assert inputs.idle_s() == float("inf")  # no input yet
    inputs()
    clock.advance(1.5)
    assert inputs.idle_s() == 1.5
    inputs()
    assert inputs.idle_s() == 0.0
    assert reports == [1000.0, 1001.5]
