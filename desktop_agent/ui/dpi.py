"""Physical screen pixels ↔ Qt's device-independent pixels, monitor by monitor (mixed DPI).

Capture and input work in physical pixels of the virtual desktop: the process is per-monitor
DPI aware v2 (desktop/win32.enable_dpi_awareness), so EnumDisplayMonitors' rectangles, which mss
reports as its monitors (mss/windows/gdi.py:282-331, 10.2.0), and MOUSEINPUT's absolute
coordinates (win_input.pointer_input) are physical. Qt's windows are placed in
device-independent pixels, and Qt scales *around each screen's native origin*: a screen's
`geometry()` keeps its physical top-left and divides only its size by the screen's factor;
a point is `origin + (native - origin) / factor` (qtbase src/gui/kernel/qhighdpiscaling_p.h,
`fromNative(pos, scaleFactor, origin)` / `toNative`, the origin being the platform screen's
native top-left: QHighDpiScaling::scaleAndOrigin). So multiplying a window's Qt position by
its screen's ratio is right only for a screen at (0, 0): on a 150 % monitor at x = 1920 it
was off by 960 px. Qt itself needs no help for its own layout; these are for crossing over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class QtScreen:
    """A QScreen as Qt reports it: `geometry()` (device-independent) and devicePixelRatio."""

    left: int
    top: int
    width: int
    height: int
    ratio: float = 1.0

    @property
    def native(self) -> tuple[int, int, int, int]:
        """Its rectangle in physical pixels (left, top, width, height)."""
        return (
            self.left,
            self.top,
            round(self.width * self.ratio),
            round(self.height * self.ratio),
        )

    def holds_native(self, x: int, y: int) -> bool:
        left, top, width, height = self.native
        return left <= x < left + width and top <= y < top + height


def shape_of(screen: Any) -> QtScreen:
    """A QScreen's geometry() and devicePixelRatio() as a QtScreen."""
    rect = screen.geometry()
    return QtScreen(rect.x(), rect.y(), rect.width(), rect.height(), screen.devicePixelRatio())


def to_physical(screen: QtScreen, x: float, y: float) -> tuple[int, int]:
    """A device-independent point on `screen` in physical pixels (Qt's toNative)."""
    return (
        screen.left + round((x - screen.left) * screen.ratio),
        screen.top + round((y - screen.top) * screen.ratio),
    )


def physical_rect(screen: QtScreen, rect: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """A window's device-independent (left, top, width, height) on `screen`, in physical px."""
    left, top = to_physical(screen, rect[0], rect[1])
    return left, top, round(rect[2] * screen.ratio), round(rect[3] * screen.ratio)


def to_logical(screens: Sequence[QtScreen], x: int, y: int) -> tuple[QtScreen, int, int] | None:
    """The screen holding the physical point (x, y) and the point in its device-independent
    pixels (Qt's fromNative): where a dialog goes to sit over it. None when no screen holds it
    (a monitor unplugged since): the caller says so rather than place it elsewhere."""
    for screen in screens:
        if screen.holds_native(x, y):
            return (
                screen,
                screen.left + int((x - screen.left) / screen.ratio),
                screen.top + int((y - screen.top) / screen.ratio),
            )
    return None
