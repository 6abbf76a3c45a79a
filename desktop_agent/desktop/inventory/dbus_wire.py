"""Replies read off a D-Bus socket without jeepney's general parser, for the AT-SPI walk.

A walk reads one to two hundred small replies of five shapes (a state set, a role, a list
of children, a name, a box); jeepney parses each through its general type objects, which was
most of the walk's CPU. `WireReader` cuts the socket's bytes into messages, reads from the
header only what `call_many` needs (type, reply serial, error name, signature), decodes the
bodies of those five signatures directly, and hands any other body to jeepney
(`Message.from_buffer`), so every reply still comes back in jeepney's shapes. A message
nobody waits for (a signal, a late reply) has its body skipped.

The wire format: the D-Bus specification, "Message Protocol" (header, alignment, the
marshalling of u, s, o, g, a, (), v). jeepney 0.9's low_level.py is the reference each
fast path is tested against (tests/unit/desktop/test_dbus_wire.py).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: message types (the specification's; jeepney's MessageType values)
METHOD_RETURN = 2
ERROR = 3
#: header field codes (jeepney's HeaderFields)
_ERROR_NAME = 4
_REPLY_SERIAL = 5
_SIGNATURE = 8
#: the byte size of a fixed-size header field value, by its signature code
_FIXED = {"y": 1, "b": 4, "n": 2, "q": 2, "i": 4, "u": 4, "h": 4, "x": 8, "t": 8, "d": 8}


@dataclass(frozen=True, slots=True)
class Reply:
    """What `call_many` needs of a message: its type, the serial it answers (0: none), the
    error's name, and its body as jeepney would give it (None until decoded)."""

    kind: int
    reply_serial: int
    error_name: str
    body: tuple[Any, ...] | None


def _align(pos: int, step: int) -> int:
    return pos + (-pos % step)


def _string(buf: bytes, pos: int, order: str) -> tuple[str, int]:
    """An s or o at `pos` (aligned to 4): its text and the position after its nul."""
    pos = _align(pos, 4)
    (size,) = struct.unpack_from(order + "I", buf, pos)
    start = pos + 4
    return buf[start : start + size].decode(), start + size + 1


def _state_set(buf: bytes, pos: int, order: str) -> tuple[Any, ...]:  # au
    pos = _align(pos, 4)
    (size,) = struct.unpack_from(order + "I", buf, pos)
    return (list(struct.unpack_from(f"{order}{size // 4}I", buf, pos + 4)),)


def _number(buf: bytes, pos: int, order: str) -> tuple[Any, ...]:  # u
    return struct.unpack_from(order + "I", buf, _align(pos, 4))


def _children(buf: bytes, pos: int, order: str) -> tuple[Any, ...]:  # a(so)
    pos = _align(pos, 4)
    (size,) = struct.unpack_from(order + "I", buf, pos)
    pos = _align(pos + 4, 8)
    end = pos + size
    items = []
    while pos < end:
        bus, pos = _string(buf, _align(pos, 8), order)
        path, pos = _string(buf, pos, order)
        items.append((bus, path))
    return (items,)


def _box(buf: bytes, pos: int, order: str) -> tuple[Any, ...]:  # (iiii)
    return (struct.unpack_from(order + "4i", buf, _align(pos, 8)),)


def _text(buf: bytes, pos: int, order: str) -> tuple[Any, ...]:  # s
    return (_string(buf, pos, order)[0],)


def _text_variant(buf: bytes, pos: int, order: str) -> tuple[Any, ...] | None:  # v holding s
    size = buf[pos]
    if buf[pos + 1 : pos + 1 + size] != b"s":
        return None
    return (("s", _string(buf, pos + size + 2, order)[0]),)


#: the bodies decoded here, by signature; None from one of them: let jeepney decode it
FAST_BODIES: dict[str, Callable[[bytes, int, str], tuple[Any, ...] | None]] = {
    "au": _state_set,
    "u": _number,
    "a(so)": _children,
    "(iiii)": _box,
    "s": _text,
    "v": _text_variant,
}


def message_size(head: bytes) -> int:
    """The whole message's length from its first 16 bytes."""
    order = "<" if head[:1] == b"l" else ">"
    body, _serial, fields = struct.unpack_from(order + "III", head, 4)
    size: int = _align(16 + fields, 8) + body
    return size


def read_reply(message: bytes, wanted: Callable[[int], bool]) -> Reply:
    """The reply in `message` (one whole message); its body only when `wanted(reply_serial)`."""
    order = "<" if message[:1] == b"l" else ">"
    kind = message[1]
    (fields_size,) = struct.unpack_from(order + "I", message, 12)
    pos, end = 16, 16 + fields_size
    reply_serial, error_name, signature = 0, "", ""
    while pos < end:
        pos = _align(pos, 8)
        code = message[pos]
        size = message[pos + 1]
        value_type = message[pos + 2 : pos + 2 + size].decode()
        pos += 3 + size  # the code, the signature's length byte, its text and its nul
        if value_type == "g":
            size = message[pos]
            value: Any = message[pos + 1 : pos + 1 + size].decode()
            pos += size + 2
        elif value_type in ("s", "o"):
            value, pos = _string(message, pos, order)
        else:
            width = _FIXED[value_type]
            pos = _align(pos, width)
            value = struct.unpack_from(order + "I", message, pos)[0] if width == 4 else None
            pos += width
        if code == _REPLY_SERIAL:
            reply_serial = value
        elif code == _ERROR_NAME:
            error_name = value
        elif code == _SIGNATURE:
            signature = value
    if not wanted(reply_serial):
        return Reply(kind, reply_serial, error_name, None)
    body: tuple[Any, ...] | None = ()
    if signature:
        fast = FAST_BODIES.get(signature)
        body = fast(message, _align(end, 8), order) if fast is not None else None
        if body is None:
            from jeepney.low_level import Message

            body = Message.from_buffer(message).body
    return Reply(kind, reply_serial, error_name, body)


class WireReader:
    """Cuts the bytes read from a socket into whole messages."""

    def __init__(self, recv: Callable[[int], bytes], already_read: bytes = b"") -> None:
        self._recv = recv
        self._buffer = bytearray(already_read)

    def next_message(self) -> bytes | None:
        """The next whole message among the bytes read so far, or None."""
        buffer = self._buffer
        if len(buffer) < 16:
            return None
        size = message_size(bytes(buffer[:16]))
        if len(buffer) < size:
            return None
        message = bytes(buffer[:size])
        del buffer[:size]
        return message

    def read_more(self) -> None:
        """Read what the socket has (call once it is readable); ConnectionResetError at its end."""
        data = self._recv(65536)
        if not data:
            raise ConnectionResetError("the D-Bus connection was closed")
        self._buffer += data
