"""The UI Automation side of the focus probe, over stand-ins of uiautomation's controls."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from desktop_agent.core.own_windows import OWN_WINDOW_ROLE
from desktop_agent.core.ports import Focus
from desktop_agent.desktop.focus import backend_focus, uia_focus
from desktop_agent.desktop.inventory.x11 import WindowInfo


def auto_with(control: object) -> SimpleNamespace:
    return SimpleNamespace(GetFocusedControl=lambda: control)


def control(
    kind: str,
    *,
    password: bool = False,
    window_class: str = "Notepad",
    handle: int = 0x30F2A,
    runtime_id: tuple[int, ...] = (42, 7, 3),
) -> object:
    # uiautomation's Control: GetTopLevelControl, NativeWindowHandle, GetRuntimeId (a list
    # of ints, empty for an element that has none)
    top = SimpleNamespace(ClassName=window_class, NativeWindowHandle=handle)
    return SimpleNamespace(
        ControlTypeName=kind,
        IsPassword=password,
        GetTopLevelControl=lambda: top,
        GetRuntimeId=lambda: list(runtime_id),
    )


def test_a_password_box_is_a_password_field() -> None:
    assert uia_focus(auto_with(control("EditControl", password=True))).role == "password text"


def test_the_consoles_are_terminals() -> None:
    for window_class in (
        "ConsoleWindowClass",
        "CASCADIA_HOSTING_WINDOW_CLASS",
        "mintty",  # Git Bash
        "VirtualConsoleClass",  # ConEmu, cmder
        "PuTTY",
    ):
        focused = control("DocumentControl", window_class=window_class)
        assert uia_focus(auto_with(focused)).role == "terminal"


def test_other_controls_give_their_type_and_no_focus_gives_none() -> None:
    assert uia_focus(auto_with(control("EditControl"))).role == "edit"
    assert uia_focus(auto_with(None)).role is None


def test_the_focused_controls_place_is_its_window_and_runtime_id() -> None:
    # two consoles are two places; a control without a runtime id has none
    one = uia_focus(auto_with(control("DocumentControl", window_class="ConsoleWindowClass")))
    other = uia_focus(
        auto_with(control("DocumentControl", window_class="ConsoleWindowClass", handle=9))
    )
    assert one == Focus("terminal", f"uia:{0x30F2A}:42.7.3")
    assert other == Focus("terminal", "uia:9:42.7.3")
    assert uia_focus(auto_with(control("EditControl", runtime_id=()))) == Focus("edit")
    assert uia_focus(auto_with(None)) == Focus()


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

    assert backend_focus(backend(own), deadline=0).role == OWN_WINDOW_ROLE
    assert backend_focus(backend(other), deadline=0).role == "edit"


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

    assert backend_focus(xterm, deadline=0) == Focus("terminal", "x11:7")
    assert backend_focus(editor, deadline=0) == Focus(None, "x11:7")
    assert backend_focus(own, deadline=0) == Focus(OWN_WINDOW_ROLE)


def test_on_x11_the_place_is_the_active_window_beside_the_focused_accessible() -> None:
    def atspi(focus: Focus) -> SimpleNamespace:
        return SimpleNamespace(
            name="atspi",
            windows=ActiveWindow("~ — Terminal", "Gnome-terminal"),
            focused=lambda _d: focus,
        )

    tab = atspi(Focus("terminal", "atspi::1.5/term/0"))
    assert backend_focus(tab, deadline=0) == Focus("terminal", "x11:7 atspi::1.5/term/0")
    # no focused accessible found (the walk cut at its deadline): the window alone, a
    # terminal by its title
    assert backend_focus(atspi(Focus()), deadline=0) == Focus("terminal", "x11:7")
    # no active window (no window manager): the accessible alone
    bare = SimpleNamespace(
        name="atspi", windows=NoActiveWindow(), focused=lambda _d: Focus("text", "atspi::1.5/t")
    )
    assert backend_focus(bare, deadline=0) == Focus("text", "atspi::1.5/t")


class NoActiveWindow:
    """An X11 display with no window manager: _NET_ACTIVE_WINDOW is not set."""

    def active_id(self) -> None:
        return None

    def info(self, window_id: int, active: int | None = None) -> WindowInfo | None:
        raise AssertionError("not reached")


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
        name="atspi", windows=FailingWindowList(), focused=lambda deadline: Focus("text")
    )
    with pytest.raises(LookupError):
        backend_focus(backend, deadline=0)
