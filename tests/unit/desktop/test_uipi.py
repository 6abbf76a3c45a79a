"""Input into a window of a more privileged program fails the step with the reason, where
Windows (UIPI) drops it while SendInput reports every event inserted (issue 37 item 2)."""

from __future__ import annotations

import ctypes
import os
import sys

import pytest

from desktop_agent.core.errors import ToolError
from desktop_agent.desktop.input import PyAutoGuiDriver
from tests.unit.desktop.fake_integrity import HIGH, MEDIUM, SYSTEM, FakeIntegrity
from tests.unit.desktop.fake_pyautogui import FakePyAutoGui

NOTEPAD, ADMIN_SHELL = 0x10010, 0x20020


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> FakeIntegrity:
    fake = FakeIntegrity()
    fake.window(NOTEPAD, 4100, MEDIUM)
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(ctypes, "windll", fake, raising=False)
    monkeypatch.setitem(sys.modules, "pyautogui", FakePyAutoGui("win32"))
    return fake


def driver(windows: FakeIntegrity) -> PyAutoGuiDriver:
    # as the executor makes it on Windows: no foreground check given, the system's is used
    return PyAutoGuiDriver(
        send_input=windows.send_input,
        scan_code=lambda vk: vk & 0x7F,
        virtual_desk=lambda: (0, 0, 1920, 1080),
    )


@pytest.mark.parametrize(
    ("rid", "readable", "said"),
    [
        # an elevated PowerShell whose level can be read (a UIAccess or same-user case)
        (HIGH, True, r"runs as administrator \(high integrity, the agent medium\)"),
        # the usual case: a standard process cannot open an elevated process's token
        (HIGH, False, "may run as administrator: its integrity level cannot be read"),
        (SYSTEM, True, r"runs as administrator \(system integrity"),
    ],
)
def test_keys_into_a_more_privileged_window_fail_the_step_and_send_nothing(
    windows: FakeIntegrity, rid: int, readable: bool, said: str
) -> None:
    windows.window(ADMIN_SHELL, 4200, rid, readable)
    windows.foreground = ADMIN_SHELL
    keys = driver(windows)

    with pytest.raises(ToolError, match=said) as refused:
        keys.hotkey(["ctrl", "v"])

    # on old main SendInput said 4 of 4 inserted and the step said "pressed ctrl+v"
    assert windows.sent == [] and windows.reached == []
    assert "cannot type into it" in str(refused.value)


def test_a_click_into_a_more_privileged_window_fails_before_pyautogui_clicks(
    windows: FakeIntegrity,
) -> None:
    windows.window(ADMIN_SHELL, 4200, HIGH, readable=False)
    windows.foreground = ADMIN_SHELL
    gui = sys.modules["pyautogui"]
    assert isinstance(gui, FakePyAutoGui)

    with pytest.raises(ToolError, match="may run as administrator"):
        driver(windows).click(300, 200, "left", 1)

    # pyautogui's mouse_event returned nothing: on old main the click went "done"
    assert gui.calls == [] and windows.sent == []


def test_no_window_in_front_fails_the_step(windows: FakeIntegrity) -> None:
    windows.foreground = 0  # losing activation, or the secure desktop

    with pytest.raises(ToolError, match="no window is in front"):
        driver(windows).press("enter")


def test_a_button_held_into_an_elevated_window_is_still_let_go(windows: FakeIntegrity) -> None:
    # a drag whose drop ended over an admin window: the release is never held back
    windows.window(ADMIN_SHELL, 4200, HIGH, readable=False)
    windows.foreground = ADMIN_SHELL

    driver(windows).mouse_up(300, 200, "left")

    assert [event.mi.dwFlags for event in windows.sent] == [0xC001, 0x0004]  # move, left up


def test_keys_into_a_window_of_the_same_level_go_in(windows: FakeIntegrity) -> None:
    windows.foreground = NOTEPAD

    driver(windows).hotkey(["ctrl", "a"])

    assert len(windows.reached) == 4


def test_keys_into_the_apps_own_window_in_front_are_refused_a_click_is_not(
    windows: FakeIntegrity,
) -> None:
    # the gate's focus probe reads the focus through UI Automation and may not answer in
    # time; the foreground window's process is known at once
    windows.windows[0x30030] = os.getpid()
    windows.foreground = 0x30030
    keys = driver(windows)

    with pytest.raises(ToolError, match="the app's own window is in front"):
        keys.hotkey(["ctrl", "a"])
    assert windows.sent == []
    keys.click(300, 200, "left", 1)  # a click elsewhere is how the focus leaves it

    assert [event.type for event in windows.sent] == [0, 0, 0]  # INPUT_MOUSE: move, down, up
