"""Injection windows, the driver's marking of them, and the Windows hooks' reading of flags."""

from __future__ import annotations

import ctypes
import queue
import sys
import threading
import time
from collections.abc import Callable

import pytest

from desktop_agent.core.errors import StopRequested
from desktop_agent.desktop.input import PyAutoGuiDriver
from desktop_agent.desktop.takeover import InjectionWindows, UserInputs, start_takeover_watch
from desktop_agent.desktop.takeover import windows as windows_hooks
from desktop_agent.desktop.takeover.windows import (
    HC_ACTION,
    KBDLLHOOKSTRUCT,
    LLKHF_INJECTED,
    LLMHF_INJECTED,
    MSLLHOOKSTRUCT,
    HookEvent,
    HookHealth,
    LowLevelHooks,
)
from desktop_agent.desktop.win_input import AGENT_INPUT_TAG
from tests.fakes import ManualClock
from tests.unit.desktop import fake_ctypes
from tests.unit.desktop.fake_pyautogui import FakePyAutoGui
from tests.unit.desktop.fake_windows import FakeWindows


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


def queued(events: queue.SimpleQueue[HookEvent]) -> list[HookEvent]:
    out = []
    while not events.empty():
        out.append(events.get())
    return out


#: (flags, dwExtraInfo) of an event and whether it is the user's: only our mark makes it ours.
#: Another program's injection (remote control, the on-screen keyboard, Mouse Without
#: Borders) is the user's at the other end; on old main every injected event was taken as ours
SOURCES = [
    pytest.param(0, 0, True, id="a key of the keyboard"),
    pytest.param(LLKHF_INJECTED, AGENT_INPUT_TAG, False, id="ours"),
    pytest.param(LLKHF_INJECTED | 0x02, AGENT_INPUT_TAG, False, id="ours at lower integrity"),
    pytest.param(LLKHF_INJECTED, 0, True, id="another program's injected key"),
    pytest.param(LLKHF_INJECTED, 0x1234, True, id="injected with another program's mark"),
    pytest.param(0x20, 0, True, id="with alt held"),
]


@pytest.mark.parametrize(("flags", "extra", "users"), SOURCES)
def test_the_keyboard_hook_only_queues_the_event_and_passes_it_on(
    flags: int, extra: int, users: bool
) -> None:
    events: queue.SimpleQueue[HookEvent] = queue.SimpleQueue()
    following = NextHook()
    hooks = LowLevelHooks(events, following)
    data = KBDLLHOOKSTRUCT(vkCode=0x41, scanCode=30, flags=flags, time=77, dwExtraInfo=extra)
    address = ctypes.addressof(data)

    assert hooks.keyboard(HC_ACTION, WM_KEYDOWN, address) == 7

    assert queued(events) == [(users, 77)]
    assert following.calls == [(HC_ACTION, WM_KEYDOWN, address)]  # always passed on


@pytest.mark.parametrize(
    ("flags", "extra", "users"),
    [
        pytest.param(0, 0, True, id="a mouse"),
        pytest.param(LLMHF_INJECTED, AGENT_INPUT_TAG, False, id="ours"),
        pytest.param(LLMHF_INJECTED | 0x02, AGENT_INPUT_TAG, False, id="ours, lower integrity"),
        pytest.param(LLMHF_INJECTED, 0, True, id="another program's (SetCursorPos, mouse_event)"),
        pytest.param(0, 0xFF515700, True, id="a pen or touch promoted to the mouse"),
    ],
)
def test_the_mouse_hook_only_queues_the_event(flags: int, extra: int, users: bool) -> None:
    events: queue.SimpleQueue[HookEvent] = queue.SimpleQueue()
    hooks = LowLevelHooks(events, NextHook())
    data = MSLLHOOKSTRUCT(x=5, y=6, mouseData=0, flags=flags, time=5, dwExtraInfo=extra)

    hooks.mouse(HC_ACTION, WM_MOUSEMOVE, ctypes.addressof(data))

    assert queued(events) == [(users, 5)]


def test_a_hook_call_that_is_not_an_action_is_only_passed_on() -> None:
    events: queue.SimpleQueue[HookEvent] = queue.SimpleQueue()
    following = NextHook()
    hooks = LowLevelHooks(events, following)
    data = MSLLHOOKSTRUCT(flags=0)

    hooks.mouse(-1, WM_MOUSEMOVE, ctypes.addressof(data))

    assert queued(events) == []
    assert len(following.calls) == 1


