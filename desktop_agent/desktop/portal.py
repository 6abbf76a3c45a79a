"""One xdg-desktop-portal RemoteDesktop session with a ScreenCast of a monitor, over jeepney.

The portal asks the person (a dialog of the desktop, never of this app) whether this program
may see the screen and send input; the product never answers it. `PortalSession.start()`
blocks until they did (on the capture/input worker thread, never the GUI's), then holds:
the stream (its PipeWire node, its place and size on the desktop), the devices granted, and
a PipeWire remote (a file descriptor) the frames are read through (desktop/pipewire_frames.py).
Input goes through the same session: absolute pointer motion in the stream's coordinates,
buttons as evdev codes, keys as X keysyms.

The calls and their signatures: the portal's D-Bus interface documents
org.freedesktop.portal.RemoteDesktop (version 1 in portal 1.16; `persist_mode` and
`restore_token` came with version 2) and org.freedesktop.portal.ScreenCast.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)

PORTAL = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
REMOTE = "org.freedesktop.portal.RemoteDesktop"
CAST = "org.freedesktop.portal.ScreenCast"
SHORTCUTS = "org.freedesktop.portal.GlobalShortcuts"
SCREENSHOT = "org.freedesktop.portal.Screenshot"
REQUEST = "org.freedesktop.portal.Request"
SESSION = "org.freedesktop.portal.Session"
#: device types (RemoteDesktop.AvailableDeviceTypes) and source types (ScreenCast)
KEYBOARD, POINTER = 1, 2
MONITOR = 1
#: the person may take a while to read the dialog; a run waits for them this long
CONSENT_TIMEOUT_S = 300.0
#: persist_mode 2: until the person revokes it (RemoteDesktop version 2 and later)
PERSIST_UNTIL_REVOKED = 2
#: Linux evdev button codes (linux/input-event-codes.h), what NotifyPointerButton takes
BUTTONS = {"left": 0x110, "right": 0x111, "middle": 0x112}
VERTICAL, HORIZONTAL = 0, 1
SHIFT_KEYSYM = 0xFFE1


class PortalUnavailable(RuntimeError):
    """The desktop has no usable portal for this (absent, too old, or a part missing)."""


class PortalDeclined(RuntimeError):
    """The person said no to the portal's dialog, or closed it."""


@dataclass(frozen=True, slots=True)
class Stream:
    """A monitor's ScreenCast stream: its PipeWire node, place and size in desktop pixels."""

    node: int
    left: int
    top: int
    width: int
    height: int


class TokenStore(Protocol):
    """Where the portal's restore token lives between runs (the OS keyring)."""

    def load(self) -> str | None: ...

    def save(self, token: str) -> None: ...


class KeyringTokens:
    """The restore token in the OS keyring (keyring's default backend)."""

    SERVICE = "desktop-agent"
    NAME = "wayland-portal-restore-token"

    def load(self) -> str | None:
        import keyring

        try:
            return keyring.get_password(self.SERVICE, self.NAME)
        except Exception as error:  # noqa: BLE001 - no keyring backend: the dialog asks again
            log.info("no restore token read from the keyring: %s", error)
            return None

    def save(self, token: str) -> None:
        import keyring

        try:
            keyring.set_password(self.SERVICE, self.NAME, token)
        except Exception as error:  # noqa: BLE001 - the next run asks the person again
            log.info("the restore token was not kept: %s", error)


def _connect() -> Any:
    from jeepney.io.blocking import open_dbus_connection

    return open_dbus_connection(bus="SESSION", enable_fds=True)


