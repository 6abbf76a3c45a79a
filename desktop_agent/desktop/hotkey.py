"""The global stop hotkey: XGrabKey on the X11 root window, RegisterHotKey on Windows.

The callback runs on the asyncio loop (call_soon_threadsafe), never on the listener thread.

Windows: no keyboard hook. A low-level hook (what the `keyboard` package installs) runs Python
for every key of the session, and Windows silently removes a hook that answers later than
LowLevelHooksTimeout (keyboard issue #217): under load the emergency stop would vanish
unnoticed. RegisterHotKey has the system match the combination and post WM_HOTKEY to the
listener's queue, where it waits however busy the process is; there is nothing to time out,
and it also fires over windows of elevated programs, which low-level hooks of an ordinary
process do not see. The handle says whether it is armed; `on_change(armed, why)` runs on
the loop when that changes (the listener ended: X server gone, message loop failed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from desktop_agent.core.errors import DesktopAgentError
from desktop_agent.core.keys import normalize_key

log = logging.getLogger(__name__)

DEFAULT_COMBO = "ctrl+alt+esc"
MODIFIERS = ("ctrl", "alt", "shift", "win")
#: our key names → X keysym names, where they differ
_X_KEYSYMS = {
    "esc": "Escape",
    "enter": "Return",
    "tab": "Tab",
    "space": "space",
    "backspace": "BackSpace",
    "delete": "Delete",
    "insert": "Insert",
    "home": "Home",
    "end": "End",
    "pageup": "Prior",
    "pagedown": "Next",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "pause": "Pause",
    "printscreen": "Print",
    "scrolllock": "Scroll_Lock",
    "apps": "Menu",
}
#: our key names → Windows virtual-key codes (WinUser.h); letters and digits are their
#: upper-case code points, punctuation is asked of VkKeyScanW for the user's layout
_WINDOWS_VK = {
    "esc": 0x1B, "enter": 0x0D, "tab": 0x09, "space": 0x20, "backspace": 0x08,
    "delete": 0x2E, "insert": 0x2D, "home": 0x24, "end": 0x23, "pageup": 0x21,
    "pagedown": 0x22, "up": 0x26, "down": 0x28, "left": 0x25, "right": 0x27, "pause": 0x13,
    "printscreen": 0x2C, "scrolllock": 0x91, "apps": 0x5D,
    **{f"f{n}": 0x6F + n for n in range(1, 25)},
}  # fmt: skip
MOD_ALT, MOD_CONTROL, MOD_SHIFT, MOD_WIN, MOD_NOREPEAT = 0x1, 0x2, 0x4, 0x8, 0x4000
_WINDOWS_MODS = {"alt": MOD_ALT, "ctrl": MOD_CONTROL, "shift": MOD_SHIFT, "win": MOD_WIN}
#: the id of our one hotkey on its thread
HOTKEY_ID = 1


class HotkeyUnavailable(DesktopAgentError):
    """The global hotkey cannot be registered (taken by another program, no display, ...)."""


@dataclass(frozen=True, slots=True)
class Combo:
    modifiers: frozenset[str]
    key: str

    def __str__(self) -> str:
        return "+".join([*(m for m in MODIFIERS if m in self.modifiers), self.key])


def parse_combo(combo: str) -> Combo:
    """'ctrl+alt+esc' → Combo; aliases as for hotkey (control, escape, super, ...)."""
    parts = [part.strip() for part in combo.split("+")]
    if not combo.strip() or any(not part for part in parts):
        raise HotkeyUnavailable(f"invalid hotkey {combo!r}: write it like 'ctrl+alt+esc'")
    try:
        names = [normalize_key(part) for part in parts]
    except ValueError as error:
        raise HotkeyUnavailable(f"invalid hotkey {combo!r}: {error}") from None
    *mods, key = names
    mods = [{"ctrlleft": "ctrl", "altleft": "alt", "shiftleft": "shift"}.get(m, m) for m in mods]
    if any(mod not in MODIFIERS for mod in mods):
        bad = next(mod for mod in mods if mod not in MODIFIERS)
        raise HotkeyUnavailable(f"invalid hotkey {combo!r}: {bad!r} is not a modifier")
    if key in MODIFIERS:
        raise HotkeyUnavailable(f"invalid hotkey {combo!r}: it must end with a non-modifier key")
    if not mods:
        raise HotkeyUnavailable(f"invalid hotkey {combo!r}: a global hotkey needs a modifier")
    return Combo(frozenset(mods), key)


class HotkeyHandle(Protocol):
    @property
    def armed(self) -> bool:
        """Whether a press of the combination stops runs now."""
        ...

    def stop(self) -> None:
        """Release the hotkey; safe to call twice."""
        ...


#: told on the loop when the hotkey stops (or starts again) being armed, with why
StateCallback = Callable[[bool, str], None]


def _deliver(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    try:
        loop.call_soon_threadsafe(callback)
    except RuntimeError:  # the loop is closed: nobody to stop any more
        log.debug("hotkey pressed after its loop closed")


class _Arming:
    """The armed state of a listener, told to `on_change` on the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_change: StateCallback | None) -> None:
        self.armed = True
        self._loop = loop
        self._on_change = on_change

    def lost(self, why: str) -> None:
        if not self.armed:
            return
        self.armed = False
        log.warning("the stop hotkey is not armed any more: %s", why)
        if self._on_change is not None:
            on_change = self._on_change
            _deliver(self._loop, lambda: on_change(False, why))


