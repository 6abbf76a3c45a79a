"""The UI Automation side of the focus probe, over stand-ins of uiautomation's controls."""

from __future__ import annotations

import os
from types import SimpleNamespace

from desktop_agent.core.own_windows import OWN_WINDOW_ROLE
from desktop_agent.desktop.focus import backend_focused_role, uia_focused_role


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
    for window_class in ("ConsoleWindowClass", "CASCADIA_HOSTING_WINDOW_CLASS"):
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
