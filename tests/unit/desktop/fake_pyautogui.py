"""A fake `pyautogui` 0.9.54 that does what the library does on Windows or on X11, silent
failures included (read in asweigart/pyautogui at 0.9.54):

- `keyboardMapping` is built as pyautogui builds it: every KEY_NAMES entry None
  (_pyautogui_win.py:112, _pyautogui_x11.py:191), then filled from a table. "menu" is not a
  KEY_NAMES entry at all (__init__.py:314-509; the key is "apps"). `isValidKey` answers
  `keyboardMapping.get(key) is not None` (__init__.py:1521-1539).
- `press`, `keyDown`, `keyUp`, `hotkey` (__init__.py:1542-1725) lower-case names longer than
  one character and call the platform's _keyDown/_keyUp, which **return silently** for a key
  not in the mapping or mapped to None (_pyautogui_win.py:264, _pyautogui_x11.py:135). On
  Windows a key is `keybd_event(vk, 0, flags, 0)`: no scan code, never
  KEYEVENTF_EXTENDEDKEY (_pyautogui_win.py:286-293, 326-333), recorded as
  ("keybd_event", vk, flags).
- `scroll(clicks, x, y)` (__init__.py:1175-1201) resolves x, y with position(x, y) and calls
  the platform's _scroll. Windows (_pyautogui_win.py:507-539): one
  `mouse_event(MOUSEEVENTF_WHEEL, x, y, dwData=clicks)` with no MOVE flag, so the wheel
  turns by `clicks` raw units (120 is one notch) wherever the pointer is; it is not moved:
  recorded as ("wheel", clicks, pointer). X11 (_pyautogui_x11.py:42-77): `abs(clicks)`
  clicks of button 4 (up) or 5 (down), each a mouseDown/mouseUp at (x, y), which moves the
  pointer there first: recorded as ("button", 4 or 5, (x, y)).
- `moveTo`, `click`, `mouseDown`, `mouseUp` move the pointer; `failSafeCheck` raises
  FailSafeException with the pointer on a FAILSAFE_POINTS corner (__init__.py:1729-1733), and
  every public call checks it first (the `_genericPyAutoGUIChecks` decorator,
  __init__.py:585-596): `mouseUp` in a corner raises before it lets the button go. Set
  `in_corner` to have every call raise it.
- `platformModule._mouseUp(x, y, button)` is the platform's release with no check: it moves
  the pointer to (x, y) and lets the button go (_pyautogui_x11.py:113-118,
  _pyautogui_win.py:404-432), recorded as ("_mouseUp", (x, y, button), {}); `_keyUp(key)`
  likewise lets a key go (_pyautogui_x11.py:154-176), recorded as ("_keyUp", (key,), {}).
Every public call is also recorded in `calls` as (name, args, kwargs).
"""

from __future__ import annotations

import types
from typing import Any

#: VK codes pyautogui's Windows table gives our named keys (_pyautogui_win.py:113-235)
WINDOWS_VK = {
    "backspace": 0x08, "tab": 0x09, "enter": 0x0D, "return": 0x0D, "shift": 0x10, "ctrl": 0x11,
    "alt": 0x12, "pause": 0x13, "capslock": 0x14, "esc": 0x1B, "escape": 0x1B, "space": 0x20,
    "pageup": 0x21, "pagedown": 0x22, "pgup": 0x21, "pgdn": 0x22, "end": 0x23, "home": 0x24,
    "left": 0x25, "up": 0x26, "right": 0x27, "down": 0x28, "printscreen": 0x2C, "insert": 0x2D,
    "delete": 0x2E, "del": 0x2E, "win": 0x5B, "winleft": 0x5B, "winright": 0x5C, "apps": 0x5D,
    "numlock": 0x90, "scrolllock": 0x91, "shiftleft": 0xA0, "shiftright": 0xA1,
    "ctrlleft": 0xA2, "ctrlright": 0xA3, "altleft": 0xA4, "altright": 0xA5,
    "volumemute": 0xAD, "volumedown": 0xAE, "volumeup": 0xAF, "nexttrack": 0xB0,
    "prevtrack": 0xB1, "playpause": 0xB3,
    **{f"f{n}": 0x6F + n for n in range(1, 25)},
}  # fmt: skip
#: KEY_NAMES of pyautogui 0.9.54 that our key names reach (no "menu")
KEY_NAMES = frozenset(WINDOWS_VK) | {chr(code) for code in range(0x20, 0x7F)} | {"\n", "\t"}
#: US layout VkKeyScanA answers for the shifted punctuation (high byte 1 = shift)
_US_SHIFTED = dict(zip('~!@#$%^&*()_+{}|:"<>?', "`1234567890-=[]\\;',./", strict=True))
_US_VK = {
    "`": 0xC0, "-": 0xBD, "=": 0xBB, "[": 0xDB, "]": 0xDD, "\\": 0xDC, ";": 0xBA, "'": 0xDE,
    ",": 0xBC, ".": 0xBE, "/": 0xBF, " ": 0x20, "\n": 0x0D, "\t": 0x09,
}  # fmt: skip


def vk_key_scan(char: str) -> int:
    """VkKeyScanA on a US layout: (shift state << 8) | virtual key."""
    if char.isalpha():
        return (0x100 if char.isupper() else 0) | ord(char.upper())
    if char.isdigit():
        return ord(char)
    if char in _US_SHIFTED:
        return 0x100 | _US_VK.get(_US_SHIFTED[char], ord(_US_SHIFTED[char]))
    return _US_VK[char]


