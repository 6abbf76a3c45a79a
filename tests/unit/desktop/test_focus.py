"""The UI Automation side of the focus probe, over stand-ins of uiautomation's controls."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from desktop_agent.core.own_windows import OWN_WINDOW_ROLE
from desktop_agent.desktop.focus import backend_focused_role, uia_focused_role
from desktop_agent.desktop.inventory.x11 import WindowInfo


def auto_with(control: object) -> SimpleNamespace:
    return SimpleNamespace(GetFocusedControl=lambda: control)


def control(kind: str, *, password: bool = False, window_class: str = "Notepad") -> object:
    top = SimpleNamespace(ClassName=window_class)
    return SimpleNamespace(
        ControlTypeName=kind, IsPassword=password, GetTopLevelControl=lambda: top
    )


def test_a_password_box_is_a_password_field() -> None:
    assert uia_focused_role(auto_with(control("EditControl", password=True))) == "password text"


def test_the_consoles_are_terminals() -> None:
    for window_class in (
        "ConsoleWindowClass",
        "CASCADIA_HOSTING_WINDOW_CLASS",
        "mintty",  # Git Bash
        "VirtualConsoleClass",  # ConEmu, cmder
        "PuTTY",
    ):
        focused = control("DocumentControl", window_class=window_class)
        assert uia_focused_role(auto_with(focused)) == "terminal"


def test_other_controls_give_their_type_and_no_focus_gives_none() -> None:
    assert uia_focused_role(auto_with(control("EditControl"))) == "edit"
    assert uia_focused_role(auto_with(None)) is None


def test_the_apps_own_window_in_front_is_said_before_any_control() -> None:
    # uiautomation's GetForegroundControl: the app's settings window (made by this process)
    own = SimpleNamespace(Name="Settings — Desktop Agent", ProcessId=os.getpid())
    other = SimpleNamespace(Name="Untitled - Notepad", ProcessId=os.getpid() + 1)
    focused = control("EditControl")

    def backend(front: object) -> SimpleNamespace:
        auto = SimpleNamespace(
            GetForegroundControl=lambda: front, GetFocusedControl=lambda: focused
        )
        return SimpleNamespace(name="uia", _auto=auto)

    assert backend_focused_role(backend(own), deadline=0) == OWN_WINDOW_ROLE
    assert backend_focused_role(backend(other), deadline=0) == "edit"


class ActiveWindow:
    """The two calls of X11Windows the probe makes (`active_id`, `info`), answering with one
    active window as X11Windows.info builds it."""

    def __init__(self, title: str, wm_class: str, *, own: bool = False) -> None:
        self.window = WindowInfo(7, title, wm_class, (0, 0, 800, 600), active=True, own=own)

    def active_id(self) -> int:
        return 7

    def info(self, window_id: int, active: int | None = None) -> WindowInfo | None:
        return self.window if window_id == 7 else None


def test_a_terminal_the_backend_cannot_see_is_told_by_its_active_window() -> None:
    # the window list alone (no AT-SPI), or an xterm that AT-SPI does not know: the window
    # in front now is read at action time, where the turn's window list may be older
    xterm = SimpleNamespace(name="x11", windows=ActiveWindow("alice@box: ~", "XTerm"))
    editor = SimpleNamespace(name="x11", windows=ActiveWindow("notes.txt", "L3afpad"))
    own = SimpleNamespace(
        name="x11", windows=ActiveWindow("Desktop Agent", "desktop-agent", own=True)
    )

    assert backend_focused_role(xterm, deadline=0) == "terminal"
    assert backend_focused_role(editor, deadline=0) is None
    assert backend_focused_role(own, deadline=0) == OWN_WINDOW_ROLE


class FailingWindowList:
    """An X11 window list that cannot be read now (X11Windows raises LookupError)."""

    def active_id(self) -> int:
        raise LookupError("cannot open display")

    def info(self, window_id: int, active: int | None = None) -> WindowInfo | None:
        raise AssertionError("not reached")


def test_on_x11_a_window_list_that_fails_leaves_the_focus_unknown() -> None:
    # whether the app's own window is active is not known: AT-SPI's role of whatever is
    # focused (the app's own line edit, where Qt is on the bus) is not the answer; the probe
    # (DesktopFocusProbe) says None
    backend = SimpleNamespace(
        name="atspi", windows=FailingWindowList(), focused_role=lambda deadline: "text"
    )
    with pytest.raises(LookupError):
        backend_focused_role(backend, deadline=0)
