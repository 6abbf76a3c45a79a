"""Screen capture: mss grab of one monitor, a fast downscale, JPEG/PNG encoding, thumbnails.

The resize dominates the cost (ENVIRONMENT.md), so the scaler is Qt's SIMD smooth scaling of
the raw BGRA buffer when PySide6 is importable (QImage needs no QApplication and works in a
worker thread, once Qt knows its main thread: see choose_scaler) and Pillow's BOX resize
otherwise; benchmarks/observe.py measures both.
A ScreenCapture is not thread-safe: one worker thread owns it (mss handles are per thread).
"""

from __future__ import annotations

import io
import logging
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from desktop_agent.core.errors import ObservationError
from desktop_agent.core.models import MonitorArea, MonitorChoice, ScreenLayout, parse_monitor
from desktop_agent.desktop.geometry import (
    image_size,
    layout_of,
    monitor_at,
    order_monitors,
    pick_monitor,
)

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

Scaler = Literal["auto", "qt", "pillow"]
THUMB_WIDTH = 240
#: cells across the screen signature (core/effect.py): 10x10 screenshot pixels at 1280 wide;
#: 64 across put a typed word in 2 cells, as many as a caret blink can touch
SIGNATURE_WIDTH = 128


@dataclass(frozen=True, slots=True)
class Shot:
    """A grabbed monitor, downscaled: a Pillow RGB image and where it came from."""

    image: Image.Image
    monitor: MonitorArea
    #: the monitors at the grab and the one shown (None: a shot made without a layout)
    layout: ScreenLayout | None = None

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size


def open_mss() -> Any:
    """An mss instance (mss >= 10.2 names it MSS; older versions only have the factory)."""
    try:
        import mss
    except ImportError as error:
        raise ObservationError(f"screen capture needs mss: {error}") from None
    if sys.platform.startswith("linux") and not _has_display():
        raise ObservationError("no X display: DISPLAY is not set (Wayland alone is not supported)")
    factory = getattr(mss, "MSS", None) or mss.mss
    try:
        return factory()
    except Exception as error:  # noqa: BLE001 - mss raises its own and ctypes errors
        raise ObservationError(f"cannot open the screen for capture: {error}") from None


def _region(left: int, top: int, width: int, height: int) -> dict[str, int]:
    """A region as mss grabs it."""
    return {"left": left, "top": top, "width": width, "height": height}


def _has_display() -> bool:
    import os

    return bool(os.environ.get("DISPLAY"))


