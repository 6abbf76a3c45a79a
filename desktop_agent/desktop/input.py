"""Mouse and keyboard through pyautogui (imported on first use, fail-safe on); on Windows the
keys and the wheel through SendInput (desktop/win_input.py says why).

A driver is used from one worker thread at a time. pyautogui's fail-safe (the pointer in a
screen corner) is the user's emergency stop: it surfaces as StopRequested, never as a failure.
A key pyautogui does not know is a ToolError before any key is pressed: pyautogui itself
presses nothing and says nothing.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any, Literal, Protocol, runtime_checkable

from desktop_agent.core.errors import StopRequested, ToolError
from desktop_agent.desktop import win_input, win_integrity
from desktop_agent.desktop.takeover import InjectionWindows

log = logging.getLogger(__name__)

Button = Literal["left", "right", "middle"]


class InputDriver(Protocol):
    """The atomic input events the tools are made of (screen coordinates)."""

    def move(self, x: int, y: int) -> None: ...

    def click(self, x: int, y: int, button: Button, clicks: int) -> None: ...

    def mouse_down(self, x: int, y: int, button: Button) -> None: ...

    def mouse_up(self, x: int, y: int, button: Button) -> None: ...

    def scroll(self, amount: int, x: int | None, y: int | None) -> None: ...

    def press(self, key: str) -> None: ...

    def hotkey(self, keys: list[str]) -> None: ...

    def key_down(self, key: str) -> None:
        """Press `key` and leave it down (hold_key); ToolError for a key there is none of."""
        ...

    def key_up(self, key: str) -> None:
        """Let `key` go, also past the fail-safe (a held key is never left down)."""
        ...

    def safe_point(self, x: int, y: int) -> tuple[int, int]:
        """(x, y) moved one pixel off a fail-safe corner, so a click there does not stop the run."""
        ...

    def ready(self) -> None:
        """Whatever the first input needs (a library loaded, a connection made), done now, on
        the input thread, before the stop flag is looked at a last time: a stop that lands
        while it is made is not followed by the input."""
        ...


@runtime_checkable
class TextTyping(Protocol):
    """A driver that can type any character as itself (Windows: KEYEVENTF_UNICODE)."""

    @property
    def types_any_text(self) -> bool:
        """Whether `type_char` types any character on this system (no clipboard needed)."""
        ...

    def type_char(self, char: str) -> None: ...


#: characters typed as key events: printable ASCII, newline and tab
TYPEABLE = frozenset(chr(code) for code in range(0x20, 0x7F)) | {"\n", "\t"}
KEY_FOR_CHAR = {"\n": "enter", "\t": "tab", " ": "space"}


def typeable(text: str) -> bool:
    return all(char in TYPEABLE for char in text)


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


class PyAutoGuiDriver:
    """InputDriver on pyautogui. Its X11 connection is made when pyautogui is first imported,
    for the DISPLAY of that moment. Every call that sends input runs inside an injection
    window of `injections`, which the takeover watch (desktop/takeover/) reads.

    `scroll(amount, x, y)` is `amount` notches of the wheel at (x, y) on every system (the
    pointer is moved there first); on Windows every event — keys, wheel, pointer, buttons —
    goes through SendInput marked with win_input.AGENT_INPUT_TAG, which the takeover watch
    reads back (`send_input`, `scan_code`, `virtual_desk` stand in for user32 in tests;
    `windows` defaults to the OS).
    On Windows every input but a button's release is refused (ToolError) when the window in
    front belongs to a more privileged program, or its level cannot be read
    (`foreground_check`, win_integrity: UIPI drops such input and nobody is told), and keys
    when it is the app's own.
    """

    def __init__(
        self,
        injections: InjectionWindows | None = None,
        *,
        windows: bool | None = None,
        send_input: win_input.SendInput | None = None,
        scan_code: Callable[[int], int] | None = None,
        foreground_check: Callable[[bool], None] | None = None,
        virtual_desk: Callable[[], win_input.Desk] | None = None,
    ) -> None:
        self._module: Any = None
        self.injections = injections or InjectionWindows()
        self._windows = sys.platform == "win32" if windows is None else windows
        self._send_input = send_input or win_input.user32_send_input
        self._scan_code = scan_code or win_input.user32_scan_code
        self._virtual_desk = virtual_desk or win_input.user32_virtual_desk
        if foreground_check is None and sys.platform == "win32":
            foreground_check = win_integrity.refuse_unreachable_foreground
        self._foreground_check = foreground_check

    def ready(self) -> None:
        self._gui()  # pyautogui's import and X connection: 0.1-0.3 s the first time

    def _gui(self) -> Any:
        if self._module is None:
            try:
                with warnings.catch_warnings():
                    # pyscreeze runs `which scrot` at import and drops the pipes unclosed
                    warnings.simplefilter("ignore", ResourceWarning)
                    import pyautogui
            except KeyError:
                raise ToolError("no X display: DISPLAY is not set") from None
            except Exception as error:  # noqa: BLE001 - Xlib/Xauth errors at import
                raise ToolError(f"pyautogui cannot start: {error}") from None
            pyautogui.FAILSAFE = True
            self._module = pyautogui
        return self._module

    @contextlib.contextmanager
    def _injecting(self, *, releasing: bool = False, keys: bool = False) -> Iterator[Any]:
        """An injection window around input sent through pyautogui (yielded) or SendInput;
        the fail-safe becomes a user stop. Input that is not a release (`releasing`: letting
        a button go is never held back) first passes the foreground check (`keys`: it is
        keyboard input)."""
        gui = self._gui()
        if self._foreground_check is not None and not releasing:
            self._foreground_check(keys)
        try:
            # pyautogui syncs its connection after each event: on leaving the window the
            # server has seen them all
            with self.injections.injecting():
                yield gui
        except gui.FailSafeException:
            raise StopRequested("the pointer was moved into a screen corner (fail-safe)") from None

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        with self._injecting() as gui:
            return getattr(gui, name)(*args, _pause=False, **kwargs)

    def _send(self, inputs: list[win_input.INPUT], *, releasing: bool = False) -> None:
        """Windows: one SendInput batch, after pyautogui's fail-safe check (not for a release:
        `releasing`)."""
        keys = any(event.type == win_input.INPUT_KEYBOARD for event in inputs)
        with self._injecting(keys=keys, releasing=releasing) as gui:
            if not releasing:
                gui.failSafeCheck()
            sent = self._send_input(inputs)
        if sent != len(inputs):
            self._let_go(inputs[:sent])
            raise ToolError(
                f"Windows took {sent} of {len(inputs)} input events (SendInput): a program "
                "running as administrator, or the secure desktop, has the input"
            )

    def _let_go(self, went_in: list[win_input.INPUT]) -> None:
        """After a batch Windows took in part (SendInput answers how many events it inserted),
        the keys that went down and not up are let go, the last down first: a hotkey cut
        after its ctrl must not leave ctrl held."""
        held: list[int] = []
        buttons: list[str] = []
        for event in went_in:
            if event.type != win_input.INPUT_KEYBOARD:
                for button, (down, up) in win_input.BUTTON_FLAGS.items():
                    if event.mi.dwFlags & down:
                        buttons.append(button)
                    elif event.mi.dwFlags & up and button in buttons:
                        buttons.remove(button)
            elif event.ki.dwFlags & win_input.KEYEVENTF_KEYUP:
                if event.ki.wVk in held:
                    held.remove(event.ki.wVk)
            else:
                held.append(event.ki.wVk)
        ups = [win_input.key_input(vk, self._scan_code(vk), up=True) for vk in reversed(held)]
        ups += [win_input.button_input(button, up=True) for button in reversed(buttons)]
        if ups:
            with self.injections.injecting():
                self._send_input(ups)

    def _key_code(self, key: str) -> int:
        """pyautogui's code for `key` (a Windows VkKeyScan value, an X keycode); ToolError
        when it has none: its press would silently do nothing."""
        name = key.lower() if len(key) > 1 else key
        code = self._gui().platformModule.keyboardMapping.get(name)
        # None: not in its table; 0: no keycode (X11); 0xFFFF: VkKeyScan found no key
        if code is None or code <= 0 or code & 0xFFFF == 0xFFFF:
            raise ToolError(f"there is no key {key!r} to press on this system")
        return int(code)

    def _keys(self, keys: list[str]) -> None:
        codes = [self._key_code(key) for key in keys]  # all known before any goes down
        if self._windows:
            strokes = [win_input.strokes(code, shifted=False) for code in codes]
            self._send(win_input.combination(strokes, self._scan_code))
        elif len(keys) == 1:
            self._call("press", keys[0])
        else:
            self._call("hotkey", *keys)

    def safe_point(self, x: int, y: int) -> tuple[int, int]:
        gui = self._gui()
        if (x, y) not in gui.FAILSAFE_POINTS:
            return x, y
        width, height = gui.size()
        return (x + 1 if x == 0 else x - 1 if x >= width - 1 else x), (
            y + 1 if y == 0 else y - 1 if y >= height - 1 else y
        )

    def _pointer(self, x: int, y: int) -> win_input.INPUT:
        return win_input.pointer_input(x, y, self._virtual_desk())

    def move(self, x: int, y: int) -> None:
        if self._windows:
            self._send([self._pointer(x, y)])
        else:
            self._call("moveTo", x, y)

    def click(self, x: int, y: int, button: Button, clicks: int) -> None:
        if self._windows:
            # one batch: nothing comes between the move and the presses, and a double click
            # is within the double-click time
            presses = [
                win_input.button_input(button, up=up) for _ in range(clicks) for up in (False, True)
            ]
            self._send([self._pointer(x, y), *presses])
            return
        # pyautogui sleeps the interval after each click, the last too, inside the injection
        # window: the takeover watch (X11) counted a click without it as the user's
        self._call("click", x, y, clicks=clicks, interval=0.05, button=button)

    def mouse_down(self, x: int, y: int, button: Button) -> None:
        if self._windows:
            self._send([self._pointer(x, y), win_input.button_input(button, up=False)])
        else:
            self._call("mouseDown", x, y, button=button)

    def mouse_up(self, x: int, y: int, button: Button) -> None:
        """Let the button go, also with the pointer in a fail-safe corner: pyautogui's mouseUp
        checks the fail-safe first and raises before releasing (pyautogui/__init__.py:593 and
        916-946, 0.9.54), so a drag the user stopped by throwing the pointer into a corner left
        the button held. In a corner it is let go where the pointer is (not moved back out)."""
        gui = self._gui()
        in_corner = gui.FAILSAFE and tuple(gui.position()) in gui.FAILSAFE_POINTS
        if self._windows:
            release = win_input.button_input(button, up=True)
            self._send([release] if in_corner else [self._pointer(x, y), release], releasing=True)
            return
        with self._injecting(releasing=True) as gui:
            if in_corner:
                x, y = gui.position()
            # the platform's own release, past the fail-safe (_pyautogui_x11.py:113-118)
            gui.platformModule._mouseUp(x, y, button)

    def scroll(self, amount: int, x: int | None, y: int | None) -> None:
        """`amount` notches (+ up) at (x, y), or where the pointer is."""
        if not self._windows:
            # X11: button 4/5 clicks, each a press at (x, y) that moves the pointer there
            self._call("scroll", amount, x=x, y=y)
            return
        # pyautogui's Windows scroll sends `amount` raw wheel units where the pointer is
        moved = [self._pointer(x, y)] if x is not None and y is not None else []
        self._send([*moved, win_input.wheel_input(amount)])

    def press(self, key: str) -> None:
        self._keys([key])

    @property
    def types_any_text(self) -> bool:
        """TextTyping: on Windows every character is typed as itself (KEYEVENTF_UNICODE)."""
        return self._windows

    def type_char(self, char: str) -> None:
        """TextTyping: `char` typed as itself, whatever the keyboard layout (Windows), else
        as its key."""
        if self._windows:
            self._send(win_input.char_inputs(char, self._scan_code))
        else:
            self.press(KEY_FOR_CHAR.get(char, char))

    def key_down(self, key: str) -> None:
        self._key_code(key)  # known, or nothing goes down
        self._call("keyDown", key)

    def key_up(self, key: str) -> None:
        """Let the key go past the fail-safe: pyautogui's keyUp checks it first and raises
        before releasing (pyautogui/__init__.py:1564, its _genericPyAutoGUIChecks at 585-593,
        0.9.54), as mouseUp does; the platform's own release (_pyautogui_x11.py:154,
        _pyautogui_win.py:295) does not."""
        with self._injecting() as gui:
            gui.platformModule._keyUp(key.lower() if len(key) > 1 else key)

    def hotkey(self, keys: list[str]) -> None:
        self._keys(keys)

    def position(self) -> tuple[int, int]:
        x, y = self._gui().position()
        return int(x), int(y)