def start_global_hotkey(
    combo: str,
    callback: Callable[[], None],
    loop: asyncio.AbstractEventLoop,
    *,
    on_change: StateCallback | None = None,
) -> HotkeyHandle:
    """Listen for `combo` system-wide; HotkeyUnavailable with the reason when that cannot be.
    `on_change(armed, why)` runs on `loop` when the listener stops being armed."""
    parsed = parse_combo(combo)
    arming = _Arming(loop, on_change)
    if sys.platform == "win32":
        return _RegisteredHotkey.start(parsed, callback, loop, arming)
    if _wayland():
        # a Wayland session: the desktop's GlobalShortcuts portal where it has one; else
        # today's path (the X grab sees XWayland's keys only; the desktop shortcut to
        # `desktop-agent stop-all` is doctor's fix)
        portal = _PortalHotkey.start(parsed, callback, loop, arming)
        if portal is not None:
            return portal
    return _X11Hotkey.start(parsed, callback, loop, arming)


def _wayland() -> bool:
    from desktop_agent.desktop.session import session_kind

    return session_kind() == "wayland"


def hotkey_backend() -> str:
    if sys.platform == "win32":
        return "RegisterHotKey (Windows)"
    return "XGrabKey on the X11 root window"


#: the stop's id in the portal's session, and how long the desktop may take to bind it (it
#: may show the person a dialog: KDE does) before the app starts without it
PORTAL_SHORTCUT_ID = "stop-all"
PORTAL_BIND_TIMEOUT_S = 60.0
#: our modifier names as the XDG shortcuts specification writes them (preferred_trigger)
_TRIGGER_MODIFIERS = {"ctrl": "CTRL", "alt": "ALT", "shift": "SHIFT", "win": "LOGO"}


def portal_trigger(combo: Combo) -> str:
    """`combo` as the shortcuts specification's trigger text, e.g. CTRL+ALT+Escape."""
    mods = [_TRIGGER_MODIFIERS[name] for name in MODIFIERS if name in combo.modifiers]
    return "+".join([*mods, _X_KEYSYMS.get(combo.key, combo.key)])


