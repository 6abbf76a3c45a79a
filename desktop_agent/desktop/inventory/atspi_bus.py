"""A pure-Python client of the AT-SPI accessibility bus (jeepney): pipelined calls, deadlines.

No libatspi, PyGObject or Debian package: the accessibility bus is a D-Bus bus like any
other, so a plain `pip install` and the frozen bundle list controls too. Calls are sent in
batches and their replies read back in any order (`call_many`), so a walk costs one round
trip per tree level rather than one per node; every read waits no longer than its deadline.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop_agent.desktop.inventory.dbus_wire import ERROR, WireReader, read_reply

#: AT-SPI names and paths (at-spi2-core's xml/*.xml)
REGISTRY = "org.a11y.atspi.Registry"
ROOT_PATH = "/org/a11y/atspi/accessible/root"
ACCESSIBLE = "org.a11y.atspi.Accessible"
COMPONENT = "org.a11y.atspi.Component"
ACTION = "org.a11y.atspi.Action"
EDITABLE_TEXT = "org.a11y.atspi.EditableText"
TEXT = "org.a11y.atspi.Text"
VALUE = "org.a11y.atspi.Value"
PROPERTIES = "org.freedesktop.DBus.Properties"
#: the bus itself, asked for the process of a connection (GetConnectionUnixProcessID), as
#: at-spi2-core's atspi/atspi-accessible.c atspi_accessible_get_process_id does
BUS_DRIVER = "org.freedesktop.DBus"
BUS_DRIVER_PATH = "/org/freedesktop/DBus"
#: AtspiStateType bit numbers (at-spi2-core atspi-constants.h)
STATE_ACTIVE = 1
STATE_EDITABLE = 7
STATE_ENABLED = 8
STATE_FOCUSED = 12
STATE_SENSITIVE = 24
STATE_SHOWING = 25
STATE_VISIBLE = 30
#: ATSPI_COORD_TYPE_SCREEN, ATSPI_COORD_TYPE_WINDOW
COORD_SCREEN = 0
COORD_WINDOW = 1
#: messages kept ready to send (AtspiBus._messages) before the store of them is emptied:
#: a walk of a large window asks ~1,000 (at most ~6 MB kept; closed windows' never again)
MESSAGES_KEPT = 20_000
_SERIAL = struct.Struct("<I")


class AtspiError(RuntimeError):
    """An AT-SPI call answered with a D-Bus error (the node vanished, no such interface)."""

    def __init__(self, name: str, text: str) -> None:
        super().__init__(f"{name}: {text}" if text else name)
        self.name = name


@dataclass(frozen=True, slots=True)
class Node:
    """An accessible object: the application's bus name and the object's path."""

    bus: str
    path: str


@dataclass(frozen=True, slots=True)
class Call:
    """One method call on a node."""

    node: Node
    interface: str
    method: str
    signature: str | None = None
    args: tuple[Any, ...] = ()

    @staticmethod
    def prop(node: Node, interface: str, name: str) -> Call:
        """Properties.Get(interface, name)."""
        return Call(node, PROPERTIES, "Get", "ss", (interface, name))


def states_contain(states: Sequence[int], state: int) -> bool:
    """Whether the two-word state set of GetState() has bit `state`."""
    word, bit = divmod(state, 32)
    return word < len(states) and bool(states[word] >> bit & 1)


def session_bus_address() -> str | None:
    """The session bus address from the environment, or the usual socket in XDG_RUNTIME_DIR."""
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if address:
        return address
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.exists(os.path.join(runtime, "bus")):
        return f"unix:path={os.path.join(runtime, 'bus')}"
    return None


def accessibility_bus_address(timeout_s: float = 1.0) -> str:
    """AT_SPI_BUS_ADDRESS, else ask the session bus's org.a11y.Bus, never starting a daemon.

    Raises LookupError with the reason when there is no session bus; OSError, TimeoutError
    or AtspiError when the launcher does not answer.
    """
    address = os.environ.get("AT_SPI_BUS_ADDRESS")
    if address:
        return address
    session = session_bus_address()
    if session is None:
        raise LookupError("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
    bus = AtspiBus(session, timeout_s=timeout_s, auto_start=False)
    try:
        (reply,) = bus.call_many(
            [Call(Node("org.a11y.Bus", "/org/a11y/bus"), "org.a11y.Bus", "GetAddress")],
            deadline=time.monotonic() + timeout_s,
        )
    finally:
        bus.close()
    if isinstance(reply, Exception):
        raise reply
    if not reply or not reply[0]:
        raise LookupError("the AT-SPI bus launcher gave no bus address")
    return str(reply[0])


class AtspiBus:
    """One connection to a D-Bus bus (blocking, for the inventory thread).

    `auto_start=False` on the session bus: asking it must never launch a daemon. On the
    accessibility bus it stays on, as in libatspi: the bus starts the AT-SPI registry
    (at-spi2-registryd) by D-Bus activation when it is first asked.
    """

    def __init__(self, address: str, *, timeout_s: float = 1.0, auto_start: bool = True) -> None:
        from jeepney.io.blocking import open_dbus_connection

        self._connection = open_dbus_connection(address, auth_timeout=timeout_s)
        self._auto_start = auto_start
        # from here on the replies are read by WireReader, not jeepney: it takes over the
        # bytes jeepney read past its Hello reply (a NameAcquired signal)
        pending = self._connection.parser.buf
        # (jeepney's BufferPipe.read(0) pops from its empty deque: IndexError)
        already = pending.read(pending.bytes_buffered) if pending.bytes_buffered else b""
        self._reader = WireReader(self._connection.sock.recv, already)
        #: each read's message as sent, but for its serial (bytes 8-11): a walk asks the same
        #: calls of the same nodes again, and jeepney's serialising cost more than the bus's
        #: answer
        self._messages: dict[Call, bytes] = {}

    def call_many(self, calls: Sequence[Call], deadline: float) -> list[Any]:
        """Send every call, then read the replies: each reply's body, or an AtspiError for a
        D-Bus error. TimeoutError when the replies are not all in by `deadline` (monotonic);
        replies that come later are read and dropped by the next call_many."""
        if time.monotonic() >= deadline:
            raise TimeoutError(f"the deadline passed before {len(calls)} AT-SPI calls were sent")
        connection = self._connection
        messages = self._messages
        if len(messages) > MESSAGES_KEPT:
            messages.clear()  # closed windows' nodes never come back
        waiting: dict[int, int] = {}
        batch = bytearray()
        for index, call in enumerate(calls):
            data = messages.get(call)
            if data is None:
                data = self._serialised(call)
                # reads only: a text set or an action is sent once and not kept
                if call.method.startswith("Get"):
                    messages[call] = data
            serial = next(connection.outgoing_serial)
            start = len(batch)
            batch += data
            # jeepney writes little-endian messages: the serial is the u32 at offset 8
            _SERIAL.pack_into(batch, start + 8, serial)
            waiting[serial] = index
        # one write for the batch: a send per message cost more than the bus's answers
        connection.sock.sendall(batch)
        results: list[Any] = [None] * len(calls)
        reader, ready = self._reader, connection.selector.select
        while waiting:
            message = reader.next_message()
            if message is None:
                # a reply already read is taken even past the deadline, as jeepney's receive
                if not ready(max(deadline - time.monotonic(), 0.0)):
                    raise TimeoutError(
                        f"{len(waiting)} AT-SPI replies still missing at the deadline"
                    )
                reader.read_more()
                continue
            reply = read_reply(message, waiting.__contains__)
            index = waiting.pop(reply.reply_serial, -1)
            if index < 0:
                continue  # a signal, or the late reply of an earlier call
            body = reply.body or ()
            if reply.kind == ERROR:
                text = body[0] if body and isinstance(body[0], str) else ""
                results[index] = AtspiError(reply.error_name or "error", text)
            else:
                results[index] = body
        return results

    def _serialised(self, call: Call) -> bytes:
        from jeepney import DBusAddress, new_method_call
        from jeepney.low_level import Endianness, MessageFlag

        address = DBusAddress(call.node.path, bus_name=call.node.bus, interface=call.interface)
        message = new_method_call(address, call.method, call.signature, call.args)
        assert message.header.endianness is Endianness.little
        if not self._auto_start:
            message.header.flags |= MessageFlag.no_auto_start
        data: bytes = message.serialise(serial=1)
        return data

    def call(self, call: Call, timeout_s: float) -> Any:
        """One call; its reply body, or the AtspiError raised."""
        (result,) = self.call_many([call], time.monotonic() + timeout_s)
        if isinstance(result, Exception):
            raise result
        return result

    def close(self) -> None:
        self._connection.close()
