"""A GlobalShortcuts portal for tests, on a private session bus: no desktop here has one
(GNOME 43's xdg-desktop-portal 1.16 has none), so the test stands in for the desktop's.

It owns org.freedesktop.portal.Desktop and implements org.freedesktop.portal.GlobalShortcuts
version 1 as flatpak/xdg-desktop-portal data/org.freedesktop.portal.GlobalShortcuts.xml (at
01ccc8a) says, its lines:
  <method name="CreateSession"> <arg type="a{sv}" name="options" direction="in"/>
    <arg type="o" name="handle" direction="out"/>; Response results ``session_handle`` (``s``)
    ("an object path that was erroneously implemented as ``s``");
  <method name="BindShortcuts"> <arg type="o" name="session_handle" direction="in"/>
    <arg type="a(sa{sv})" name="shortcuts" direction="in"/>
    <arg type="s" name="parent_window" direction="in"/>
    <arg type="a{sv}" name="options" direction="in"/>
    <arg type="o" name="request_handle" direction="out"/>; Response results ``shortcuts``
    (``a(sa{sv})``) with ``description`` and ``trigger_description`` (``s``);
  <signal name="Activated"> <arg type="o" name="session_handle" .../>
    <arg type="s" name="shortcut_id" .../> <arg type="t" name="timestamp" .../>
    <arg type="a{sv}" name="options" .../>;
  <property name="version" type="u" access="read"/>.
The Request object's path and its Response signal (u response, a{sv} results) are
org.freedesktop.portal.Request's: .../request/SENDER/TOKEN, SENDER the caller's unique name
without its ':' and with '.' as '_'.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from desktop_agent.eval.desk import _read_line
from tests.support.dbus_service import DBusService

PORTAL = "org.freedesktop.portal.Desktop"
PATH = "/org/freedesktop/portal/desktop"
SHORTCUTS = "org.freedesktop.portal.GlobalShortcuts"
REQUEST = "org.freedesktop.portal.Request"


class GlobalShortcutsPortal:
    """The portal on `address`; `sessions` are the session handles made, `bound` what each
    BindShortcuts asked for (id: options)."""

    def __init__(self, address: str, trigger: str = "Ctrl+Alt+Esc", *, binds: bool = True) -> None:
        """`binds` False: the desktop binds none of the shortcuts asked (an empty list, as the
        specification allows: "this includes ... the empty set")."""
        self.trigger = trigger
        self.binds = binds
        self.sessions: list[str] = []
        self.bound: list[dict[str, Any]] = []
        self.closed: list[str] = []
        self.service = DBusService(
            address,
            PORTAL,
            {
                (SHORTCUTS, "CreateSession"): self._create_session,
                (SHORTCUTS, "BindShortcuts"): self._bind,
                ("org.freedesktop.portal.Session", "Close"): self._close,
            },
            {(SHORTCUTS, "version"): ("u", 1)},
        )

    @staticmethod
    def _sender(sender: str) -> str:
        return sender.lstrip(":").replace(".", "_")

    def _respond(self, path: str, results: dict[str, Any]) -> Any:
        return lambda: self.service.emit(path, REQUEST, "Response", "ua{sv}", 0, results)

    def _create_session(self, body: tuple[Any, ...], sender: str) -> tuple[Any, ...]:
        (options,) = body
        request = f"{PATH}/request/{self._sender(sender)}/{options['handle_token'][1]}"
        session = f"{PATH}/session/{self._sender(sender)}/{options['session_handle_token'][1]}"
        self.sessions.append(session)
        return "o", (request,), self._respond(request, {"session_handle": ("s", session)})

    def _bind(self, body: tuple[Any, ...], sender: str) -> tuple[Any, ...]:
        session, shortcuts, _parent, options = body
        assert session in self.sessions, "BindShortcuts on a session never made"
        request = f"{PATH}/request/{self._sender(sender)}/{options['handle_token'][1]}"
        self.bound.append(dict(shortcuts))
        answered = [
            (
                shortcut_id,
                {
                    "description": wanted["description"],
                    "trigger_description": ("s", self.trigger),
                },
            )
            for shortcut_id, wanted in shortcuts
            if self.binds
        ]
        return "o", (request,), self._respond(request, {"shortcuts": ("a(sa{sv})", answered)})

    def _close(self, body: tuple[Any, ...], sender: str) -> tuple[Any, ...]:
        self.closed.append(sender)
        return None, ()

    def activate(self, shortcut_id: str, session: str | None = None) -> None:
        """The person presses the shortcut: Activated on the session (the last made)."""
        handle = session or self.sessions[-1]
        stamp = int(time.monotonic() * 1000)
        self.service.emit(PATH, SHORTCUTS, "Activated", "osta{sv}", handle, shortcut_id, stamp, {})

    def close(self) -> None:
        self.service.close()


@contextmanager
def private_session_bus() -> Iterator[str]:
    """A dbus-daemon of its own (its address), ended after the body."""
    daemon = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert daemon.stdout is not None
        yield _read_line(daemon.stdout.fileno(), 10, "dbus-daemon")
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        if daemon.stdout is not None:
            daemon.stdout.close()