def test_hook_health_counts_input_the_system_saw_after_the_hooks_last_event() -> None:
    health = HookHealth(missed_ms=1000)

    assert not health.missed(5000)  # the first look only sets the mark
    health.saw(5200)
    assert not health.missed(5900)  # within the grace: the reader may be behind
    assert health.missed(6300)  # the system had input 1.1 s after the hooks' last
    health.reinstalled(6300)
    assert not health.missed(6300)
    health.reinstalled(2**32 - 10)  # the tick clock wraps after 49.7 days
    assert not health.missed(100)
    assert health.missed(2000)
    assert not health.missed(None)  # GetLastInputInfo failed: no verdict


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> FakeWindows:
    fake = FakeWindows()
    monkeypatch.setattr(sys, "platform", "win32")
    fake_ctypes.install(monkeypatch, fake, fake.errors)
    monkeypatch.setattr(ctypes, "WINFUNCTYPE", ctypes.CFUNCTYPE, raising=False)
    monkeypatch.setattr(windows_hooks, "HEALTH_CHECK_S", 0.02)
    return fake


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def test_hooks_windows_dropped_under_load_are_noticed_and_installed_again(
    windows: FakeWindows,
) -> None:
    reports: list[None] = []
    watch = start_takeover_watch(lambda: reports.append(None), InjectionWindows())
    try:
        windows.move_mouse()
        assert watch.flush() and wait_until(lambda: len(reports) == 1)
        assert windows.installs == 2

        windows.hooks_time_out()  # a hook answered too late: Windows removed both, silently
        windows.tick += 5000
        windows.press(0x41)  # the system saw it, no hook did
        assert wait_until(lambda: windows.installs == 4), "the dropped hooks were not noticed"
        assert wait_until(lambda: len(reports) == 2)  # and it was the user's

        windows.press(0x42)
        assert wait_until(lambda: len(reports) == 3)
        assert watch.flush()
    finally:
        watch.stop()
        watch.stop()
    assert windows.hooks == {}


def test_typing_into_an_elevated_window_pauses_the_run(windows: FakeWindows) -> None:
    # the user types into an administrator PowerShell: the session's last input moves on,
    # a standard process's hooks see none of it; on old main the hooks were installed again
    # every second and the run went on
    reports: list[None] = []
    watch = start_takeover_watch(lambda: reports.append(None), InjectionWindows())
    try:
        windows.inject(0x41, AGENT_INPUT_TAG)  # ours: the hooks see it, it is not the user's
        assert watch.flush()
        windows.tick += 5000
        windows.into_elevated_window()

        assert wait_until(lambda: len(reports) == 1), "input into an elevated window was missed"
    finally:
        watch.stop()


def test_another_programs_injected_input_pauses_the_run_ours_does_not(
    windows: FakeWindows,
) -> None:
    reports: list[None] = []
    watch = start_takeover_watch(lambda: reports.append(None), InjectionWindows())
    try:
        windows.inject(0x41, AGENT_INPUT_TAG)
        assert watch.flush() and reports == []
        windows.inject(0x41, 0)  # the on-screen keyboard, a remote-control tool

        assert watch.flush() and wait_until(lambda: len(reports) == 1)
    finally:
        watch.stop()


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


def test_the_takeover_package_imports_a_backend_only_when_one_is_started() -> None:
    """The port is what the input driver and the host import; the X11 and Windows backends
    come only with `start_takeover_watch` (Windows-only code never loads on Linux)."""
    import subprocess

    code = (
        "import sys, desktop_agent.desktop.takeover\n"
        "print(sorted(m for m in sys.modules if m.startswith('desktop_agent.desktop.takeover')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()
    assert out == "['desktop_agent.desktop.takeover', 'desktop_agent.desktop.takeover.base']"


def test_on_monitor_2_left_of_and_above_the_primary_our_click_is_ours_the_users_move_not(
    windows: FakeWindows, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 33 item 5: the agent's click on a monitor at negative coordinates goes through
    # SendInput marked as ours; the hook sees it there, tagged, and the watch lets it be;
    # the user's hand on that monitor pauses the run
    monkeypatch.setitem(sys.modules, "pyautogui", FakePyAutoGui("win32"))
    windows.desk = (-1920, -300, 3840, 1380)  # monitor 2 at -1920,-300, the primary at 0,0
    driver = PyAutoGuiDriver(
        windows=True,
        send_input=windows.send_input,
        virtual_desk=lambda: windows.desk,
        foreground_check=lambda keys: None,
    )
    reports: list[None] = []
    watch = start_takeover_watch(lambda: reports.append(None), InjectionWindows())
    try:
        driver.click(-1497, 160, "left", 1)
        assert watch.flush() and reports == []
        assert windows.pointer == (-1497, 160)  # the hook saw it where it was aimed

        windows.move_mouse(-1400, -200)  # the user, on the same monitor

        assert watch.flush() and wait_until(lambda: len(reports) == 1)
    finally:
        watch.stop()
