"""A Windows desktop of several monitors as mss 10.2.0 shows it to a per-monitor-v2 process,
and the pixels on it: `FakeWinMss` stands in for `mss.MSS()` on Windows.

Transcribed from mss's Windows backend and base class (.venv/…/mss, 10.2.0):

- `monitors` (windows/gdi.py:261-333): [0] the virtual screen from GetSystemMetrics
  SM_XVIRTUALSCREEN/SM_YVIRTUALSCREEN/SM_CXVIRTUALSCREEN/SM_CYVIRTUALSCREEN (76-79), then one
  dict per EnumDisplayMonitors rectangle in the order Windows enumerates them: left, top,
  width = right - left, height = bottom - top, is_primary from MONITORINFOF_PRIMARY. In a
  per-monitor-v2 process these rectangles are physical pixels; a monitor left of or above
  the primary has negative coordinates.
- the cache (base.py:347-350): `monitors` is read once into `_monitors` and kept while it is
  not None (the capture sets it to None to read the layout again).
- `grab` (base.py:288-320, windows/gdi.py:335-388): a (left, top, right, bottom) tuple is
  turned into a dict; a zero or negative size raises ScreenShotError; the pixels are
  BitBlt(memdc, 0, 0, width, height, srcdc, monitor["left"], monitor["top"]) from the
  screen's DC (GetWindowDC(0), gdi.py:207), whose coordinates are the virtual screen's, into
  a top-down 32-bit DIB: BGRA rows. A part of the box off every monitor comes back black.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: (left, top, width, height, primary): physical rectangles as EnumDisplayMonitors gives them
Rect = tuple[int, int, int, int, bool]


@dataclass
class FakeShot:
    """mss.screenshot.ScreenShot as the capture reads it: bgra, width, height."""

    bgra: bytes
    width: int
    height: int


class FakeWinMss:
    """mss on Windows over `desktop`: a PIL RGB image of the virtual screen, its top-left at
    the virtual screen's origin (the least left and top of the monitors)."""

    def __init__(self, rects: list[Rect], desktop: Any) -> None:
        self.rects = rects
        self.desktop = desktop
        self.origin = (min(r[0] for r in rects), min(r[1] for r in rects))
        self._monitors: list[dict[str, Any]] | None = None
        self.grabbed: list[dict[str, int]] = []

    def _impl_monitors(self) -> list[dict[str, Any]]:
        left, top = self.origin
        right = max(r[0] + r[2] for r in self.rects)
        bottom = max(r[1] + r[3] for r in self.rects)
        union = {"left": left, "top": top, "width": right - left, "height": bottom - top}
        return [union] + [
            {"left": x, "top": y, "width": w, "height": h, "is_primary": primary}
            for x, y, w, h, primary in self.rects
        ]

    @property
    def monitors(self) -> list[dict[str, Any]]:
        if self._monitors is None:
            self._monitors = self._impl_monitors()
        return self._monitors

    def grab(self, monitor: dict[str, int] | tuple[int, int, int, int]) -> FakeShot:
        if isinstance(monitor, tuple):
            monitor = {
                "left": monitor[0],
                "top": monitor[1],
                "width": monitor[2] - monitor[0],
                "height": monitor[3] - monitor[1],
            }
        width, height = monitor["width"], monitor["height"]
        if width <= 0 or height <= 0:
            raise ValueError(f"Region has zero or negative size: {monitor!r}")
        self.grabbed.append(dict(monitor))
        from PIL import Image

        # BitBlt from the screen DC at (left, top) of the virtual screen; off it: black
        x, y = monitor["left"] - self.origin[0], monitor["top"] - self.origin[1]
        region = Image.new("RGB", (width, height))
        region.paste(self.desktop.crop((x, y, x + width, y + height)), (0, 0))
        return FakeShot(region.tobytes("raw", "BGRX"), width, height)

    def close(self) -> None:
        pass
