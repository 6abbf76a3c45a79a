"""Mouse and keyboard through pyautogui (imported on first use, fail-safe on).

A driver is used from one worker thread at a time. pyautogui's fail-safe (the pointer in a
screen corner) is the user's emergency stop: it surfaces as StopRequested, never as a failure.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any, Literal, Protocol

from desktop_agent.core.errors import StopRequested, ToolError
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

    def safe_point(self, x: int, y: int) -> tuple[int, int]:
        """(x, y) moved one pixel off a fail-safe corner, so a click there does not stop the run."""
        ...


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
    window of `injections`, which the takeover watch (desktop/takeover.py) reads."""

    def __init__(self, injections: InjectionWindows | None = None) -> None:
        self._module: Any = None
        self.injections = injections or InjectionWindows()

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

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        gui = self._gui()
        try:
            # pyautogui syncs its connection after each event: on leaving the window the
            # server has seen them all
            with self.injections.injecting():
                return getattr(gui, name)(*args, _pause=False, **kwargs)
        except gui.FailSafeException:
            raise StopRequested("the pointer was moved into a screen corner (fail-safe)") from None

    def safe_point(self, x: int, y: int) -> tuple[int, int]:
        gui = self._gui()
        if (x, y) not in gui.FAILSAFE_POINTS:
            return x, y
        width, height = gui.size()
        return (x + 1 if x == 0 else x - 1 if x >= width - 1 else x), (
            y + 1 if y == 0 else y - 1 if y >= height - 1 else y
        )

    def move(self, x: int, y: int) -> None:
        self._call("moveTo", x, y)

    def click(self, x: int, y: int, button: Button, clicks: int) -> None:
        self._call("click", x, y, clicks=clicks, interval=0.05, button=button)

    def mouse_down(self, x: int, y: int, button: Button) -> None:
        self._call("mouseDown", x, y, button=button)

    def mouse_up(self, x: int, y: int, button: Button) -> None:
        self._call("mouseUp", x, y, button=button)

    def scroll(self, amount: int, x: int | None, y: int | None) -> None:
        self._call("scroll", amount, x=x, y=y)

    def press(self, key: str) -> None:
        self._call("press", key)

    def hotkey(self, keys: list[str]) -> None:
        self._call("hotkey", *keys)

    def position(self) -> tuple[int, int]:
        x, y = self._gui().position()
        return int(x), int(y)
