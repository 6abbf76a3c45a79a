"""The focus probe on Wayland: AT-SPI alone says the focused control's role and whether the
active window is one of this process's own (no window list: the bus's word for the process
behind each application's connection)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop_agent.core.own_windows import OWN_WINDOW_ROLE
from desktop_agent.desktop.focus import backend_focused_role
from desktop_agent.desktop.inventory.atspi import ROLE_NAMES
from desktop_agent.desktop.inventory.atspi_bus import (
    ACCESSIBLE,
    BUS_DRIVER,
    PROPERTIES,
    REGISTRY,
    ROOT_PATH,
    STATE_ACTIVE,
    STATE_FOCUSED,
    STATE_SHOWING,
    AtspiError,
    Call,
)
from desktop_agent.desktop.inventory.atspi_wayland import WaylandAtspiInventory
from desktop_agent.desktop.inventory.base import WalkLimits

OWN_PID = 4242


@dataclass
class Accessible:
    role: str
    name: str = ""
    states: tuple[int, ...] = (STATE_SHOWING,)
    children: list[Accessible] = field(default_factory=list)


@dataclass
class App:
    bus: str  # the application's unique name on the accessibility bus
    pid: int | None  # None: its connection is gone (the bus answers NameHasNoOwner)
    name: str
    windows: list[Accessible]


class FakeAtspiBus:
    """AtspiBus.call_many over a tree, with the reply bodies AT-SPI gives (at-spi2-core's
    xml/Accessible.xml: GetChildren "a(so)", GetState "au", GetRole "u"; Properties.Get "v";
    dbus's bus/driver.c: GetConnectionUnixProcessID "s" -> "u", NameHasNoOwner for a name
    nobody holds)."""

    def __init__(self, apps: Sequence[App]) -> None:
        self.nodes: dict[tuple[str, str], Accessible | App] = {}
        self.apps = list(apps)
        for app in apps:
            self.nodes[(app.bus, ROOT_PATH)] = app
            counter = 0
            stack = list(app.windows)
            while stack:
                node = stack.pop()
                counter += 1
                node_path = f"/org/a11y/atspi/accessible/{counter}"
                self.nodes[(app.bus, node_path)] = node
                node.__dict__["path"] = node_path
                stack += node.children

    def _path(self, bus: str, node: Accessible) -> tuple[str, str]:
        return (bus, node.__dict__["path"])

    def call_many(self, calls: Sequence[Call], deadline: float) -> list[Any]:
        return [self._answer(call) for call in calls]

    def _answer(self, call: Call) -> Any:
        bus, path = call.node.bus, call.node.path
        if call.interface == BUS_DRIVER:
            (name,) = call.args
            app = next((a for a in self.apps if a.bus == name), None)
            if app is None or app.pid is None:
                return AtspiError("org.freedesktop.DBus.Error.NameHasNoOwner", name)
            return (app.pid,)
        if (bus, path) == (REGISTRY, ROOT_PATH):
            assert call.method == "GetChildren"
            return ([(app.bus, ROOT_PATH) for app in self.apps],)
        node = self.nodes[(bus, path)]
        if isinstance(node, App):
            if call.interface == PROPERTIES:
                return (("s", node.name),)
            return ([self._path(bus, window) for window in node.windows],)
        if call.interface == PROPERTIES:
            return (("s", node.name),)
        assert call.interface == ACCESSIBLE
        if call.method == "GetChildren":
            return ([self._path(bus, child) for child in node.children],)
        if call.method == "GetRole":
            return (ROLE_NAMES.index(node.role),)
        if call.method == "GetState":
            words = [0, 0]
            for state in node.states:
                words[state // 32] |= 1 << (state % 32)
            return (words,)
        raise AssertionError(call)


def window(title: str, *, active: bool, focused: str = "text") -> Accessible:
    states = (STATE_SHOWING, STATE_ACTIVE) if active else (STATE_SHOWING,)
    field_ = Accessible(focused, states=(STATE_SHOWING, STATE_FOCUSED))
    filler = Accessible("filler", children=[Accessible("push button", "Open"), field_])
    return Accessible("frame", title, states, [filler])


def inventory(*apps: App) -> WaylandAtspiInventory:
    backend = WaylandAtspiInventory(own_pid=OWN_PID)
    backend.bus = FakeAtspiBus(apps)  # type: ignore[assignment]
    return backend


def soon() -> float:
    return time.monotonic() + 5


def test_the_focused_controls_role_of_the_active_window_is_read() -> None:
    # on old main the Wayland inventory's empty window list raised LookupError here: the
    # probe answered None on every call
    editor = App(":1.7", 1000, "l3afpad", [window("note.txt", active=True)])
    other = App(":1.9", 1001, "gnome-calculator", [window("Calculator", active=False)])
    assert backend_focused_role(inventory(editor, other), soon()) == "text"

    shell = App(":1.9", 1001, "xfce4-terminal", [window("~", active=True, focused="terminal")])
    assert backend_focused_role(inventory(shell), soon()) == "terminal"

    login = App(":1.8", 1002, "firefox", [window("Log in", active=True, focused="password text")])
    assert backend_focused_role(inventory(login), soon()) == "password text"


def test_the_apps_own_active_window_is_told_by_its_process() -> None:
    # the app's Qt windows go on the bus under the program's name ("python3", a bundle's
    # binary name), not under "desktop-agent": the bus's process id tells them
    own = App(":1.4", OWN_PID, "python3", [window("Desktop Agent — allow?", active=True)])
    editor = App(":1.7", 1000, "l3afpad", [window("note.txt", active=False)])
    assert backend_focused_role(inventory(own, editor), soon()) == OWN_WINDOW_ROLE

    # its window inactive, another program's active: that one's focus is the answer
    own = App(":1.4", OWN_PID, "python3", [window("Desktop Agent", active=False)])
    editor = App(":1.7", 1000, "l3afpad", [window("note.txt", active=True)])
    assert backend_focused_role(inventory(own, editor), soon()) == "text"


def test_an_active_window_whose_process_the_bus_does_not_say_is_unknown() -> None:
    gone = App(":1.5", None, "python3", [window("Desktop Agent?", active=True)])
    assert backend_focused_role(inventory(gone), soon()) is None


def test_no_active_window_on_the_bus_is_unknown() -> None:
    # the focus is on a program that is not on AT-SPI (or the app's own, not on the bus)
    editor = App(":1.7", 1000, "l3afpad", [window("note.txt", active=False)])
    assert backend_focused_role(inventory(editor), soon()) is None


def test_the_element_list_leaves_out_the_apps_own_window_by_its_process() -> None:
    own = App(":1.4", OWN_PID, "python3", [window("Desktop Agent", active=True)])
    editor = App(":1.7", 1000, "l3afpad", [window("note.txt", active=True)])
    found = inventory(own, editor)._active_frame(WalkLimits(deadline=soon()))
    assert found is not None and found[1] == "note.txt"
    assert inventory(own)._active_frame(WalkLimits(deadline=soon())) is None