class FailSafeException(Exception):  # noqa: N818 - pyautogui's name
    pass


KEYEVENTF_KEYUP = 0x0002
FAILSAFE_POINTS = [(0, 0), (0, 1079), (1919, 0), (1919, 1079)]


class FakePyAutoGui(types.ModuleType):
    """pyautogui on "win32" (the default) or "x11"."""

    def __init__(self, platform: str = "win32") -> None:
        super().__init__("pyautogui")
        self.FailSafeException = FailSafeException
        self.FAILSAFE = False
        self.FAILSAFE_POINTS = FAILSAFE_POINTS
        self.platform = platform
        mapping: dict[str, int | None] = dict.fromkeys(KEY_NAMES)
        for name in KEY_NAMES:
            if platform == "win32":
                mapping[name] = WINDOWS_VK[name] if name in WINDOWS_VK else vk_key_scan(name)
            else:
                mapping[name] = 8 + len(mapping) % 200  # a keycode of the server's map
        self.platformModule = types.SimpleNamespace(
            keyboardMapping=mapping, _mouseUp=self._platform_mouse_up, _keyUp=self._platform_key_up
        )
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.events: list[tuple[Any, ...]] = []
        self.pointer = (100, 100)
        self.in_corner = False

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.failSafeCheck()
        self.calls.append((name, args, kwargs))

    def _platform_mouse_up(self, x: int, y: int, button: str) -> None:
        self.calls.append(("_mouseUp", (x, y, button), {}))
        self.pointer = (x, y)

    def _platform_key_up(self, key: str) -> None:
        """_pyautogui_x11.py:154-176: the platform's release of a key, no fail-safe check."""
        self.calls.append(("_keyUp", (key,), {}))
        self._key(key, up=True)

    # -- checks --------------------------------------------------------------------------

    def failSafeCheck(self) -> None:  # noqa: N802 - pyautogui's name
        if self.in_corner or (self.FAILSAFE and self.pointer in self.FAILSAFE_POINTS):
            raise FailSafeException("PyAutoGUI fail-safe triggered")

    def isValidKey(self, key: str) -> bool:  # noqa: N802
        return self.platformModule.keyboardMapping.get(key) is not None

    def size(self) -> tuple[int, int]:
        return 1920, 1080

    def position(self, x: int | None = None, y: int | None = None) -> tuple[int, int]:
        return (self.pointer[0] if x is None else x, self.pointer[1] if y is None else y)

    # -- mouse ----------------------------------------------------------------------------

    def moveTo(self, x: int, y: int, **kwargs: Any) -> None:  # noqa: N802
        self._call("moveTo", (x, y), kwargs)
        self.pointer = (x, y)

    def click(self, x: int, y: int, **kwargs: Any) -> None:
        self._call("click", (x, y), kwargs)
        self.pointer = (x, y)

    def mouseDown(self, x: int, y: int, **kwargs: Any) -> None:  # noqa: N802
        self._call("mouseDown", (x, y), kwargs)
        self.pointer = (x, y)

    def mouseUp(self, x: int, y: int, **kwargs: Any) -> None:  # noqa: N802
        self._call("mouseUp", (x, y), kwargs)
        self.pointer = (x, y)

    def scroll(
        self, clicks: int, x: int | None = None, y: int | None = None, **kwargs: Any
    ) -> None:
        self._call("scroll", (clicks,), {"x": x, "y": y, **kwargs})
        x, y = self.position(x, y)
        if self.platform == "win32":
            self.events.append(("wheel", clicks, self.pointer))  # not moved: no MOVE flag
            return
        for _ in range(abs(int(clicks))):
            self.pointer = (x, y)
            self.events.append(("button", 4 if clicks > 0 else 5, (x, y)))

    # -- keyboard -------------------------------------------------------------------------

    def _key(self, key: str, up: bool) -> None:
        if len(key) > 1:
            key = key.lower()
        value = self.platformModule.keyboardMapping.get(key)
        if value is None:
            return  # _keyDown/_keyUp: `if key not in keyboardMapping or ...: return`
        if self.platform == "win32":
            mods, vk = divmod(value, 0x100)
            if mods & 1 and not up:
                self.events.append(("keybd_event", 0x10, 0))
            self.events.append(("keybd_event", vk, KEYEVENTF_KEYUP if up else 0))
            if mods & 1 and not up:
                self.events.append(("keybd_event", 0x10, KEYEVENTF_KEYUP))
        else:
            self.events.append(("key", key, "up" if up else "down"))

    def keyDown(self, key: str, **kwargs: Any) -> None:  # noqa: N802
        self._call("keyDown", (key,), kwargs)
        self._key(key, up=False)

    def keyUp(self, key: str, **kwargs: Any) -> None:  # noqa: N802
        self._call("keyUp", (key,), kwargs)
        self._key(key, up=True)

    def press(self, key: str, **kwargs: Any) -> None:
        self._call("press", (key,), kwargs)
        self.failSafeCheck()
        self._key(key, up=False)
        self._key(key, up=True)

    def hotkey(self, *keys: str, **kwargs: Any) -> None:
        self._call("hotkey", keys, kwargs)
        for key in keys:
            self._key(key, up=False)
        for key in reversed(keys):
            self._key(key, up=True)
