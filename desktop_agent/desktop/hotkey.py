"""The global stop hotkey: XGrabKey on the X11 root window, the `keyboard` package on Windows.

The callback runs on the asyncio loop (call_soon_threadsafe), never on the listener thread.
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
#: our key names → the `keyboard` package's names, where they differ (its _winkeyboard names
#: and _canonical_names.py aliases: it knows neither "printscreen" nor "scrolllock")
_KEYBOARD_NAMES = {
    "win": "windows",
    "pageup": "page up",
    "pagedown": "page down",
    "printscreen": "print screen",
    "scrolllock": "scroll lock",
}


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
    def stop(self) -> None:
        """Release the hotkey; safe to call twice."""
        ...


def _deliver(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    try:
        loop.call_soon_threadsafe(callback)
    except RuntimeError:  # the loop is closed: nobody to stop any more
        log.debug("hotkey pressed after its loop closed")


def start_global_hotkey(
    combo: str, callback: Callable[[], None], loop: asyncio.AbstractEventLoop
) -> HotkeyHandle:
    """Listen for `combo` system-wide; HotkeyUnavailable with the reason when that cannot be."""
    parsed = parse_combo(combo)
    if sys.platform == "win32":
        return _KeyboardHotkey.start(parsed, callback, loop)
    return _X11Hotkey.start(parsed, callback, loop)


def hotkey_backend() -> str:
    return "keyboard (Windows)" if sys.platform == "win32" else "XGrabKey on the X11 root window"


class _X11Hotkey:
    """XGrabKey of the combination (and its NumLock/CapsLock variants) on its own connection."""

    def __init__(self, display: Any, grabs: list[tuple[int, int]], combo: Combo) -> None:
        self._display = display
        self._grabs = grabs
        self._combo = combo
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None
        self._stopped = False

    @classmethod
    def start(
        cls, combo: Combo, callback: Callable[[], None], loop: asyncio.AbstractEventLoop
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
        listener = cls(dpy, grabs, combo)
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
            log.warning("stop hotkey listener ended: %s", problem)
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


class _KeyboardHotkey:
    """Windows: the `keyboard` package's hook (it cannot work under X11 without /dev/input)."""

    def __init__(self, module: Any, handle: Any) -> None:
        self._module = module
        self._handle = handle

    @classmethod
    def start(
        cls, combo: Combo, callback: Callable[[], None], loop: asyncio.AbstractEventLoop
    ) -> _KeyboardHotkey:
        try:
            import keyboard
        except ImportError as error:
            raise HotkeyUnavailable(
                f"the stop hotkey needs the keyboard package: {error} (pip install keyboard)"
            ) from None
        names = [_KEYBOARD_NAMES.get(part, part) for part in str(combo).split("+")]
        try:
            handle = keyboard.add_hotkey("+".join(names), lambda: _deliver(loop, callback))
        except (ValueError, OSError) as problem:
            raise HotkeyUnavailable(f"cannot register the stop hotkey {combo}: {problem}") from None
        return cls(keyboard, handle)

    def stop(self) -> None:
        if self._handle is None:
            return
        with contextlib.suppress(KeyError, ValueError):
            self._module.remove_hotkey(self._handle)
        self._handle = None