class PortalSession:
    """The RemoteDesktop + ScreenCast session; thread-safe (one lock around the bus)."""

    def __init__(
        self,
        *,
        connect: Callable[[], Any] = _connect,
        tokens: TokenStore | None = None,
        consent_timeout: float = CONSENT_TIMEOUT_S,
    ) -> None:
        self._connect = connect
        self._tokens = tokens if tokens is not None else KeyringTokens()
        self.consent_timeout = consent_timeout
        self._lock = threading.RLock()
        self._bus: Any = None
        self.handle = ""
        self.stream: Stream | None = None
        self.devices = 0
        self.pipewire_fd = -1
        self.version = 0

    @property
    def started(self) -> bool:
        return self.stream is not None

    @property
    def input_granted(self) -> bool:
        return self.devices & (KEYBOARD | POINTER) == KEYBOARD | POINTER

    # -- the session -------------------------------------------------------------------------

    def start(self) -> Stream:
        """Create the session, ask the person through the portal's dialog, open PipeWire."""
        with self._lock:
            if self.stream is not None:
                return self.stream
            try:
                self._bus = self._bus or self._connect()
            except Exception as error:  # noqa: BLE001 - no session bus, jeepney's auth errors
                raise PortalUnavailable(f"no D-Bus session bus: {error}") from None
            self.version = self._version()
            _, results = self._request(
                REMOTE, "CreateSession", "a{sv}", {"session_handle_token": ("s", _token())}
            )
            self.handle = str(_value(results, "session_handle", ""))
            options: dict[str, Any] = {"types": ("u", KEYBOARD | POINTER)}
            restore = self._tokens.load() if self.version >= 2 else None
            if self.version >= 2:
                options["persist_mode"] = ("u", PERSIST_UNTIL_REVOKED)
                if restore:
                    options["restore_token"] = ("s", restore)
            self._request(REMOTE, "SelectDevices", "oa{sv}", self.handle, options)
            self._request(
                CAST,
                "SelectSources",
                "oa{sv}",
                self.handle,
                {"types": ("u", MONITOR), "multiple": ("b", False)},
            )
            _, results = self._request(
                REMOTE, "Start", "osa{sv}", self.handle, "", {}, timeout=self.consent_timeout
            )
            self.devices = int(_value(results, "devices", 0))
            streams = _value(results, "streams", [])
            if not streams:
                raise PortalUnavailable("the portal started no screen stream")
            token = _value(results, "restore_token", None)
            if token:
                self._tokens.save(str(token))
            self.stream = _stream(streams[0])
            self.pipewire_fd = self._open_pipewire()
            if self.input_granted:
                # mutter 43 makes its virtual keyboard at the session's first key event, and
                # that event reaches no window (measured: the first typed letter was lost); a
                # Shift pressed and let go here is the one lost
                for pressed in (1, 0):
                    self._notify("NotifyKeyboardKeysym", "oa{sv}iu", SHIFT_KEYSYM, pressed)
            return self.stream

    def _version(self) -> int:
        from jeepney import DBusAddress, Properties

        message = Properties(DBusAddress(PORTAL_PATH, PORTAL, REMOTE)).get("version")
        reply = self._bus.send_and_get_reply(message, timeout=10)
        if reply.header.message_type.name == "error":
            raise PortalUnavailable(
                "the desktop's portal has no RemoteDesktop (wlroots compositors have none: "
                "use the X11 session, or wayvnc's virtual input)"
            )
        return int(reply.body[0][1])

    def _open_pipewire(self) -> int:
        reply = self._call(CAST, "OpenPipeWireRemote", "oa{sv}", self.handle, {})
        return int(reply[0].to_raw_fd())

    def _call(self, interface: str, method: str, signature: str, *args: Any) -> tuple[Any, ...]:
        return call(self._bus, interface, method, signature, *args)

    def _request(
        self, interface: str, method: str, signature: str, *args: Any, timeout: float = 30
    ) -> tuple[int, dict[str, Any]]:
        return request(
            self._bus,
            interface,
            method,
            signature,
            *args,
            timeout=timeout,
            declined="the person declined sharing the screen and input",
        )

    # -- input -------------------------------------------------------------------------------

    def pointer_to(self, x: float, y: float) -> None:
        """Move the pointer to desktop pixel (x, y), clamped into the stream."""
        stream = self._require_input()
        local_x = min(max(x - stream.left, 0), stream.width - 1)
        local_y = min(max(y - stream.top, 0), stream.height - 1)
        self._notify(
            "NotifyPointerMotionAbsolute",
            "oa{sv}udd",
            stream.node,
            float(local_x),
            float(local_y),
        )

    def button(self, name: str, pressed: bool) -> None:
        self._require_input()
        self._notify("NotifyPointerButton", "oa{sv}iu", BUTTONS[name], int(pressed))

    def scroll(self, axis: int, steps: int) -> None:
        self._require_input()
        self._notify("NotifyPointerAxisDiscrete", "oa{sv}ui", axis, steps)

    def keysym(self, keysym: int, pressed: bool) -> None:
        self._require_input()
        self._notify("NotifyKeyboardKeysym", "oa{sv}iu", keysym, int(pressed))

    def _require_input(self) -> Stream:
        stream = self.start()
        if not self.input_granted:
            raise PortalDeclined(
                "the person shared the screen but not remote interaction (keyboard and pointer)"
            )
        return stream

    def _notify(self, method: str, signature: str, *args: Any) -> None:
        with self._lock:
            self._call(REMOTE, method, signature, self.handle, {}, *args)

    def close(self) -> None:
        with self._lock:
            if self._bus is None:
                return
            try:
                if self.handle:
                    from jeepney import DBusAddress, new_method_call

                    with contextlib.suppress(Exception):
                        self._bus.send_and_get_reply(
                            new_method_call(DBusAddress(self.handle, PORTAL, SESSION), "Close"),
                            timeout=5,
                        )
            finally:
                self._bus.close()
                self._bus = None
                if self.pipewire_fd >= 0:
                    os.close(self.pipewire_fd)
                self.pipewire_fd = -1
                self.stream = None
                self.handle = ""