class ScreenCapture:
    """Grabs the chosen monitor and turns it into the images the model and the timeline see."""

    def __init__(
        self,
        *,
        width: int = 1280,
        monitor: MonitorChoice = "auto",
        scaler: Scaler = "auto",
        screen: Callable[[], Any] | None = None,
    ) -> None:
        if width < 16:
            raise ValueError(f"screenshot width must be at least 16 px, not {width}")
        self.width = width
        #: "auto" (the monitor of the work, chosen at each grab), or a fixed index (0 = all)
        self.auto, self.monitor_index = _index_of(monitor)
        self.scaler: Scaler = scaler
        #: what opens the screen: mss, or on Wayland the portal's stream in mss's shape
        self._open_screen = screen or open_mss
        self._mss: Any = None
        #: the last grab's raw pixels and its shot: the same pixels again (a screen that did
        #: not change, as after a `wait`) give that shot back without a new downscale
        self._last: tuple[bytes, Shot] | None = None

    def monitors(self) -> list[MonitorArea]:
        """[0] all monitors, [1] the primary, then the others (physical pixels), as they are
        now: a monitor plugged, unplugged or moved since the last call is seen."""
        if self._mss is None:
            self._mss = self._open_screen()
        # mss keeps its first answer for good (mss/base.py:347-350, 10.2.0: `if
        # self._monitors is None: self._monitors = self._impl.monitors()`; 9.x: `if not
        # self._monitors`): forgetting it makes the next read ask the server (RandR) again
        self._mss._monitors = None
        return order_monitors(self._mss.monitors)

    def grab(
        self, near: tuple[int, int, int, int] | None = None, choice: MonitorChoice | None = None
    ) -> Shot:
        """Grab the monitor and downscale it to the configured width. Under "auto" the
        monitor is the one holding most of `near` (the active window, or the pointer), the
        primary without it; the layout is read anew each time (a hot-plug shows at once).
        `choice` (a run's own monitor) stands for the configured one in this grab."""
        monitors = self.monitors()
        auto, fixed = (self.auto, self.monitor_index) if choice is None else _index_of(choice)
        index = monitor_at(monitors, near) if auto else fixed
        monitor = pick_monitor(monitors, index)
        try:
            raw = self._mss.grab(_region(*monitor.rect))
        except Exception as error:  # noqa: BLE001 - mss raises ScreenShotError and ctypes errors
            raise ObservationError(f"screen capture failed: {error}") from None
        size = image_size(monitor, self.width)
        pixels = raw.bgra
        last = self._last
        # equal bytes are compared at memory speed (under 1 ms for 1920x1080), the downscale
        # they spare is the costliest part of a turn (13-30 ms)
        same_place = last is not None and (last[1].monitor, last[1].size) == (monitor, size)
        layout = layout_of(monitors, index)
        if last is not None and same_place and last[0] == pixels and last[1].layout == layout:
            return last[1]
        image = scale_bgra(pixels, (raw.width, raw.height), size, self._pick_scaler())
        shot = Shot(image, monitor, layout)
        self._last = (pixels, shot)
        return shot

    def grab_region(self, box: tuple[int, int, int, int]) -> Image.Image:
        """The screen inside `box` (left, top, width, height in physical pixels) at its own
        resolution: what a zoom looks at, with the detail the downscaled screenshot lost."""
        from PIL import Image

        left, top, width, height = box
        if width < 1 or height < 1:
            raise ObservationError(f"an empty region cannot be captured: {width}x{height}")
        self.monitors()  # opens mss
        try:
            raw = self._mss.grab(_region(left, top, width, height))
        except Exception as error:  # noqa: BLE001 - mss raises ScreenShotError and ctypes errors
            raise ObservationError(f"screen capture failed: {error}") from None
        return Image.frombytes("RGB", (raw.width, raw.height), raw.bgra, "raw", "BGRX")

    def choose_scaler(self) -> Scaler:
        """Settle "auto": Qt when it is safe to use from the capture thread, else Pillow.

        Qt takes the first thread that touches it (QImage.scaled starts a thread pool) for
        its main thread; were that the capture thread, a QApplication made later on the real
        main thread would have no event dispatcher. So Qt is first touched here, on the main
        thread, or used only when a QCoreApplication exists already.
        """
        if self.scaler == "auto":
            self.scaler = "qt" if _qt_is_safe_here() else "pillow"
            log.debug("screenshot scaler: %s", self.scaler)
        return self.scaler

    def _pick_scaler(self) -> Scaler:
        return self.choose_scaler()

    def close(self) -> None:
        if self._mss is not None:
            try:
                self._mss.close()
            finally:
                self._mss = None
                self._last = None


def _index_of(monitor: MonitorChoice) -> tuple[bool, int]:
    """(auto?, the fixed index: 0 for all) of a monitor setting; ValueError for a bad one."""
    choice = parse_monitor(monitor)
    return choice == "auto", 0 if choice in ("all", "auto") else int(choice)


def _qt_is_safe_here() -> bool:
    if threading.current_thread() is not threading.main_thread():
        core = sys.modules.get("PySide6.QtCore")
        return core is not None and core.QCoreApplication.instance() is not None
    try:
        from PySide6 import QtGui  # noqa: F401
        from PySide6.QtCore import QThread
    except ImportError:
        return False
    QThread.currentThread()  # Qt now knows the main thread is this one
    return True


