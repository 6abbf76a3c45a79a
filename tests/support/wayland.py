"""The headless GNOME Wayland desk for tests, and the test rig's hand on it: the AT-SPI tree of
its windows (read with jeepney), so the rig can answer the portal's consent dialog as the
person at the desk would — the product never skips it.

`wayland_session` is one desk per test module (mutter, PipeWire, the portals, AT-SPI);
`AtspiRig` finds accessibles by role and name and presses them through AT-SPI actions.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from jeepney import DBusAddress, Properties, new_method_call
from jeepney.io.blocking import DBusConnection, open_dbus_connection

from desktop_agent.eval.desk import XSessionError, wait_until
from desktop_agent.eval.wayland_desk import WaylandSession, start_wayland_session

ACCESSIBLE = "org.a11y.atspi.Accessible"
STATE_CHECKED = 4  # ATSPI_STATE_CHECKED (at-spi2-core's atspi-constants.h)
REGISTRY = ("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")


@dataclass(frozen=True)
class Node:
    """One accessible: its bus name and object path, role name and name."""

    bus: str
    path: str
    role: str
    name: str


class AtspiRig:
    """The AT-SPI tree of one desk's session, walked from the registry's root."""

    def __init__(self, session: WaylandSession) -> None:
        assert session.dbus_address
        bus = open_dbus_connection(bus=session.dbus_address)
        try:
            reply = bus.send_and_get_reply(
                new_method_call(
                    DBusAddress("/org/a11y/bus", "org.a11y.Bus", "org.a11y.Bus"), "GetAddress"
                )
            )
        finally:
            bus.close()
        self.connection: DBusConnection = open_dbus_connection(bus=reply.body[0])

    def _call(self, bus: str, path: str, interface: str, method: str, *args: Any) -> Any:
        signature = {"DoAction": "i", "SelectChild": "i"}.get(method)
        message = new_method_call(DBusAddress(path, bus, interface), method, signature, args)
        return self.connection.send_and_get_reply(message, timeout=5).body

    def _node(self, bus: str, path: str) -> Node:
        (role,) = self._call(bus, path, ACCESSIBLE, "GetRoleName")
        name = self.connection.send_and_get_reply(
            Properties(DBusAddress(path, bus, ACCESSIBLE)).get("Name"), timeout=5
        ).body[0][1]
        return Node(bus, path, role, name)

    def children(self, node: Node | None) -> list[Node]:
        bus, path = (node.bus, node.path) if node else REGISTRY
        (children,) = self._call(bus, path, ACCESSIBLE, "GetChildren")
        found = []
        for child_bus, child_path in children:
            try:
                found.append(self._node(child_bus, child_path))
            except Exception:  # noqa: BLE001,S112 - an application that went away meanwhile
                continue
        return found

    def find(self, role: str, name: str, under: Node | None = None, depth: int = 12) -> Node | None:
        """The first accessible of `role` whose name holds `name` (depth first)."""
        for child in self.children(under):
            if child.role == role and name in child.name:
                return child
            if depth > 0:
                found = self.find(role, name, child, depth - 1)
                if found:
                    return found
        return None

    def find_all(self, role: str, under: Node | None, depth: int = 12) -> list[Node]:
        found = []
        for child in self.children(under):
            if child.role == role:
                found.append(child)
            if depth > 0:
                found += self.find_all(role, child, depth - 1)
        return found

    def wait_for(
        self, role: str, name: str, under: Node | None = None, timeout: float = 20
    ) -> Node:
        deadline = time.monotonic() + timeout
        while True:
            found = self.find(role, name, under)
            if found:
                return found
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {role} named {name!r} appeared within {timeout:.0f} s")
            time.sleep(0.05)

    def do_action(self, node: Node, index: int = 0) -> bool:
        return bool(self._call(node.bus, node.path, "org.a11y.atspi.Action", "DoAction", index)[0])

    def checked(self, node: Node) -> bool:
        (states,) = self._call(node.bus, node.path, ACCESSIBLE, "GetState")
        return bool(states[0] & (1 << STATE_CHECKED))

    def select_child(self, node: Node, index: int) -> bool:
        return bool(
            self._call(node.bus, node.path, "org.a11y.atspi.Selection", "SelectChild", index)[0]
        )

    def text_of(self, node: Node) -> str:
        message = new_method_call(
            DBusAddress(node.path, node.bus, "org.a11y.atspi.Text"), "GetText", "ii", (0, -1)
        )
        return str(self.connection.send_and_get_reply(message, timeout=5).body[0])

    def close(self) -> None:
        self.connection.close()


def answer_remote_desktop_dialog(rig: AtspiRig, *, allow_input: bool = True) -> None:
    """Do what the person does in GNOME's "Remote desktop" dialog: pick the monitor, tick
    "Allow remote interaction" (or not), press Share (xdg-desktop-portal-gnome 43's GTK 4
    dialog; its roles as AT-SPI's GetRoleName gives them)."""
    dialog = rig.wait_for("window", "Remote desktop")
    lists = rig.find_all("list", dialog)
    monitors = next(
        node
        for node in lists
        if any(item.name != "Allow remote interaction" for item in rig.children(node))
    )
    assert rig.select_child(monitors, 0), "the dialog refused the monitor"
    if allow_input:
        switch = rig.wait_for("switch", "Allow remote interaction", dialog)
        # GTK may take a toggle before the dialog's switch is wired up: toggle again only
        # when a toggle did not show within a second
        for _ in range(5):
            rig.do_action(switch)
            try:
                wait_until(lambda: rig.checked(switch), timeout=1.0, what="the switch on")
                break
            except TimeoutError:
                continue
        assert rig.checked(switch), "the switch does not turn on"
    assert rig.do_action(rig.wait_for("button", "Share", dialog)), "Share refused"


@pytest.fixture(scope="module")
def wayland_session() -> Iterator[WaylandSession]:
    """One headless GNOME Wayland desk for the tests of a module."""
    try:
        session = start_wayland_session(1280, 720)
    except (XSessionError, TimeoutError) as error:
        pytest.fail(f"the Wayland tests need a headless GNOME desk: {error}", pytrace=False)
    try:
        yield session
    finally:
        session.close()


@pytest.fixture
def atspi_rig(wayland_session: WaylandSession) -> Iterator[AtspiRig]:
    rig = AtspiRig(wayland_session)
    try:
        yield rig
    finally:
        rig.close()


WAYLAND_KEYS = (
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_SESSION_TYPE",
    "XDG_RUNTIME_DIR",
    "XDG_CURRENT_DESKTOP",
    "DBUS_SESSION_BUS_ADDRESS",
)


@pytest.fixture
def wayland_env(wayland_session: WaylandSession, monkeypatch: pytest.MonkeyPatch) -> WaylandSession:
    """This process pointed at the desk (its Wayland display, its session bus; no DISPLAY)
    for one test, through monkeypatch (restored after it, whatever the test did)."""
    monkeypatch.delenv("DISPLAY", raising=False)
    for key in WAYLAND_KEYS[1:]:
        monkeypatch.setenv(key, wayland_session.env[key])
    return wayland_session


@contextlib.contextmanager
def person_answers(rig: AtspiRig, *, allow_input: bool = True) -> Iterator[list[BaseException]]:
    """The person answers the portal's dialog, on a thread of the rig, while the body asks;
    errors of the answering land in the yielded list (the body's assertions read it)."""
    errors: list[BaseException] = []

    def answer() -> None:
        try:
            answer_remote_desktop_dialog(rig, allow_input=allow_input)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            errors.append(error)

    thread = threading.Thread(target=answer, name="person-at-the-desk")
    thread.start()
    try:
        yield errors
    finally:
        thread.join(timeout=60)
