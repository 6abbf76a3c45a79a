"""dbus_wire reads replies as jeepney would: every fast path against jeepney's own parser, on
messages jeepney serialises, in both byte orders; messages cut anywhere are put together."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest
from jeepney import DBusAddress, new_error, new_method_call, new_method_return, new_signal
from jeepney.io import blocking
from jeepney.io.blocking import DBusConnection
from jeepney.low_level import Endianness, HeaderFields, Message, Parser

from desktop_agent.desktop.inventory.atspi_bus import ACCESSIBLE, AtspiBus, Call, Node
from desktop_agent.desktop.inventory.dbus_wire import (
    ERROR,
    FAST_BODIES,
    METHOD_RETURN,
    WireReader,
    read_reply,
)

#: a body of each signature the walk reads, with the values AT-SPI answers
BODIES: list[tuple[str, tuple[Any, ...]]] = [
    ("au", ([1 << 1 | 1 << 25 | 1 << 30, 1 << 1],)),
    ("au", ([],)),
    ("u", (61,)),
    ("a(so)", ([(":1.4", "/org/a11y/atspi/accessible/8"), (":1.12", "/org/a11y/atspi/null")],)),
    ("a(so)", ([],)),
    ("(iiii)", ((-4, 27, 1920, 1053),)),
    ("s", ("push button",)),
    ("v", (("s", "Ünïcode — name ✓"),)),
    ("v", (("s", ""),)),
    # not among the fast ones: jeepney decodes them
    ("v", (("i", 3),)),
    ("a(sss)", ([("click", "", "<Enter>")],)),
    ("as", (["org.a11y.atspi.Accessible", "org.a11y.atspi.Component"],)),
    ("b", (True,)),
]


def serialised(message: Message, endianness: Endianness, serial: int) -> bytes:
    message.header.endianness = endianness
    wire: bytes = message.serialise(serial=serial)
    return wire


@pytest.mark.parametrize("endianness", [Endianness.little, Endianness.big])
@pytest.mark.parametrize(("signature", "body"), BODIES)
def test_a_reply_body_is_what_jeepney_reads(
    endianness: Endianness, signature: str, body: tuple[Any, ...]
) -> None:
    data = serialised(new_method_return(_answering(77), signature, body), endianness, 90)
    reply = read_reply(data, lambda serial: True)
    assert (reply.kind, reply.reply_serial, reply.error_name) == (METHOD_RETURN, 77, "")
    assert reply.body == Message.from_buffer(data).body
    assert reply.body == body


def test_the_fast_paths_are_the_walks_signatures() -> None:
    assert set(FAST_BODIES) == {"au", "u", "a(so)", "(iiii)", "s", "v"}


@pytest.mark.parametrize("endianness", [Endianness.little, Endianness.big])
def test_an_error_reply_gives_its_name_and_text(endianness: Endianness) -> None:
    data = serialised(
        new_error(
            _answering(41), "org.freedesktop.DBus.Error.UnknownMethod", "s", ("no GetItems",)
        ),
        endianness,
        7,
    )
    reply = read_reply(data, lambda serial: True)
    assert (reply.kind, reply.reply_serial) == (ERROR, 41)
    assert reply.error_name == "org.freedesktop.DBus.Error.UnknownMethod"
    assert reply.body == ("no GetItems",)


def test_a_message_nobody_waits_for_is_not_decoded() -> None:
    data = serialised(
        new_method_return(_answering(5), "a(so)", ([(":1.4", "/a")],)), Endianness.little, 9
    )
    assert read_reply(data, lambda serial: serial != 5).body is None
    signal = new_signal(DBusAddress("/org/a11y/atspi/accessible/1", interface="x.y"), "Changed")
    reply = read_reply(serialised(signal, Endianness.little, 3), lambda serial: serial != 0)
    assert (reply.reply_serial, reply.body) == (0, None)


def test_messages_cut_anywhere_come_out_whole_and_in_order() -> None:
    messages = [
        serialised(new_method_return(_answering(n), signature, body), Endianness.little, 100 + n)
        for n, (signature, body) in enumerate(BODIES, start=1)
    ]
    stream = b"".join(messages)
    pieces = [stream[i : i + 37] for i in range(0, len(stream), 37)]
    reader = WireReader(lambda _size: pieces.pop(0) if pieces else b"", already_read=b"")
    got: list[bytes] = []
    while len(got) < len(messages):
        message = reader.next_message()
        if message is None:
            reader.read_more()
        else:
            got.append(message)
    assert got == messages
    with pytest.raises(ConnectionResetError):
        reader.read_more()


def test_bytes_read_before_the_reader_took_over_come_first() -> None:
    first = serialised(new_method_return(_answering(1), "u", (3,)), Endianness.little, 1)
    second = serialised(new_method_return(_answering(2), "u", (4,)), Endianness.little, 2)
    rest = [first[20:] + second]
    reader = WireReader(lambda _size: rest.pop(0), already_read=first[:20])
    assert reader.next_message() is None
    reader.read_more()
    assert [reader.next_message(), reader.next_message(), reader.next_message()] == [
        first,
        second,
        None,
    ]


def _answering(serial: int) -> Message:
    call = new_method_call(DBusAddress("/p", bus_name=":1.4", interface="x.y"), "Get")
    call.header.serial = serial
    return call


class PeerBus:
    """The other end of a socketpair speaking as a D-Bus bus: every call it reads is answered,
    the replies serialised by jeepney (Hello: a unique name; GetRole: 61; anything else: a
    state set)."""

    def __init__(self) -> None:
        self.ours, self.theirs = socket.socketpair()
        self.theirs.settimeout(5)
        self._thread = threading.Thread(target=self._answer, daemon=True)
        self._thread.start()

    def _answer(self) -> None:
        parser = Parser()
        serial = 100
        try:
            while data := self.theirs.recv(65536):
                for call in parser.feed(data):
                    member = call.header.fields[HeaderFields.member]
                    signature, body = {"Hello": ("s", (":1.9",)), "GetRole": ("u", (61,))}.get(
                        member, ("au", ([3, 0],))
                    )
                    serial += 1
                    reply = new_method_return(call, signature, body)
                    self.theirs.sendall(reply.serialise(serial=serial))
        except OSError:
            pass  # closed, or the test is over

    def close(self) -> None:
        self.ours.close()
        self.theirs.close()
        self._thread.join(timeout=5)


@pytest.mark.parametrize("read_past_hello", [False, True])
def test_a_bus_reads_its_replies_whatever_jeepney_had_read_before(
    monkeypatch: pytest.MonkeyPatch, read_past_hello: bool
) -> None:
    """jeepney may or may not have read a NameAcquired signal with its Hello reply; the
    replies are read either way (an empty pipe once made the bus fail to open)."""
    peer = PeerBus()

    def opened(*_args: Any, **_kwargs: Any) -> DBusConnection:
        connection = DBusConnection(peer.ours)  # says Hello, as open_dbus_connection does
        if read_past_hello:
            bus = DBusAddress("/org/freedesktop/DBus", interface="org.freedesktop.DBus")
            signal = new_signal(bus, "NameAcquired", "s", (":1.9",))
            connection.parser.add_data(signal.serialise(serial=2))
        return connection

    monkeypatch.setattr(blocking, "open_dbus_connection", opened)
    try:
        bus = AtspiBus("unix:path=/unused")
        node = Node(":1.4", "/org/a11y/atspi/accessible/3")
        replies = bus.call_many(
            [Call(node, ACCESSIBLE, "GetRole"), Call(node, ACCESSIBLE, "GetState")],
            deadline=time.monotonic() + 5,
        )
    finally:
        peer.close()
    assert replies == [(61,), ([3, 0],)]
