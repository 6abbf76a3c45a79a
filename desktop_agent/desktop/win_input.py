"""Windows keyboard and wheel input through SendInput (ctypes; user32 is looked up on use).

pyautogui 0.9.54 gets two things wrong on Windows that this module does instead:
- keys go through `keybd_event(vk, 0, 0, 0)` (_pyautogui_win.py:250-333) with no scan code
  and no KEYEVENTF_EXTENDEDKEY: with NumLock on, the arrows, home/end, page up/down,
  insert and delete arrive as their numpad twins, and shift+arrow loses its shift
  (pyautogui issues #590, #522). Here every key carries its scan code, extended keys the
  extended flag, and a combination goes in one SendInput call (nothing can come between).
- `scroll(clicks)` sends `mouse_event(MOUSEEVENTF_WHEEL, ..., dwData=clicks)`
  (_pyautogui_win.py:507-539): a raw wheel delta, where one notch is WHEEL_DELTA (120), and
  no MOVE flag, so x and y are ignored. Here a scroll is notches × 120, sent after the
  pointer was moved to the point.

- the pointer moves and buttons go through `mouse_event` and SetCursorPos with no mark of
  ours: the takeover watch could not tell them from another program's injected input. Here
  every event this app sends, the mouse's too, carries AGENT_INPUT_TAG in dwExtraInfo.

The structures use fixed-width fields (ctypes.wintypes' DWORD is 8 bytes off Windows), so
what is built can be checked on any OS; only the `user32_*` functions need Windows.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterable, Sequence

INPUT_MOUSE = 0
INPUT_KEYBOARD = 1
KEYEVENTF_EXTENDEDKEY = 0x0001
KEYEVENTF_KEYUP = 0x0002
KEYEVENTF_UNICODE = 0x0004
VK_TAB, VK_RETURN = 0x09, 0x0D
MOUSEEVENTF_MOVE = 0x0001
MOUSEEVENTF_WHEEL = 0x0800
MOUSEEVENTF_VIRTUALDESK = 0x4000
MOUSEEVENTF_ABSOLUTE = 0x8000
#: MOUSEEVENTF_*DOWN, *UP of each button (winuser.h)
BUTTON_FLAGS = {"left": (0x0002, 0x0004), "right": (0x0008, 0x0010), "middle": (0x0020, 0x0040)}
#: dwExtraInfo of every event this app sends ("DAGT"): the takeover watch's hooks read it back
#: (KBDLLHOOKSTRUCT / MSLLHOOKSTRUCT.dwExtraInfo) to tell ours from anybody else's input
AGENT_INPUT_TAG = 0x44414754
SM_XVIRTUALSCREEN, SM_YVIRTUALSCREEN, SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN = 76, 77, 78, 79
#: one notch of the wheel (WinUser.h)
WHEEL_DELTA = 120
MAPVK_VK_TO_VSC = 0

VK_SHIFT, VK_CONTROL, VK_MENU = 0x10, 0x11, 0x12
#: virtual keys whose scan code needs the E0 prefix: without KEYEVENTF_EXTENDEDKEY they are
#: read as the numpad key of the same scan code (or the left-hand modifier)
EXTENDED_KEYS = frozenset(
    {
        0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,  # page up/down, end, home, arrows
        0x2C, 0x2D, 0x2E,  # print screen, insert, delete
        0x5B, 0x5C, 0x5D,  # left/right windows, applications (menu)
        0x6F, 0x90,  # numpad divide, num lock
        0xA3, 0xA5,  # right ctrl, right alt
        *range(0xA6, 0xB8),  # browser, volume, media and launch keys
    }
)  # fmt: skip


class MOUSEINPUT(ctypes.Structure):
    _fields_ = (
        ("dx", ctypes.c_int32),
        ("dy", ctypes.c_int32),
        ("mouseData", ctypes.c_uint32),
        ("dwFlags", ctypes.c_uint32),
        ("time", ctypes.c_uint32),
        ("dwExtraInfo", ctypes.c_size_t),
    )


class KEYBDINPUT(ctypes.Structure):
    _fields_ = (
        ("wVk", ctypes.c_uint16),
        ("wScan", ctypes.c_uint16),
        ("dwFlags", ctypes.c_uint32),
        ("time", ctypes.c_uint32),
        ("dwExtraInfo", ctypes.c_size_t),
    )


class _INPUTUNION(ctypes.Union):
    _fields_ = (("mi", MOUSEINPUT), ("ki", KEYBDINPUT))


class INPUT(ctypes.Structure):
    _anonymous_ = ("u",)
    _fields_ = (("type", ctypes.c_uint32), ("u", _INPUTUNION))


SendInput = Callable[[Sequence[INPUT]], int]
#: the virtual desktop (left, top, width, height), in physical pixels
Desk = tuple[int, int, int, int]


def key_input(vk: int, scan: int, *, up: bool) -> INPUT:
    flags = (KEYEVENTF_EXTENDEDKEY if vk in EXTENDED_KEYS else 0) | (KEYEVENTF_KEYUP if up else 0)
    event = INPUT(type=INPUT_KEYBOARD)
    event.ki = KEYBDINPUT(wVk=vk, wScan=scan, dwFlags=flags, dwExtraInfo=AGENT_INPUT_TAG)
    return event


def char_inputs(char: str, scan: Callable[[int], int]) -> list[INPUT]:
    """`char` typed as itself, whatever the keyboard layout: each UTF-16 unit (a character
    outside the BMP is a surrogate pair: two units) a KEYEVENTF_UNICODE down and up with the
    unit in wScan and wVk 0, which Windows posts as VK_PACKET and turns into WM_CHAR of that
    unit (learn.microsoft.com, "KEYBDINPUT structure", KEYEVENTF_UNICODE). pyautogui's
    table instead was filled once at import from VkKeyScanA of that moment's layout
    (_pyautogui_win.py:236-249): after a switch to a Russian or German layout, or on
    US-International (dead keys), the text came out wrong. A newline and a tab stay the
    Enter and Tab keys (a control character is no text to a program)."""
    if char in ("\n", "\t"):
        vk = VK_RETURN if char == "\n" else VK_TAB
        return [key_input(vk, scan(vk), up=False), key_input(vk, scan(vk), up=True)]
    data = char.encode("utf-16-le")
    units = [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]
    events = []
    for unit in units:
        for up in (False, True):
            event = INPUT(type=INPUT_KEYBOARD)
            flags = KEYEVENTF_UNICODE | (KEYEVENTF_KEYUP if up else 0)
            event.ki = KEYBDINPUT(wVk=0, wScan=unit, dwFlags=flags, dwExtraInfo=AGENT_INPUT_TAG)
            events.append(event)
    return events


def _mouse(**fields: int) -> INPUT:
    event = INPUT(type=INPUT_MOUSE)
    event.mi = MOUSEINPUT(dwExtraInfo=AGENT_INPUT_TAG, **fields)
    return event


def wheel_input(notches: int) -> INPUT:
    """A wheel turn of `notches` (+ away from the user: up), as WHEEL_DELTA units."""
    # mouseData is a DWORD holding a signed delta
    return _mouse(mouseData=(notches * WHEEL_DELTA) & 0xFFFFFFFF, dwFlags=MOUSEEVENTF_WHEEL)


def normalized(value: int, origin: int, size: int) -> int:
    """A pixel as MOUSEINPUT's absolute coordinate. Windows maps a normalized `n` (0-65535
    over the virtual desktop with MOUSEEVENTF_VIRTUALDESK) to origin + n * size // 65536
    (learn.microsoft.com, "MOUSEINPUT structure", Remarks): the smallest n landing on
    `value` is the ceiling of (value - origin) * 65536 / size."""
    return -(-(value - origin) * 65536 // size)


def pointer_input(x: int, y: int, desk: Desk) -> INPUT:
    """The pointer moved to (x, y) (screen pixels of the virtual desktop `desk`)."""
    left, top, width, height = desk
    return _mouse(
        dx=normalized(x, left, width),
        dy=normalized(y, top, height),
        dwFlags=MOUSEEVENTF_MOVE | MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK,
    )


def button_input(button: str, *, up: bool) -> INPUT:
    """`button` pressed or let go where the pointer is."""
    return _mouse(dwFlags=BUTTON_FLAGS[button][1 if up else 0])


def strokes(mapping: int, shifted: bool) -> tuple[list[int], int]:
    """(modifier virtual keys, virtual key) of a pyautogui keyboardMapping value: VkKeyScan's
    high byte holds shift (1), ctrl (2), alt (4), as pyautogui's _keyDown reads it."""
    mods, vk = divmod(mapping, 0x100)
    modifiers = [
        key
        for bit, key in ((1, VK_SHIFT), (2, VK_CONTROL), (4, VK_MENU))
        if mods & bit or (key == VK_SHIFT and shifted)
    ]
    return modifiers, vk


