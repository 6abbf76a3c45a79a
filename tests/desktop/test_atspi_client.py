"""The pure-Python AT-SPI client on the test desktop's real buses: deadlines, errors, the
focused control's role, and an element list with no system Python packages at all."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from desktop_agent.core.ports import Focus
from desktop_agent.desktop.inventory import WalkLimits
from desktop_agent.desktop.inventory.atspi import AtspiInventory
from desktop_agent.desktop.inventory.atspi_bus import (
    ACCESSIBLE,
    AtspiBus,
    AtspiError,
    Call,
    Node,
    accessibility_bus_address,
    states_contain,
)
from desktop_agent.desktop.inventory.x11 import WindowInfo
from tests.desktop.conftest import Editor
from tests.support.xdisplay import XSession, wait_until


@pytest.fixture
def hung_service(xsession: XSession) -> Iterator[str]:
    """A bus name whose owner reads nothing and answers nothing (a hung application)."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    assert xsession.dbus_address is not None
    owner = open_dbus_connection(xsession.dbus_address)
    bus = DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus")
    owner.send_and_get_reply(
        new_method_call(bus, "RequestName", "su", ("org.example.Hung", 4)), timeout=2
    )
    yield "org.example.Hung"
    owner.close()


@pytest.fixture
def inventory() -> Iterator[AtspiInventory]:
    backend = AtspiInventory()
    backend.thread_init()
    yield backend
    backend.close()


def test_a_call_to_an_application_that_never_answers_ends_at_its_deadline(
    xsession: XSession, hung_service: str
) -> None:
    assert xsession.dbus_address is not None
    bus = AtspiBus(xsession.dbus_address)
    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError, match="1 AT-SPI replies still missing"):
            bus.call_many(
                [
                    Call(
                        Node("org.freedesktop.DBus", "/org/freedesktop/DBus"),
                        "org.freedesktop.DBus",
                        "GetId",
                    ),
                    Call(Node(hung_service, "/"), ACCESSIBLE, "GetState"),
                ],
                deadline=started + 0.2,
            )
        waited = time.monotonic() - started
    finally:
        bus.close()
    assert 0.2 <= waited < 1.0


def test_an_error_reply_is_returned_in_its_place_and_the_other_replies_are_kept() -> None:
    bus = AtspiBus(accessibility_bus_address())
    try:
        replies = bus.call_many(
            [
                Call(Node("org.a11y.atspi.Registry", "/no/such/object"), ACCESSIBLE, "GetState"),
                Call(
                    Node("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root"),
                    ACCESSIBLE,
                    "GetRoleName",
                ),
            ],
            deadline=time.monotonic() + 2,
        )
    finally:
        bus.close()
    assert isinstance(replies[0], AtspiError)
    assert replies[1] == ("desktop frame",)


def test_states_are_the_bits_of_two_words() -> None:
    states = [1 << 1 | 1 << 25, 1 << (33 - 32)]
    assert [state for state in range(64) if states_contain(states, state)] == [1, 25, 33]
    assert not states_contain([], 1)


def test_the_walk_stops_at_its_deadline_with_the_windows_it_has(
    l3afpad: Editor, inventory: AtspiInventory
) -> None:
    wait_until(
        lambda: any(e.role == "edit" for e in inventory.snapshot(WalkLimits())[0]),
        timeout=10,
        what="l3afpad's text area on the AT-SPI bus",
    )
    now = [0.0]
    list_windows = inventory.windows.windows

    def windows_then_the_deadline_passes(limits: WalkLimits | None = None) -> list[WindowInfo]:
        listed = list_windows(limits)
        now[0] = 2.0
        return listed

    in_time, used = inventory.snapshot(WalkLimits(deadline=1.0, clock=lambda: now[0]))
    inventory.windows.windows = windows_then_the_deadline_passes  # type: ignore[method-assign]
    now[0] = 0.0
    late, late_used = inventory.snapshot(WalkLimits(deadline=1.0, clock=lambda: now[0]))

    assert used == "atspi" and {e.role for e in in_time} >= {"window", "menu", "edit"}
    assert [e.role for e in late] == ["window"] and late_used == "x11"


def test_a_second_walk_asks_the_role_only_of_text_fields_and_lists_the_same(
    l3afpad: Editor, inventory: AtspiInventory
) -> None:
    wait_until(
        lambda: any(e.role == "edit" for e in inventory.snapshot(WalkLimits())[0]),
        timeout=10,
        what="l3afpad's text area on the AT-SPI bus",
    )
    assert inventory.bus is not None
    call_many = inventory.bus.call_many
    asked: list[Call] = []

    def counted(calls: Sequence[Call], deadline: float) -> list[Any]:
        asked.extend(calls)
        return call_many(calls, deadline)

    inventory.bus.call_many = counted  # type: ignore[method-assign]
    inventory.roles.clear()  # as on a new connection
    first = inventory.snapshot(WalkLimits())
    roles_first = [c.node for c in asked if c.method == "GetRole"]
    asked.clear()
    second = inventory.snapshot(WalkLimits())
    roles_second = [c.node for c in asked if c.method == "GetRole"]

    assert second == first
    # the text area (a "text" node: its role is asked each time, a password field's may
    # change) and the popups' siblings check; every other node's role came from the cache
    assert len(roles_first) > 10 * len(roles_second) > 0


def test_focused_role_is_the_role_name_of_l3afpads_text_area(
    l3afpad: Editor, inventory: AtspiInventory
) -> None:
    role = wait_until(
        lambda: inventory.focused(time.monotonic() + 0.5).role,
        timeout=10,
        what="the focused control",
    )
    assert role == "text"


def test_focused_role_is_none_when_the_deadline_has_passed(
    l3afpad: Editor, inventory: AtspiInventory
) -> None:
    assert inventory.focused(time.monotonic() - 1) == Focus()


LIST_WITHOUT_SYSTEM_PACKAGES = """
import json, sys, time
sys.path = [p for p in sys.path if "dist-packages" not in p]
sys.modules["gi"] = sys.modules["pyatspi"] = None  # importing either now fails
from desktop_agent.desktop.inventory import WalkLimits, choose_backend
backend = choose_backend()
backend.thread_init()
for _ in range(200):
    elements, used = backend.snapshot(WalkLimits(deadline=time.monotonic() + 1))
    if any(e.role == "edit" for e in elements):
        break
    time.sleep(0.05)
backend.close()
print(json.dumps([backend.name, used, [e.role for e in elements]]))
"""


def test_the_element_list_needs_neither_pyatspi_nor_gi(xsession: XSession, l3afpad: Editor) -> None:
    result = subprocess.run(
        [sys.executable, "-c", LIST_WITHOUT_SYSTEM_PACKAGES],
        capture_output=True,
        text=True,
        timeout=60,
        env=xsession.child_env(),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    name, used, roles = json.loads(result.stdout)
    assert (name, used) == ("atspi", "atspi")
    assert roles.count("menu") == 5 and "edit" in roles