def scale_bgra(
    bgra: bytes, source: tuple[int, int], size: tuple[int, int], scaler: Scaler = "pillow"
) -> Image.Image:
    """BGRA (BGRX) pixels of `source` size as an RGB image of `size`."""
    from PIL import Image

    if scaler == "qt" and size != source:
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QImage

        width, height = source
        qimage = QImage(bgra, width, height, width * 4, QImage.Format.Format_RGB32).scaled(
            size[0],
            size[1],
            Qt.AspectRatioMode.IgnoreAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
        # Format_RGB32 is 0xffRRGGBB, i.e. B, G, R, X bytes in memory on little-endian machines
        return Image.frombuffer(
            "RGB", size, bytes(qimage.constBits()), "raw", "BGRX", qimage.bytesPerLine(), 1
        )
    # frombuffer in RGBX is zero-copy; resizing before the channel swap swaps far fewer
    # pixels; BOX (area average) is Pillow's fastest filter that does not alias
    image = Image.frombuffer("RGBX", source, bgra, "raw", "RGBX", 0, 1)
    if size != source:
        image = image.resize(size, Image.Resampling.BOX)
    return Image.frombuffer("RGB", image.size, image.tobytes(), "raw", "BGRX", 0, 1)


def encode(image: Image.Image, fmt: Literal["jpeg", "png"], quality: int = 80) -> bytes:
    buffer = io.BytesIO()
    if fmt == "jpeg":
        image.save(buffer, "JPEG", quality=quality)
    else:
        # level 1: a third of the time of the default level 6 for 15 % more bytes
        image.save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


def thumbnail(image: Image.Image, width: int = THUMB_WIDTH) -> bytes:
    """A small JPEG of the screenshot for the timeline."""
    from PIL import Image

    if image.width > width:
        height = max(1, round(image.height * width / image.width))
        # an integer box average first (0.7 ms at 1280x720), then a small bilinear step to
        # the exact size: a bilinear resize all the way (reducing_gap 2) took 6 ms per turn
        factor = image.width // width
        if factor > 1:
            image = image.reduce(factor)
        image = image.resize((width, height), Image.Resampling.BILINEAR)
    return encode(image, "jpeg", 70)


def signature(image: Image.Image, width: int = SIGNATURE_WIDTH) -> bytes:
    """The screen signature of a screenshot: the mean grey level of each of `width` columns of
    square-ish cells, rows as the image's aspect, one byte per cell (about 0.6 ms at 1280x720).
    """
    from PIL import Image

    rows = max(1, round(image.height * width / image.width))
    factor = max(1, image.width // width)
    # reduce() is an integer box average, the cheapest way down; the resize after it only
    # fixes a size that is not a multiple of the grid (BOX again: every pixel counts once)
    small = image.reduce(factor) if factor > 1 else image
    if small.size != (width, rows):
        small = small.resize((width, rows), Image.Resampling.BOX)
    return small.convert("L").tobytes()


def draw_marks(image: Image.Image, marks: Sequence[tuple[int, tuple[int, int, int, int]]]) -> None:
    """Draw numbered boxes (set-of-mark) on `image` in place: (id, (left, top, width, height))."""
    from PIL import ImageDraw, ImageFont

    if not marks:
        return
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    for number, (left, top, width, height) in marks:
        right, bottom = left + width - 1, top + height - 1
        draw.rectangle((left, top, right, bottom), outline=MARK_COLOUR, width=2)
        label = str(number)
        text_box = draw.textbbox((0, 0), label, font=font)
        text_w, text_h = text_box[2] - text_box[0], text_box[3] - text_box[1]
        label_top = top - text_h - 4 if top >= text_h + 4 else top
        draw.rectangle(
            (left, label_top, left + text_w + 4, label_top + text_h + 4), fill=MARK_COLOUR
        )
        draw.text(
            (left + 2 - text_box[0], label_top + 2 - text_box[1]), label, fill="white", font=font
        )


MARK_COLOUR = (230, 20, 120)
