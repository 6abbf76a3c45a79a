"""Fakes of the desktop's OS edges: capture, input driver, clipboard paster, inventory backend."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PIL import Image

from desktop_agent.core.models import MonitorArea, MonitorChoice
from desktop_agent.desktop.capture import ScreenCapture, Shot
from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.input import Button
from desktop_agent.desktop.inventory import RawElement, WalkLimits
from desktop_agent.desktop.inventory.base import NoSuchWindow
from desktop_agent.desktop.launch import Launcher
from desktop_agent.desktop.observer import DesktopObserver


class FakeCapture(ScreenCapture):
    """A 'screen' that is a grey image of `size`, said to come from `monitor` whichever
    monitor a grab asks for; `choices` are the runs' own monitors the grabs were asked for."""

    def __init__(self, monitor: MonitorArea, size: tuple[int, int]) -> None:
        super().__init__(width=size[0])
        self.monitor = monitor
        self.size = size
        self.grabs = 0
        self.regions: list[tuple[int, int, int, int]] = []
        self.choices: list[MonitorChoice | None] = []

    def grab(
        self, near: tuple[int, int, int, int] | None = None, choice: MonitorChoice | None = None
    ) -> Shot:
        self.grabs += 1
        self.choices.append(choice)
        return Shot(Image.new("RGB", self.size, (128, 128, 128)), self.monitor)

    def grab_region(self, box: tuple[int, int, int, int]) -> Image.Image:
        """The region, as ScreenCapture.grab_region gives it: the box's size, full resolution."""
        self.regions.append(box)
        return inked(box[2:], (200, 40, 40))

    def close(self) -> None:
        return None


@dataclass
class FakeDriver:
    """Records input events; `on_press` runs after each key (e.g. to press the stop button)."""

    events: list[tuple[Any, ...]] = field(default_factory=list)
    on_press: Callable[[int], None] | None = None
    #: runs after each key_down (e.g. to press the stop button while keys are held)
    on_key_down: Callable[[str], None] | None = None
    corners: tuple[tuple[int, int], ...] = ((0, 0), (1919, 0), (0, 1079), (1919, 1079))
    raise_on: str | None = None

    def _record(self, *event: Any) -> None:
        if self.raise_on == event[0]:
            from desktop_agent.core.errors import StopRequested

            raise StopRequested("fail-safe")
        self.events.append(event)

    def move(self, x: int, y: int) -> None:
        self._record("move", x, y)

    def click(self, x: int, y: int, button: Button, clicks: int) -> None:
        self._record("click", x, y, button, clicks)

    def mouse_down(self, x: int, y: int, button: Button) -> None:
        self._record("down", x, y, button)

    def mouse_up(self, x: int, y: int, button: Button) -> None:
        self._record("up", x, y, button)

    def scroll(self, amount: int, x: int | None, y: int | None) -> None:
        self._record("scroll", amount, x, y)

    def press(self, key: str) -> None:
        self._record("press", key)
        if self.on_press is not None:
            self.on_press(len(self.presses))

    def hotkey(self, keys: list[str]) -> None:
        self._record("hotkey", *keys)

    def key_down(self, key: str) -> None:
        self._record("key_down", key)
        if self.on_key_down is not None:
            self.on_key_down(key)

    def key_up(self, key: str) -> None:
        # never refused: PyAutoGuiDriver.key_up lets go past the fail-safe
        self.events.append(("key_up", key))

    def ready(self) -> None:
        """Nothing to start (PyAutoGuiDriver imports pyautogui here)."""

    def safe_point(self, x: int, y: int) -> tuple[int, int]:
        if (x, y) in self.corners:
            return (x + 1 if x == 0 else x - 1), (y + 1 if y == 0 else y - 1)
        return x, y

    @property
    def presses(self) -> list[str]:
        return [event[1] for event in self.events if event[0] == "press"]


@dataclass
class FakePaster:
    pasted: list[str] = field(default_factory=list)

    def paste(self, text: str, press_paste: Callable[[], None]) -> None:
        self.pasted.append(text)
        press_paste()


@dataclass
class FakeBackend:
    """An inventory backend listing fixed elements; records the threads it was called on."""

    elements: list[RawElement] = field(default_factory=list)
    name: str = "atspi"
    block: threading.Event | None = None
    threads: set[int] = field(default_factory=set)
    actions: list[tuple[str, Any]] = field(default_factory=list)

    def thread_init(self) -> None:
        self.threads.add(threading.get_ident())

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        self.threads.add(threading.get_ident())
        if self.block is not None:
            self.block.wait(5)
        return list(self.elements), self.name

    def invoke(self, native: Any) -> str:
        self.actions.append(("invoke", native))
        return "fake action"

    def set_value(self, native: Any, value: str) -> str:
        self.actions.append(("set_value", (native, value)))
        return "fake set"

    def focus(self, native: Any) -> str:
        self.actions.append(("focus", native))
        return "focused it"

    def activate_window(self, title: str) -> str:
        self.actions.append(("activate", title))
        if title == "missing":
            # as x11.activate_by_title and uia.UiaInventory.activate_window do
            raise NoSuchWindow("no window titled 'missing'; open windows: none")
        return f'focused window "{title}"'

    def close(self) -> None:
        return None


# Never run: mypy reads it (tests/unit/test_fakes_typed.py), so a fake whose method drifts
# from the port it stands for fails there, not in whichever test first calls that method.
# (FakeCapture is a ScreenCapture: mypy checks its overrides.)
if TYPE_CHECKING:
    from desktop_agent.desktop.clipboard import Paster
    from desktop_agent.desktop.input import InputDriver
    from desktop_agent.desktop.inventory.base import InventoryBackend

    _driver: InputDriver = FakeDriver()
    _paster: Paster = FakePaster()
    _backend: InventoryBackend = FakeBackend()


def executor_with(
    driver: FakeDriver,
    *,
    observer: DesktopObserver | None = None,
    paster: FakePaster | None = None,
    launcher: Launcher | None = None,
    key_interval_s: float = 0.0,
) -> DesktopExecutor:
    return DesktopExecutor(
        observer=observer,
        driver=driver,
        paster=paster or FakePaster(),
        launcher=launcher,
        key_interval_s=key_interval_s,
        settle_s=0,
    )


def inked(size: tuple[int, int], background: tuple[int, int, int]) -> Image.Image:
    """An image of `size` on `background` with a few marks drawn in it, as letters are: a
    region with something for OCR to read (a blank one is not read, desktop/ocr.looks_blank)."""
    from PIL import ImageDraw

    image = Image.new("RGB", size, background)
    draw = ImageDraw.Draw(image)
    ink = tuple(255 - value for value in background)
    for left in range(2, max(size[0] - 6, 3), 9):
        draw.rectangle((left, 2, left + 4, min(size[1] - 2, 9)), fill=ink)
    return image
