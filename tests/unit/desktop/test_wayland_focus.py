"""The focus probe on Wayland: AT-SPI alone says the focused control's role and whether the
active window is one of this process's own (no window list: the bus's word for the process
behind each application's connection)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from desktop_agent.core.own_windows import OWN_WINDOW_ROLE
from desktop_agent.core.ports import Focus
from desktop_agent.desktop.focus import DesktopFocusProbe, backend_focus
from desktop_agent.desktop.inventory import InventoryRunner
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
    assert backend_focus(inventory(editor, other), soon()).role == "text"

    shell = App(":1.9", 1001, "xfce4-terminal", [window("~", active=True, focused="terminal")])
    assert backend_focus(inventory(shell), soon()).role == "terminal"

    login = App(":1.8", 1002, "firefox", [window("Log in", active=True, focused="password text")])
    assert backend_focus(inventory(login), soon()).role == "password text"


def test_the_focused_controls_place_is_its_object_so_two_terminals_are_two_places() -> None:
    # Wayland lists no windows: the focused accessible's bus name and path are its place;
    # two shells of one terminal program have one role and two places
    first = window("~", active=True, focused="terminal")
    second = window("~", active=False, focused="terminal")
    shell = App(":1.9", 1001, "xfce4-terminal", [first, second])
    here = backend_focus(inventory(shell), soon())
    first.states, second.states = second.states, first.states
    there = backend_focus(inventory(shell), soon())

    assert here.role == there.role == "terminal"
    assert here.place is not None and here.place.startswith("atspi::1.9/org/a11y/atspi/")
    assert there.place is not None and there.place != here.place


def test_no_focused_control_found_tells_no_place() -> None:
    editor = App(":1.7", 1000, "l3afpad", [window("note.txt", active=False)])
    assert backend_focus(inventory(editor), soon()) == Focus()


def test_the_apps_own_active_window_is_told_by_its_process() -> None:
    # the app's Qt windows go on the bus under the program's name ("python3", a bundle's
    # binary name), not under "desktop-agent": the bus's process id tells them
    own = App(":1.4", OWN_PID, "python3", [window("Desktop Agent — allow?", active=True)])
    editor = App(":1.7", 1000, "l3afpad", [window("note.txt", active=False)])
    assert backend_focus(inventory(own, editor), soon()).role == OWN_WINDOW_ROLE

    # its window inactive, another program's active: that one's focus is the answer
    own = App(":1.4", OWN_PID, "python3", [window("Desktop Agent", active=False)])
    editor = App(":1.7", 1000, "l3afpad", [window("note.txt", active=True)])
    assert backend_focus(inventory(own, editor), soon()).role == "text"


def test_an_active_window_whose_process_the_bus_does_not_say_is_unknown() -> None:
    gone = App(":1.5", None, "python3", [window("Desktop Agent?", active=True)])
    assert backend_focus(inventory(gone), soon()).role is None


def test_no_active_window_on_the_bus_is_unknown() -> None:
    # the focus is on a program that is not on AT-SPI (or the app's own, not on the bus)
    editor = App(":1.7", 1000, "l3afpad", [window("note.txt", active=False)])
    assert backend_focus(inventory(editor), soon()).role is None


def test_the_element_list_leaves_out_the_apps_own_window_by_its_process() -> None:
    own = App(":1.4", OWN_PID, "python3", [window("Desktop Agent", active=True)])
    editor = App(":1.7", 1000, "l3afpad", [window("note.txt", active=True)])
    found = inventory(own, editor)._active_frame(WalkLimits(deadline=soon()))
    assert found is not None and found[1] == "note.txt"
    assert inventory(own)._active_frame(WalkLimits(deadline=soon())) is None


class OnTheFakeBus(WaylandAtspiInventory):
    """The Wayland inventory on its thread, over the fake bus (thread_init would dial the
    real accessibility bus)."""

    def __init__(self, bus: FakeAtspiBus) -> None:
        super().__init__(own_pid=OWN_PID)
        self.bus = bus  # type: ignore[assignment]

    def thread_init(self) -> None:
        pass


class DialogTakesTheFocus:
    """The desktop's FocusProbe over the Wayland inventory; from the third look on (the
    decision and the gate looked first; the person is asked in between) the app's own window
    is the active one, as its question dialog or main window would be once answered."""

    def __init__(self, own: Accessible, editor: Accessible, runner: InventoryRunner) -> None:
        self.own, self.editor = own, editor
        self.probe = DesktopFocusProbe(runner, timeout_s=5)
        self.calls = 0

    async def focused(self) -> Focus:
        self.calls += 1
        if self.calls == 3:
            self.own.states = (STATE_SHOWING, STATE_ACTIVE)
            self.editor.states = (STATE_SHOWING,)
        return await self.probe.focused()


async def test_after_an_answer_on_wayland_keys_into_the_apps_own_window_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the gate's after-answer check on Wayland, through the desktop's probe: on old main the
    # probe said None (LookupError), and the approved text was typed into the app's window
    from desktop_agent.core import gate
    from desktop_agent.core.models import ApprovalDecision, StepStatus
    from tests.fakes import ScriptedPlanner, done, tool
    from tests.unit.core.conftest import make_harness
    from tests.unit.core.test_own_windows import OwnWindowsUnseen

    monkeypatch.setattr(gate, "OWN_FOCUS_WAIT_S", 0.05)
    own_window = window("Desktop Agent", active=False)
    editor_window = window("note.txt", active=True)
    bus = FakeAtspiBus(
        [
            App(":1.4", OWN_PID, "python3", [own_window]),
            App(":1.7", 1000, "l3afpad", [editor_window]),
        ]
    )
    runner = InventoryRunner(OnTheFakeBus(bus))
    try:
        h = make_harness(
            answers=[ApprovalDecision.ONCE],
            focus=DialogTakesTheFocus(own_window, editor_window, runner),
        )
        h.runner.services = replace(h.runner.services, observer=OwnWindowsUnseen(None))
        run = await h.create()
        await h.collect(run, ScriptedPlanner([tool("type_text", text="hello"), done()]))
    finally:
        runner.close()

    # asked (Wayland cannot show the app's windows), then refused: the focus is the app's
    assert [request.tool for request in h.gate.requests] == ["type_text"]
    assert h.executor.calls == []
    [action] = [s for s in await h.repo.list_steps(run.id) if s.kind.value == "action"]
    assert action.status is StepStatus.DENIED and "keyboard focus now" in (action.error or "")