@dataclass(frozen=True, slots=True)
class PortalParts:
    """What the desktop's portal offers, read without a session (no dialog): its versions
    and the devices and sources it can grant; 0 where an interface is missing."""

    remote_version: int
    devices: int
    cast_version: int
    sources: int
    shortcuts_version: int = 0
    screenshot_version: int = 0

    @property
    def input(self) -> bool:
        return self.devices & (KEYBOARD | POINTER) == KEYBOARD | POINTER

    @property
    def capture(self) -> bool:
        return bool(self.sources & MONITOR)

    @property
    def screenshot_only(self) -> bool:
        """No ScreenCast of a monitor, but the Screenshot portal: capture takes that way."""
        return not self.capture and self.screenshot_version > 0


def call(bus: Any, interface: str, method: str, signature: str, *args: Any) -> tuple[Any, ...]:
    """A method of the portal's `interface`; its reply's body, PortalUnavailable on an error."""
    from jeepney import DBusAddress, new_method_call

    address = DBusAddress(PORTAL_PATH, PORTAL, interface)
    reply = bus.send_and_get_reply(new_method_call(address, method, signature, args), timeout=10)
    if reply.header.message_type.name == "error":
        raise PortalUnavailable(f"{interface}.{method}: {reply.body[0] if reply.body else ''}")
    return tuple(reply.body)


def request(
    bus: Any,
    interface: str,
    method: str,
    signature: str,
    *args: Any,
    timeout: float = 30,
    declined: str = "the person said no",
) -> tuple[int, dict[str, Any]]:
    """Call a method that answers through a Request object's Response signal (its last
    argument the options, given a handle_token here); its (response, results). The match is
    added before the call, so no answer is missed. Response 1: PortalDeclined(`declined`)."""
    from jeepney import MatchRule, message_bus

    token = _token()
    sender = bus.unique_name.lstrip(":").replace(".", "_")
    path = f"{PORTAL_PATH}/request/{sender}/{token}"
    rule = MatchRule(type="signal", interface=REQUEST, member="Response", path=path)
    bus.send_and_get_reply(message_bus.AddMatch(rule), timeout=10)
    options = dict(args[-1], handle_token=("s", token))
    try:
        with bus.filter(rule) as queue:
            call(bus, interface, method, signature, *args[:-1], options)
            try:
                signal = bus.recv_until_filtered(queue, timeout=timeout)
            except TimeoutError:
                raise PortalDeclined(
                    f"nobody answered the desktop's {method} dialog within {timeout:.0f} s"
                ) from None
    finally:
        with contextlib.suppress(Exception):
            bus.send_and_get_reply(message_bus.RemoveMatch(rule), timeout=10)
    response, results = signal.body
    if response == 1:
        raise PortalDeclined(declined)
    if response != 0:
        raise PortalUnavailable(f"the portal could not {method} (response {response})")
    return response, results


