"""Monitor layouts and the exact mapping between screenshot pixels and physical screen pixels.

A monitor is the core's `MonitorArea` (core/models.py), the one type for it from mss's list to
the observation's layout and the step row: its number is its place in the ordered list."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from desktop_agent.core.errors import ObservationError
from desktop_agent.core.models import MonitorArea, ScreenLayout, ScreenMapping


def order_monitors(raw: Sequence[Mapping[str, Any]]) -> list[MonitorArea]:
    """mss's monitor list renumbered: [0] all monitors, [1] the primary, then the others, each
    numbered by its place (`MonitorArea.number`; only number 1 is `primary`).

    mss lists the union first and then the monitors in the platform's order, which does not
    always put the primary first; numbering the primary 1 makes `monitor=1` mean "primary".
    When no monitor says it is primary (mss's `is_primary`), the one at the origin (Windows'
    rule) is, else mss's first.
    """
    if len(raw) < 2:
        raise ObservationError("the screen reports no monitor")
    monitors = list(raw[1:])
    primary = next((m for m in monitors if m.get("is_primary")), None)
    if primary is None:
        primary = next((m for m in monitors if (m["left"], m["top"]) == (0, 0)), monitors[0])
    rest = [m for m in monitors if m is not primary]
    return [_area(number, m) for number, m in enumerate([raw[0], primary, *rest])]


def _area(number: int, raw: Mapping[str, Any]) -> MonitorArea:
    """Monitor `number` (0 all) of an ordered list from mss's dict."""
    return MonitorArea(
        number,
        int(raw["left"]),
        int(raw["top"]),
        int(raw["width"]),
        int(raw["height"]),
        primary=number == 1,
    )


def overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> int:
    """The area two rectangles (left, top, width, height) share."""
    width = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    height = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(0, width) * max(0, height)


def monitor_at(monitors: Sequence[MonitorArea], rect: tuple[int, int, int, int] | None) -> int:
    """The number (1 = primary) of the monitor holding most of `rect` (a window, or the
    pointer as a 1x1 rectangle) in an ordered list ([0] all); the primary when `rect` is None
    or on no monitor."""
    if rect is None:
        return 1
    return monitor_holding(monitors[1:], rect) or 1


def monitor_holding(areas: Sequence[MonitorArea], rect: tuple[int, int, int, int]) -> int:
    """The number of the monitor holding most of `rect`; 0 when none holds any of it."""
    best, most = 0, 0
    for area in areas:
        shared = overlap(rect, area.rect)
        if shared > most:
            best, most = area.number, shared
    return best


def layout_of(monitors: Sequence[MonitorArea], shown: int) -> ScreenLayout:
    """The layout of an ordered monitor list ([0] all) with monitor `shown` on the image."""
    return ScreenLayout(shown=monitors[shown], monitors=tuple(monitors[1:]))


def pick_monitor(monitors: Sequence[MonitorArea], index: int) -> MonitorArea:
    """Monitor `index` of an ordered list (0 = all), or ObservationError naming the choices."""
    if not 0 <= index < len(monitors):
        raise ObservationError(
            f"monitor {index} does not exist: this screen has {len(monitors) - 1} "
            f"(1 = primary, up to {len(monitors) - 1}; 0 = all as one image)"
        )
    return monitors[index]


def image_size(monitor: MonitorArea, width: int) -> tuple[int, int]:
    """The screenshot size for a target width: never upscaled, aspect kept, at least 1x1."""
    if width <= 0:
        raise ValueError(f"screenshot width must be positive, not {width}")
    if monitor.width <= width:
        return monitor.width, monitor.height
    height = max(1, round(monitor.height * width / monitor.width))
    return width, height


def mapping_for(
    monitor: MonitorArea, size: tuple[int, int], *, input_scale: float = 1.0
) -> ScreenMapping:
    """Screenshot px → input-coordinate px for a screenshot of `monitor` at `size`.

    Capture is in physical pixels. `input_scale` is physical px per input-API unit: 1.0 when
    the process is DPI aware (Windows per-monitor awareness, X11 always); 1.5 for a DPI-unaware
    process on a 150 % monitor, whose mouse coordinates Windows scales down.
    """
    if input_scale <= 0:
        raise ValueError(f"input scale must be positive, not {input_scale}")
    width, height = size
    return ScreenMapping(
        scale_x=monitor.width / width / input_scale,
        scale_y=monitor.height / height / input_scale,
        offset_x=round(monitor.left / input_scale),
        offset_y=round(monitor.top / input_scale),
    )


def rect_to_image(
    rect: tuple[int, int, int, int], mapping: ScreenMapping, size: tuple[int, int]
) -> tuple[int, int, int, int] | None:
    """A screen rectangle (left, top, width, height) in screenshot px, clipped to the image.

    None when nothing of it is on the screenshot.
    """
    left, top, width, height = rect
    if width <= 0 or height <= 0:
        return None
    x0 = (left - mapping.offset_x) / mapping.scale_x
    y0 = (top - mapping.offset_y) / mapping.scale_y
    x1 = (left + width - mapping.offset_x) / mapping.scale_x
    y1 = (top + height - mapping.offset_y) / mapping.scale_y
    image_w, image_h = size
    x0, y0 = max(0.0, x0), max(0.0, y0)
    x1, y1 = min(float(image_w), x1), min(float(image_h), y1)
    if x1 <= x0 or y1 <= y0:
        return None
    ix0, iy0 = math.floor(x0), math.floor(y0)
    return ix0, iy0, max(1, math.ceil(x1) - ix0), max(1, math.ceil(y1) - iy0)


def point_to_screen(
    x: float, y: float, mapping: ScreenMapping, size: tuple[int, int] | None = None
) -> tuple[int, int]:
    """A screenshot point in input coordinates; ValueError when it is outside the screenshot."""
    if size is not None:
        width, height = size
        if not (0 <= x < width and 0 <= y < height):
            raise ValueError(f"point ({x:g}, {y:g}) is outside the {width}x{height} screenshot")
    # aim at the centre of the screen pixels one screenshot pixel covers
    return mapping.to_screen(x + 0.5 - 0.5 / mapping.scale_x, y + 0.5 - 0.5 / mapping.scale_y)