class _PortalHotkey:
    """The stop bound through org.freedesktop.portal.GlobalShortcuts (version 1: CreateSession,
    BindShortcuts, the Activated signal), on its own session bus connection; a listener thread
    hands each Activated of our shortcut in our session to the loop. The desktop picks the
    keys (the combination is only its preferred trigger)."""

    def __init__(self, bus: Any, handle: str, rule: Any, arming: _Arming) -> None:
        self._bus = bus
        self._handle = handle
        self._rule = rule
        self._arming = arming
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        #: what the desktop says triggers it ("" when it did not say)
        self.trigger = ""

    @property
    def armed(self) -> bool:
        return self._arming.armed and not self._stopped.is_set()

    @classmethod
    def start(
        cls,
        combo: Combo,
        callback: Callable[[], None],
        loop: asyncio.AbstractEventLoop,
        arming: _Arming,
    ) -> _PortalHotkey | None:
        """The bound shortcut; None where the portal has no GlobalShortcuts (version < 1 or
        no session bus); HotkeyUnavailable when it has one and the binding failed."""
        from jeepney import MatchRule, message_bus

        from desktop_agent.desktop import portal

        try:
            bus = portal._connect()
        except Exception as error:  # noqa: BLE001 - no session bus: today's path
            log.info("no GlobalShortcuts portal: no session bus (%s)", error)
            return None
        try:
            if portal.read_version(bus, portal.SHORTCUTS) < 1:
                bus.close()
                return None
            # the match first: no Activated is missed once bound
            rule = MatchRule(type="signal", interface=portal.SHORTCUTS, member="Activated")
            bus.send_and_get_reply(message_bus.AddMatch(rule), timeout=10)
            _, results = portal.request(
                bus,
                portal.SHORTCUTS,
                "CreateSession",
                "a{sv}",
                {"session_handle_token": ("s", portal._token())},
            )
            handle = str(portal._value(results, "session_handle", ""))
            wanted = {
                "description": ("s", "Stop desktop-agent (all runs)"),
                "preferred_trigger": ("s", portal_trigger(combo)),
            }
            _, bound = portal.request(
                bus,
                portal.SHORTCUTS,
                "BindShortcuts",
                "oa(sa{sv})sa{sv}",
                handle,
                [(PORTAL_SHORTCUT_ID, wanted)],
                "",
                {},
                timeout=PORTAL_BIND_TIMEOUT_S,
                declined="the person did not bind the stop shortcut",
            )
        except (portal.PortalUnavailable, portal.PortalDeclined) as error:
            bus.close()
            raise HotkeyUnavailable(f"the GlobalShortcuts portal: {error}") from None
        except BaseException:
            bus.close()
            raise
        shortcuts = dict(portal._value(bound, "shortcuts", []))
        if PORTAL_SHORTCUT_ID not in shortcuts:
            bus.close()
            raise HotkeyUnavailable("the desktop's GlobalShortcuts portal did not bind the stop")
        listener = cls(bus, handle, rule, arming)
        listener.trigger = str(
            portal._value(shortcuts[PORTAL_SHORTCUT_ID], "trigger_description", "")
        )
        listener._thread = threading.Thread(
            target=listener._listen,
            args=(callback, loop),
            name="hotkey GlobalShortcuts portal",
            daemon=True,
        )
        listener._thread.start()
        log.info("the stop is bound through the GlobalShortcuts portal (%s)", listener.trigger)
        return listener

    def _listen(self, callback: Callable[[], None], loop: asyncio.AbstractEventLoop) -> None:
        try:
            with self._bus.filter(self._rule) as queue:
                while not self._stopped.is_set():
                    try:
                        signal = self._bus.recv_until_filtered(queue, timeout=0.2)
                    except TimeoutError:
                        continue
                    handle, shortcut = signal.body[0], signal.body[1]
                    if handle == self._handle and shortcut == PORTAL_SHORTCUT_ID:
                        _deliver(loop, callback)
        except Exception as problem:  # noqa: BLE001 - the bus went away
            if not self._stopped.is_set():
                self._arming.lost(f"its GlobalShortcuts portal connection ended: {problem}")

    def stop(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        from jeepney import DBusAddress, new_method_call

        from desktop_agent.desktop.portal import PORTAL, SESSION

        try:
            with contextlib.suppress(Exception):
                self._bus.send_and_get_reply(
                    new_method_call(DBusAddress(self._handle, PORTAL, SESSION), "Close"),
                    timeout=2,
                )
        finally:
            self._bus.close()


class _X11Hotkey:
    """XGrabKey of the combination (and its NumLock/CapsLock variants) on its own connection."""

    def __init__(
        self, display: Any, grabs: list[tuple[int, int]], combo: Combo, arming: _Arming
    ) -> None:
        self._display = display
        self._grabs = grabs
        self._combo = combo
        self._arming = arming
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None
        self._stopped = False

    @property
    def armed(self) -> bool:
        return self._arming.armed and not self._stopped

    @classmethod
    def start(
        cls,
        combo: Combo,
        callback: Callable[[], None],
        loop: asyncio.AbstractEventLoop,
        arming: _Arming,
    ) -> _X11Hotkey:
        name = os.environ.get("DISPLAY")
        if not name:
            raise HotkeyUnavailable("no X display for the stop hotkey: DISPLAY is not set")
        from Xlib import display

        try:
            dpy = display.Display(name)
        except Exception as problem:  # noqa: BLE001 - Xlib raises several kinds
            raise HotkeyUnavailable(f"cannot open X display {name}: {problem}") from None
        try:
            keycode, wanted, grabs = _grab(dpy, combo)
        except BaseException:
            dpy.close()
            raise
        listener = cls(dpy, grabs, combo, arming)
        listener._thread = threading.Thread(
            target=listener._listen,
            args=(keycode, wanted, callback, loop),
            name=f"hotkey {combo}",
            daemon=True,
        )
        listener._thread.start()
        return listener

    def _listen(
        self,
        keycode: int,
        wanted: int,
        callback: Callable[[], None],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        from Xlib import X

        dpy = self._display
        locks = 0
        for extra in _lock_variants(dpy):
            locks |= extra
        try:
            while True:
                while dpy.pending_events():
                    event = dpy.next_event()
                    if (
                        event.type == X.KeyPress
                        and event.detail == keycode
                        and (event.state & ~locks & 0xFF) == wanted
                    ):
                        _deliver(loop, callback)
                ready, _, _ = select.select([dpy.fileno(), self._wake_r], [], [])
                if self._wake_r in ready:
                    return
        except Exception as problem:  # noqa: BLE001 - the X server went away
            self._arming.lost(f"its X11 listener ended: {problem}")
        finally:
            self._release()

    def _release(self) -> None:
        try:
            root = self._display.screen().root
            for code, mask in self._grabs:
                root.ungrab_key(code, mask)
            self._display.sync()
        except Exception as problem:  # noqa: BLE001 - the display may be gone already
            log.debug("releasing the hotkey grab: %s", problem)
        finally:
            try:
                self._display.close()
            except Exception as problem:  # noqa: BLE001 - closing a dead connection raises
                log.debug("closing the hotkey's X connection: %s", problem)
            os.close(self._wake_r)

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        with contextlib.suppress(OSError):  # the listener may have ended by itself
            os.write(self._wake_w, b"x")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        os.close(self._wake_w)


def _grab(dpy: Any, combo: Combo) -> tuple[int, int, list[tuple[int, int]]]:
    """Grab the combination with every lock variant: (keycode, modifier mask, grabs)."""
    from Xlib import X, error

    keysym = _keysym(combo.key)
    keycode = dpy.keysym_to_keycode(keysym) if keysym else 0
    if not keycode:
        raise HotkeyUnavailable(f"the key {combo.key!r} is not on this keyboard")
    wanted = _modifier_mask(dpy, combo.modifiers)
    root = dpy.screen().root
    catcher = error.CatchError(error.BadAccess)
    grabs = [(keycode, wanted | extra) for extra in _lock_variants(dpy)]
    for code, mask in grabs:
        root.grab_key(code, mask, False, X.GrabModeAsync, X.GrabModeAsync, onerror=catcher)
    dpy.sync()
    if catcher.get_error() is None:
        return keycode, wanted, grabs
    for code, mask in grabs:
        root.ungrab_key(code, mask)
    dpy.sync()
    raise HotkeyUnavailable(
        f"the stop hotkey {combo} is taken by another program (X11 BadAccess); "
        "choose another combination in the settings"
    )


def _keysym(key: str) -> int:
    from Xlib import XK

    if key in _X_KEYSYMS:
        return int(XK.string_to_keysym(_X_KEYSYMS[key]))
    if len(key) == 1:
        return ord(key)  # Latin-1 keysyms are their code points
    if key[0] == "f" and key[1:].isdigit():
        return int(XK.string_to_keysym(key.upper()))
    return int(XK.string_to_keysym(key))


def _modifier_mask(dpy: Any, modifiers: frozenset[str]) -> int:
    from Xlib import X

    mask = 0
    if "ctrl" in modifiers:
        mask |= X.ControlMask
    if "shift" in modifiers:
        mask |= X.ShiftMask
    if "alt" in modifiers:
        mask |= _mask_of(dpy, ("Alt_L", "Alt_R"), X.Mod1Mask)
    if "win" in modifiers:
        mask |= _mask_of(dpy, ("Super_L", "Super_R"), X.Mod4Mask)
    return mask


def _mask_of(dpy: Any, keysym_names: tuple[str, ...], default: int) -> int:
    """The modifier bit a key sits on in this server's modifier map (NumLock moves around)."""
    from Xlib import XK

    codes = {dpy.keysym_to_keycode(XK.string_to_keysym(name)) for name in keysym_names}
    codes.discard(0)
    for index, keycodes in enumerate(dpy.get_modifier_mapping()):
        if codes & set(keycodes):
            return 1 << index
    return default


def _lock_variants(dpy: Any) -> list[int]:
    from Xlib import X

    num_lock = _mask_of(dpy, ("Num_Lock",), X.Mod2Mask)
    return [0, X.LockMask, num_lock, X.LockMask | num_lock]


class _RegisteredHotkey:
    """Windows: RegisterHotKey on a thread of its own, which waits in GetMessageW for
    WM_HOTKEY (a hotkey registered with no window is posted to the registering thread) and
    WM_QUIT (stop)."""

    def __init__(self, arming: _Arming) -> None:
        self._arming = arming
        self._thread: threading.Thread | None = None
        self._thread_id = 0
        self._ready = threading.Event()
        self._problem = ""
        self._stopped = False

    @property
    def armed(self) -> bool:
        return self._arming.armed and not self._stopped

    @classmethod
    def start(
        cls,
        combo: Combo,
        callback: Callable[[], None],
        loop: asyncio.AbstractEventLoop,
        arming: _Arming,
    ) -> _RegisteredHotkey:
        from desktop_agent.desktop.win_messages import windll

        dlls = windll()
        modifiers = MOD_NOREPEAT
        for modifier in combo.modifiers:
            modifiers |= _WINDOWS_MODS[modifier]
        vk = _windows_vk(dlls.user32, combo.key)
        listener = cls(arming)
        listener._thread = threading.Thread(
            target=listener._listen,
            args=(dlls, combo, modifiers, vk, callback, loop),
            name=f"hotkey {combo}",
            daemon=True,
        )
        listener._thread.start()
        listener._ready.wait(5.0)
        if listener._problem or not listener._ready.is_set():
            listener._thread.join(timeout=2.0)
            raise HotkeyUnavailable(listener._problem or f"the stop hotkey {combo} did not start")
        return listener

    def _listen(
        self,
        dlls: Any,
        combo: Combo,
        modifiers: int,
        vk: int,
        callback: Callable[[], None],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        import ctypes

        from desktop_agent.desktop.win_messages import (
            ERROR_HOTKEY_ALREADY_REGISTERED,
            MSG,
            WM_HOTKEY,
            make_message_queue,
        )

        user32, kernel32 = dlls.user32, dlls.kernel32
        make_message_queue(user32)
        self._thread_id = int(kernel32.GetCurrentThreadId())
        if not user32.RegisterHotKey(None, HOTKEY_ID, modifiers, vk):
            error = dlls.last_error()
            if error == ERROR_HOTKEY_ALREADY_REGISTERED and modifiers & MOD_WIN:
                # "Keyboard shortcuts that involve the WINDOWS key are reserved for use by the
                # operating system" (RegisterHotKey, Remarks): the same error 1409, no program
                self._problem = (
                    f"the stop hotkey {combo} is reserved by Windows (its shortcuts with the "
                    "Windows key); choose a combination without win in the settings"
                )
            elif error == ERROR_HOTKEY_ALREADY_REGISTERED:
                self._problem = (
                    f"the stop hotkey {combo} is taken by another program; choose another "
                    "combination in the settings"
                )
            else:
                self._problem = f"cannot register the stop hotkey {combo} (Windows error {error})"
            self._ready.set()
            return
        self._ready.set()
        message = MSG()
        try:
            while True:
                got = int(user32.GetMessageW(ctypes.byref(message), None, 0, 0))
                if got == 0:  # WM_QUIT: stop()
                    return
                if got < 0:
                    self._arming.lost(
                        f"its message loop failed (Windows error {dlls.last_error()})"
                    )
                    return
                if message.message == WM_HOTKEY and message.wParam == HOTKEY_ID:
                    _deliver(loop, callback)
        finally:
            user32.UnregisterHotKey(None, HOTKEY_ID)

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        from desktop_agent.desktop.win_messages import WM_QUIT, windll

        windll().user32.PostThreadMessageW(self._thread_id, WM_QUIT, 0, 0)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)


def _windows_vk(user32: Any, key: str) -> int:
    """The virtual-key code of one of our key names; HotkeyUnavailable when there is none."""
    if key in _WINDOWS_VK:
        return _WINDOWS_VK[key]
    if len(key) == 1 and key.isalnum():
        return ord(key.upper())
    if len(key) == 1:
        scanned = int(user32.VkKeyScanW(ord(key))) & 0xFFFF
        if scanned != 0xFFFF:
            return scanned & 0xFF
    raise HotkeyUnavailable(f"the key {key!r} is not on this keyboard")
