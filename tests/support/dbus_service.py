"""A small D-Bus service for tests (jeepney, on a thread): it owns a name on a bus and answers
the method calls its handlers know. Each handler gets the call's body and its sender's unique
name and returns the reply's (signature, body), or (signature, body, then): `then()` runs
right after the reply is sent (a portal's Request answers with a signal after its reply).
Used where a desktop part does not run on this machine and the test stands in for it with
the interface as its specification XML says (the caller cites the lines).

Unknown methods get org.freedesktop.DBus.Error.UnknownMethod, as a GDBus service answers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import DBusConnection, open_dbus_connection

Handler = Callable[[tuple[Any, ...], str], tuple[Any, ...]]


class DBusService:
    """`handlers` by (interface, member); `properties` by (interface, name) as (type, value)."""

    def __init__(
        self,
        address: str,
        name: str,
        handlers: dict[tuple[str, str], Handler],
        properties: dict[tuple[str, str], tuple[str, Any]] | None = None,
    ) -> None:
        self.connection: DBusConnection = open_dbus_connection(bus=address)
        self.handlers = handlers
        self.properties = properties or {}
        self.calls: list[tuple[str, str, tuple[Any, ...]]] = []
        self._send_lock = threading.Lock()
        reply = self.connection.send_and_get_reply(message_bus.RequestName(name, 4), timeout=5)
        assert reply.body[0] == 1, f"{name} is owned already"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"dbus-{name}", daemon=True)
        self._thread.start()

    def emit(self, path: str, interface: str, member: str, signature: str, *body: Any) -> None:
        message = new_signal(DBusAddress(path, interface=interface), member, signature, body)
        with self._send_lock:
            self.connection.send(message)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                message = self.connection.receive(timeout=0.1)
            except TimeoutError:
                continue
            except (OSError, ValueError):
                return  # closed
            if message.header.message_type != MessageType.method_call:
                continue
            fields = message.header.fields
            interface = fields.get(HeaderFields.interface, "")
            member = fields.get(HeaderFields.member, "")
            self.calls.append((interface, member, tuple(message.body)))
            reply, then = self._answer(message, interface, member)
            with self._send_lock:
                self.connection.send(reply)
            if then is not None:
                then()

    def _answer(self, message: Any, interface: str, member: str) -> tuple[Any, Any]:
        reply = self._reply(message, interface, member)
        return reply if isinstance(reply, tuple) else (reply, None)

    def _reply(self, message: Any, interface: str, member: str) -> Any:
        if interface == "org.freedesktop.DBus.Properties":
            if member == "Get":
                wanted = self.properties.get((message.body[0], message.body[1]))
                if wanted is not None:
                    return new_method_return(message, "v", (wanted,))
                return new_error(message, "org.freedesktop.DBus.Error.InvalidArgs", "s", ("no",))
            if member == "GetAll":
                found = {n: v for (i, n), v in self.properties.items() if i == message.body[0]}
                return new_method_return(message, "a{sv}", (found,))
        handler = self.handlers.get((interface, member))
        if handler is None:
            return new_error(
                message, "org.freedesktop.DBus.Error.UnknownMethod", "s", (f"no {member}",)
            )
        answer = handler(tuple(message.body), message.header.fields.get(HeaderFields.sender, ""))
        signature, body = answer[0], answer[1]
        reply = new_method_return(message, signature or "", body)
        return (reply, answer[2]) if len(answer) > 2 else reply

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.connection.close()
