"""The headless GNOME Wayland desk for tests, and the test rig's hand on it: the AT-SPI tree of
its windows (read with jeepney), so the rig can answer the portal's consent dialog as the
person at the desk would — the product never skips it.

`wayland_session` is one desk per test module (mutter, PipeWire, the portals, AT-SPI);
`AtspiRig` finds accessibles by role and name and presses them through AT-SPI actions.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from jeepney import DBusAddress, Properties, new_method_call
from jeepney.io.blocking import DBusConnection, open_dbus_connection

from desktop_agent.eval.desk import XSessionError
from desktop_agent.eval.wayland_desk import WaylandSession, start_wayland_session

ACCESSIBLE = "org.a11y.atspi.Accessible"
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

    def select_child(self, node: Node, index: int) -> bool:
        return bool(
            self._call(node.bus, node.path, "org.a11y.atspi.Selection", "SelectChild", index)[0]
        )

    def close(self) -> None:
        self.connection.close()


def answer_remote_desktop_dialog(rig: AtspiRig, *, allow_input: bool = True) -> None:
    """Do what the person does in GNOME's "Remote desktop" dialog: pick the monitor, tick
    "Allow remote interaction" (or not), press Share (xdg-desktop-portal-gnome 43's dialog)."""
    dialog = rig.wait_for("frame", "Remote desktop")
    monitors = rig.wait_for("panel", "Entire Screen", dialog)
    listing = rig.wait_for("list", "", monitors)
    assert rig.select_child(listing, 0), "the dialog refused the monitor"
    if allow_input:
        box = rig.wait_for("check box", "Allow remote interaction", dialog)
        assert rig.do_action(box), "the dialog refused the tick"
    assert rig.do_action(rig.wait_for("push button", "Share", dialog)), "Share refused"


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