def combination(keys: Iterable[tuple[list[int], int]], scan: Callable[[int], int]) -> list[INPUT]:
    """Every key down in order (each after the modifiers its character needs), then every
    one up in reverse: one SendInput batch."""
    order = [key for modifiers, vk in keys for key in (*modifiers, vk)]
    downs = [key_input(key, scan(key), up=False) for key in order]
    ups = [key_input(key, scan(key), up=True) for key in reversed(order)]
    return downs + ups


def user32_send_input(inputs: Sequence[INPUT]) -> int:
    """SendInput on Windows; how many events went in (0: UIPI or a desktop switch refused)."""
    windll: object = getattr(ctypes, "windll")  # noqa: B009 - Windows only
    user32 = windll.user32  # type: ignore[attr-defined]
    array = (INPUT * len(inputs))(*inputs)
    return int(user32.SendInput(len(inputs), array, ctypes.sizeof(INPUT)))


def user32_virtual_desk() -> Desk:
    """The virtual desktop's bounds: GetSystemMetrics(SM_[XY]VIRTUALSCREEN, SM_C[XY]...)."""
    windll: object = getattr(ctypes, "windll")  # noqa: B009 - Windows only
    metrics = windll.user32.GetSystemMetrics  # type: ignore[attr-defined]
    left, top, width, height = (int(metrics(index)) for index in range(76, 80))
    return left, top, width, height


def user32_scan_code(vk: int) -> int:
    windll: object = getattr(ctypes, "windll")  # noqa: B009 - Windows only
    return int(windll.user32.MapVirtualKeyW(vk, MAPVK_VK_TO_VSC))  # type: ignore[attr-defined]