class PortalScreenshots:
    """Whole-screen pictures through org.freedesktop.portal.Screenshot (interactive false):
    where the desktop's portal has no ScreenCast. Each picture is a file the portal writes
    (its URI in the Response); it is read and deleted. The portal may ask the person once
    whether this program may take screenshots (xdg-desktop-portal's own permission dialog);
    a "no" is PortalDeclined. Thread-safe (one lock around the bus)."""

    def __init__(
        self, *, connect: Callable[[], Any] = _connect, consent_timeout: float = CONSENT_TIMEOUT_S
    ) -> None:
        self._connect = connect
        self.consent_timeout = consent_timeout
        self._lock = threading.Lock()
        self._bus: Any = None

    def take(self) -> Any:
        """The screen now, as a Pillow RGB image (the file the portal wrote is deleted)."""
        from urllib.parse import unquote, urlparse

        from PIL import Image

        with self._lock:
            if self._bus is None:
                try:
                    self._bus = self._connect()
                except Exception as error:  # noqa: BLE001 - no session bus, jeepney's auth errors
                    raise PortalUnavailable(f"no D-Bus session bus: {error}") from None
            _, results = request(
                self._bus,
                SCREENSHOT,
                "Screenshot",
                "sa{sv}",
                "",
                {"interactive": ("b", False)},
                timeout=self.consent_timeout,
                declined="the person did not allow this program to take screenshots",
            )
        uri = str(_value(results, "uri", ""))
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            raise PortalUnavailable(f"the Screenshot portal gave no file (uri {uri!r})")
        path = unquote(parsed.path)
        try:
            with Image.open(path) as picture:
                return picture.convert("RGB")
        except OSError as error:
            raise PortalUnavailable(f"the portal's screenshot could not be read: {error}") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def close(self) -> None:
        with self._lock:
            if self._bus is not None:
                self._bus.close()
                self._bus = None


def read_version(bus: Any, interface: str) -> int:
    """The portal's `interface` version; 0 where the portal has no such interface."""
    from jeepney import DBusAddress, Properties

    message = Properties(DBusAddress(PORTAL_PATH, PORTAL, interface)).get("version")
    reply = bus.send_and_get_reply(message, timeout=10)
    if reply.header.message_type.name == "error":
        return 0
    return int(reply.body[0][1])


def probe(connect: Callable[[], Any] = _connect) -> PortalParts:
    """Read the RemoteDesktop and ScreenCast properties; PortalUnavailable without a bus."""
    from jeepney import DBusAddress, Properties

    try:
        bus = connect()
    except Exception as error:  # noqa: BLE001 - no session bus, jeepney's auth errors
        raise PortalUnavailable(f"no D-Bus session bus: {error}") from None
    try:

        def read(interface: str, name: str) -> int:
            message = Properties(DBusAddress(PORTAL_PATH, PORTAL, interface)).get(name)
            reply = bus.send_and_get_reply(message, timeout=10)
            if reply.header.message_type.name == "error":
                return 0
            return int(reply.body[0][1])

        return PortalParts(
            read(REMOTE, "version"),
            read(REMOTE, "AvailableDeviceTypes"),
            read(CAST, "version"),
            read(CAST, "AvailableSourceTypes"),
            read(SHORTCUTS, "version"),
            read(SCREENSHOT, "version"),
        )
    finally:
        bus.close()


def _token() -> str:
    return "da" + secrets.token_hex(6)


def _value(results: dict[str, Any], key: str, default: Any) -> Any:
    entry = results.get(key)
    return entry[1] if entry is not None else default


def _stream(entry: Any) -> Stream:
    node, properties = entry
    left, top = _value(properties, "position", (0, 0))
    width, height = _value(properties, "size", (0, 0))
    if width <= 0 or height <= 0:
        raise PortalUnavailable("the portal's stream has no size")
    return Stream(int(node), int(left), int(top), int(width), int(height))
