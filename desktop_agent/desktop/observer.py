"""DesktopObserver: the ScreenObserver of a real desktop (capture + element inventory)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, Literal, TypeVar

from desktop_agent.core.errors import ConfigError, ObservationError
from desktop_agent.core.models import (
    Element,
    MonitorChoice,
    Observation,
    ScreenLayout,
    parse_monitor,
)
from desktop_agent.desktop.capture import (
    ScreenCapture,
    Shot,
    draw_marks,
    encode,
    signature,
    thumbnail,
)
from desktop_agent.desktop.geometry import (
    layout_of,
    mapping_for,
    rect_to_image,
)
from desktop_agent.desktop.inventory import (
    InventoryBackend,
    InventoryRunner,
    RawElement,
    RelativeTo,
    WalkLimits,
    own_window_elements,
    place_elements,
    to_elements,
    to_texts,
)
from desktop_agent.desktop.inventory.x11 import (
    X11Windows,
    listed_windows,
    notification_elements,
    window_elements,
)
from desktop_agent.desktop.ocr import OCR_PROGRAM, OcrFailed, PixelReader, ocr_used_here

log = logging.getLogger(__name__)

T = TypeVar("T")

#: how many recent observations keep their elements' native handles (for invoke & co.)
NATIVE_HISTORY = 4
#: regions read by tesseract per observation (notifications first, then windows topmost
#: first; a blank or remembered region is not one of them), and the time all of them may
#: take: an unchanged region costs a grab and a hash
MAX_PIXEL_REGIONS = 6
PIXELS_BUDGET_S = 5.0
#: the texts beside the element list (AT-SPI contents, other windows) are read within this,
#: after the list's own budget; past it plus the grace the read's thread is abandoned
TEXTS_BUDGET_S = 1.0
TEXTS_GRACE_S = 0.5


class DesktopObserver:
    """Captures the chosen monitor and lists its elements, off the event loop.

    The grab (+ downscale) runs on the capture thread, then the inventory walk on its own
    thread while the capture thread encodes; the walk has a hard budget. The elements' native
    handles (AT-SPI or UIA objects) of the last few observations stay here for
    DesktopExecutor's invoke / set_value / focus. Regions whose text only their pixels hold
    (`RawElement.pixels`) are read by OCR (`pixel_reader`, on its own thread) into the
    observation's texts, for the injection guard.
    `backend`, `capture` and `pixel_reader` replace the machine's own (tests, benchmarks);
    `guard_texts=False` (the injection guard off) reads no texts beside the list, nor pixels.
    """

    def __init__(
        self,
        *,
        width: int = 1280,
        fmt: Literal["jpeg", "png"] = "jpeg",
        quality: int = 80,
        monitor: MonitorChoice = "auto",
        inventory: bool = True,
        set_of_mark: bool = False,
        inventory_budget_s: float = 0.1,
        backend: InventoryBackend | None = None,
        capture: ScreenCapture | None = None,
        guard_texts: bool = True,
        pixel_reader: PixelReader | None = None,
        locate: Callable[[], tuple[int, int, int, int] | None] | None = None,
    ) -> None:
        if fmt not in ("jpeg", "png"):
            raise ConfigError(f"screenshot format must be 'jpeg' or 'png', not {fmt!r}")
        if not 1 <= quality <= 100:
            raise ConfigError(f"JPEG quality must be 1-100, not {quality}")
        if width < 16:
            raise ConfigError(f"screenshot width must be at least 16 px, not {width}")
        try:
            monitor = parse_monitor(monitor)
        except ValueError as error:
            raise ConfigError(str(error)) from None
        if inventory_budget_s <= 0:
            raise ConfigError(f"inventory budget must be positive, not {inventory_budget_s}")
        if sys.platform == "win32":
            from desktop_agent.desktop.win32 import enable_dpi_awareness

            enable_dpi_awareness()
        #: whether own_windows_now can see the app's own windows (False on Wayland: the
        #: gate then asks before pointer and key calls)
        self.sees_own_windows = True
        self.fmt = fmt
        self.quality = quality
        self.set_of_mark = set_of_mark
        self.inventory_budget_s = inventory_budget_s
        self._capture = capture or ScreenCapture(width=width, monitor=monitor)
        #: where the work is, for "auto" (runs on the capture thread, its own X connection:
        #: a walk that hangs the inventory thread does not delay the grab)
        self._locate = locate or WorkLocator()
        self._capture_thread = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="capture"
        )
        self.inventory: InventoryRunner | None = InventoryRunner(backend) if inventory else None
        self.pixel_reader = (pixel_reader or PixelReader()) if guard_texts else None
        #: the guard would read pixel-only regions here but has no OCR program: the first
        #: look says so in the log, once (every look reads without it alike)
        self._no_ocr_to_say = (
            self.pixel_reader is not None and not self.pixel_reader.available and ocr_used_here()
        )
        self._ocr_thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ocr")
        #: (the shot's image, its elements, the texts read on it, and NOT_SCANNED when
        #: they were more than the guard reads): an unchanged screen's
        self._texts: tuple[Any, tuple[Element, ...], tuple[Element, ...], str] | None = None
        #: (observation, its natives, how many inventory threads had been abandoned then)
        self._natives: deque[tuple[Observation, dict[int, Any], int]] = deque(maxlen=NATIVE_HISTORY)
        #: (the shot's image, where the windows of relative boxes were found on it: Wayland)
        self._places: tuple[Any, dict[RelativeTo, tuple[int, int] | None]] | None = None
        #: (the shot's image, the marks drawn, its encoding): the capture gives the same image
        #: back for the same pixels, which are then not encoded again
        self._encoded: tuple[Any, tuple[Any, ...], tuple[bytes, bytes, bytes]] | None = None

    async def observe(self, monitor: MonitorChoice | None = None) -> Observation:
        """The screen now; `monitor` (a run's own choice, `showing`) stands for the setting."""
        if self._no_ocr_to_say:
            self._no_ocr_to_say = False
            log.warning(
                "OCR program %r not found: text in notifications and images is not read by "
                "the injection guard (install tesseract-ocr; `desktop-agent doctor` checks it)",
                OCR_PROGRAM,
            )
        loop = asyncio.get_running_loop()
        # on the loop's thread, normally the main thread: see ScreenCapture.choose_scaler
        self._capture.choose_scaler()
        try:
            shot = await loop.run_in_executor(self._capture_thread, self._grab, monitor)
        except ObservationError:
            raise
        except Exception as error:  # noqa: BLE001 - anything from mss/Pillow/Qt: one line
            raise ObservationError(f"screen capture failed: {error}") from None
        # the walk starts after the grab, so its budget is not spent waiting for a CPU the
        # grab holds (two cores here); the total time measured the same either way
        raw: list[Any] = []
        backend = "none"
        encoding = None
        if self.inventory is not None:
            listing = asyncio.ensure_future(self.inventory.snapshot(self.inventory_budget_s))
            if not self.set_of_mark:
                # without marks the image does not wait for the elements
                encoding = loop.run_in_executor(self._capture_thread, self._encode, shot, ())
            try:
                raw, backend = await listing
            finally:
                if encoding is not None and not encoding.done():
                    encoding.add_done_callback(lambda future: future.exception())
        mapping = mapping_for(shot.monitor, shot.size)
        places: dict[RelativeTo, tuple[int, int] | None] = {}
        unplaced: list[RawElement] = []
        if any(item.relative is not None for item in raw):
            # Wayland: the boxes are the window's own; its place is found on the image (Pillow:
            # imported where it is used, a desktop module imports no image library)
            from desktop_agent.desktop.window_place import moved, place_relative

            last_places = self._places
            windows = {item.relative for item in raw if item.relative is not None}
            if (
                last_places is not None
                and last_places[0] is shot.image
                and windows <= set(last_places[1])
            ):
                # the very same pixels and windows: found where they were found
                places = last_places[1]
                placed = [moved(item, places) for item in raw]
            else:
                placed, places = await loop.run_in_executor(
                    self._capture_thread, place_relative, raw, shot.image, mapping
                )
            self._places = (shot.image, places)
            raw = [item for item in placed if item.relative is None]
            unplaced = [item for item in placed if item.relative is not None]
        elements, natives = to_elements(raw, mapping, shot.size)
        last = self._texts
        unread = ""
        if last is not None and last[0] is shot.image and last[1] == elements:
            # the very same pixels (the capture gives its image back when no pixel changed)
            # and the same list: the screen shows the same text, which is not read again
            texts, unread = last[2], last[3]
        else:
            read: list[RawElement] = []
            if self.pixel_reader is not None:  # the injection guard is on: it reads the screen
                # the OCR of the regions the walk found pixel-only goes on while the texts are
                # read: on a cold AT-SPI the two slow reads of the first look overlap
                ocr = asyncio.ensure_future(
                    self._read_pixels([item for item in raw if item.pixels], shot)
                )
                try:
                    # the list came too late: the windows' titles it holds are read here
                    more, unread = await self._read_texts(titles=backend == "none")
                except BaseException:
                    ocr.cancel()
                    raise
                if places:
                    more = _placed_texts(more, places)
                # a region the list gave too (a notification) is read once
                listed = {(item.role, item.rect) for item in raw if item.pixels}
                regions = [i for i in more if i.pixels and (i.role, i.rect) not in listed]
                (first, late), (then, later) = await ocr, await self._read_pixels(regions, shot)
                read = [*first, *then]
                unread = unread or late or later
                raw = [*raw, *more]
            texts, cut = to_texts([*raw, *read], mapping, shot.size)
            # what was not read is tried again on the next look, even of the same pixels;
            # more text than the guard reads stays so on the same pixels
            self._texts = None if unread else (shot.image, elements, texts, cut)
            unread = unread or cut
        elsewhere: tuple[Element, ...] = ()
        if shot.layout is not None and shot.layout.several:
            elements, elsewhere = place_elements(raw, elements, mapping, shot.size, shot.layout)
        if encoding is None:
            encoding = loop.run_in_executor(self._capture_thread, self._encode, shot, elements)
        try:
            image, thumb, grey = await encoding
        except Exception as error:  # noqa: BLE001 - encoder faults: one line
            raise ObservationError(f"screenshot encoding failed: {error}") from None
        observation = Observation(
            image=image,
            mime="image/jpeg" if self.fmt == "jpeg" else "image/png",
            width=shot.size[0],
            height=shot.size[1],
            elements=elements,
            mapping=mapping,
            thumbnail=thumb,
            inventory_backend=backend,
            signature=grey,
            marked=self.set_of_mark and bool(elements),
            own_windows=own_window_elements(raw, mapping, shot.size),
            texts=texts,
            layout=shot.layout,
            elsewhere=elsewhere,
            window_relative=_relative_elements(unplaced),
            relative_to=unplaced[0].relative.title if unplaced and unplaced[0].relative else "",
            unread=unread,
            window_ids=_ids_of(raw),
        )
        self._natives.append((observation, natives, self._abandoned()))
        return observation

    async def _read_texts(self, *, titles: bool = False) -> tuple[list[RawElement], str]:
        """The backend's texts beside the element list (`read_texts`, AT-SPI), within
        TEXTS_BUDGET_S, and why they were not read ("" when they were, or when the backend
        has no such read): none past the budget or on a failed read. With `titles` (the list
        did not come) the windows' titles too."""
        if self.inventory is None:
            return [], ""
        if not await self.inventory.idle(TEXTS_BUDGET_S):
            # a walk past its budget (a new AT-SPI connection's first) is still running: the
            # texts wait for it within their own budget, and are not queued behind a hung one
            log.warning("the screen's texts were not read: the inventory is still busy")
            return [], "the accessibility read was still busy"
        try:
            return await self.inventory.run(
                _texts, TEXTS_BUDGET_S, titles, timeout_s=TEXTS_BUDGET_S + TEXTS_GRACE_S
            )
        except Exception as error:  # noqa: BLE001 - a late or failed read: no texts this turn
            log.warning("the screen's texts were not read: %s", error)
            return [], "the accessibility read failed or came too late"

    async def _read_pixels(
        self, regions: list[RawElement], shot: Shot
    ) -> tuple[list[RawElement], str]:
        """The text OCR reads in `regions` (physical px, grabbed anew at the screen's own
        resolution, clipped to the monitor), as `contents` of the same role, and why some
        were not read ("" when all were): a region whose OCR failed or timed out, a region
        to read past the first MAX_PIXEL_REGIONS reads, and what is not read within
        PIXELS_BUDGET_S, is left out (logged). Without the OCR program
        nothing is read and nothing said: a configuration, not a failed read."""
        reader = self.pixel_reader
        if reader is None or not reader.available or not regions:
            return [], ""
        loop = asyncio.get_running_loop()
        monitor = shot.monitor
        found: list[RawElement] = []
        failed: list[str] = []
        shown: list[tuple[RawElement, tuple[int, int, int, int]]] = []
        for region in regions:
            x, y, width, height = region.rect
            left, top = max(x, monitor.left), max(y, monitor.top)
            right = min(x + width, monitor.right)
            bottom = min(y + height, monitor.bottom)
            if right - left >= 8 and bottom - top >= 8:
                shown.append((region, (left, top, right - left, bottom - top)))
        left_out = 0

        async def read_all() -> None:
            nonlocal left_out
            reads = 0
            for region, box in shown:
                image = await loop.run_in_executor(
                    self._capture_thread, self._capture.grab_region, box
                )
                text = await loop.run_in_executor(self._ocr_thread, reader.known, image)
                if text is None and reads >= MAX_PIXEL_REGIONS:
                    # past the bound on OCR's cost: what it says is not known, and a screen
                    # that shows one region more (its order last) would pass as read
                    left_out += 1
                    continue
                try:
                    if text is None:
                        reads += 1
                        text = await loop.run_in_executor(self._ocr_thread, reader.ocr, image)
                except OcrFailed as error:
                    # its text is not known, not empty: the other regions are still read
                    failed.append(f"the text of a region could not be read ({error})")
                    continue
                if text.strip():
                    found.append(RawElement(region.role, text, box, contents=True))

        try:
            await asyncio.wait_for(read_all(), PIXELS_BUDGET_S)
        except TimeoutError:
            log.warning("OCR of the screen's pixel-only regions took over %g s", PIXELS_BUDGET_S)
            return found, "the text of a window only its pixels show was not read in time"
        except Exception as error:  # noqa: BLE001 - a grab's fault: the regions are not read
            log.warning("pixel-only regions not read: %s", error)
            return found, "the text of a window only its pixels show could not be read"
        if left_out:
            log.warning("%d pixel-only regions past %d reads not read", left_out, MAX_PIXEL_REGIONS)
            failed.append(
                f"the text of a region was not read (more than {MAX_PIXEL_REGIONS} regions "
                "to read show only pixels)"
            )
        return found, failed[0] if failed else ""

    def _grab(self, monitor: MonitorChoice | None = None) -> Shot:
        """On the capture thread: under "auto", where the work is (the locator), then the grab
        of the monitor holding it."""
        near = None
        auto = self._capture.auto if monitor is None else monitor == "auto"
        if auto:
            try:
                near = self._locate()
            except Exception as error:  # noqa: BLE001 - an X or user32 fault: the primary
                log.debug("the active window could not be read: %s", error)
        # the setting's grab asks as before (a capture of tests or benchmarks takes `near` alone)
        return self._capture.grab(near) if monitor is None else self._capture.grab(near, monitor)

    def showing(self, monitor: MonitorChoice) -> MonitorShown:
        """MonitorChooser: this observer as a run that chose its own monitor sees the screen
        (API, MCP, `run --monitor`); the capture, its thread and the element reads are shared."""
        return MonitorShown(self, parse_monitor(monitor))

    async def monitors_now(self) -> ScreenLayout:
        """The monitors as they are now (the capture thread reads them: RandR, user32);
        ObservationError when they cannot be read."""
        loop = asyncio.get_running_loop()
        try:
            monitors = await loop.run_in_executor(self._capture_thread, self._capture.monitors)
        except ObservationError:
            raise
        except Exception as error:  # noqa: BLE001 - an mss or X fault: one line
            raise ObservationError(f"the monitors could not be read: {error}") from None
        return layout_of(monitors, 0)

    async def own_windows_now(self, observation: Observation) -> tuple[Element, ...] | None:
        """OwnWindowsSource: the app's own windows as they are now (the X11 window list of the
        inventory's backend, its own popups too; UI Automation's top-level windows), in
        `observation`'s pixels; None without a backend or when it cannot be read in time."""
        if sys.platform == "win32":
            raw = await self._windows_now()
        else:
            raw = await self._read_now(_window_list, "the app's own windows")
        if raw is None:
            return None
        size = (observation.width, observation.height)
        return own_window_elements(raw, observation.mapping, size)

    async def _windows_now(self) -> list[RawElement]:
        """Windows: every top-level window from user32 (win_windows: no UI Automation, no
        deadline to miss under load, untitled menus and popups included); ObservationError
        when they cannot be read, so the gate refuses."""
        from desktop_agent.desktop.win_windows import system_windll, top_level_windows

        try:
            return await asyncio.wait_for(
                asyncio.to_thread(top_level_windows, system_windll()), OWN_WINDOWS_TIMEOUT_S
            )
        except TimeoutError:
            raise ObservationError(f"no answer within {OWN_WINDOWS_TIMEOUT_S:g} s") from None
        except Exception as error:  # noqa: BLE001 - an OSError of user32, a ctypes fault
            raise ObservationError(str(error) or type(error).__name__) from None

    async def window_ids_now(self) -> frozenset[str] | None:
        """WindowsNowSource: the top-level and notification windows now, identified as the
        observation's `window_ids` (the X11 window list of the inventory's backend, read as
        the walk lists it); None on Windows, without an X11 list, or when it cannot be read
        in time."""
        if sys.platform == "win32":
            return None
        return await self._read_now(_window_ids, "the windows")

    async def pointer_now(self, observation: Observation) -> tuple[int, int] | None:
        """OwnWindowsSource: the pointer now (X11), in `observation`'s pixels; None off the
        screenshot, without an X11 window list, or when it cannot be read in time."""
        where = await self._read_now(_pointer, "the pointer")
        if where is None:
            return None
        size = (observation.width, observation.height)
        box = rect_to_image((where[0], where[1], 1, 1), observation.mapping, size)
        return (box[0], box[1]) if box is not None else None

    async def _read_now(self, read: Callable[[Any], T | None], what: str) -> T | None:
        """`read` run on the inventory's backend within OWN_WINDOWS_TIMEOUT_S; None without a
        backend, when it cannot be read in time, or when it says None."""
        if self.inventory is None:
            return None
        try:
            return await self.inventory.run(read, timeout_s=OWN_WINDOWS_TIMEOUT_S)
        except Exception as error:  # noqa: BLE001 - an X error, a late answer: not known
            log.debug("%s could not be read now: %s", what, error)
            return None

    async def region(self, observation: Observation, box: tuple[int, int, int, int]) -> bytes:
        """`box` (screenshot pixels of `observation`) captured anew at the screen's own
        resolution, as JPEG (a zoom's crop: the RegionSource port)."""
        left, top, width, height = box
        x0, y0 = observation.mapping.to_screen(left, top)
        x1, y1 = observation.mapping.to_screen(left + width, top + height)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._capture_thread, self._grab_region, (x0, y0, x1 - x0, y1 - y0)
        )

    def _grab_region(self, box: tuple[int, int, int, int]) -> bytes:
        return encode(self._capture.grab_region(box), "jpeg", 90)

    @classmethod
    def from_settings(cls, settings: Any, **options: Any) -> DesktopObserver:
        """An observer as the settings' capture part says (width, format, quality, monitor,
        set-of-mark; pixels read only for the injection guard); `options` are the
        constructor's others (inventory=False, ...)."""
        guard = getattr(settings, "injection_guard", "on") == "on"
        return cls(
            width=settings.capture_width,
            fmt=settings.capture_format,
            quality=settings.jpeg_quality,
            monitor=settings.monitor,
            **{"set_of_mark": settings.set_of_mark, "guard_texts": guard, **options},
        )

    def _encode(self, shot: Shot, elements: tuple[Element, ...] = ()) -> tuple[bytes, bytes, bytes]:
        """(encoded screenshot, thumbnail, signature), the signature of the unmarked screen."""
        marks = tuple((element.id, element.box) for element in elements) if self.set_of_mark else ()
        last = self._encoded
        if last is not None and last[0] is shot.image and last[1] == marks:
            return last[2]
        thumb = thumbnail(shot.image)
        grey = signature(shot.image)
        image = shot.image
        if marks:
            image = image.copy()
            draw_marks(image, list(marks))
        encoded = encode(image, self.fmt, self.quality), thumb, grey
        self._encoded = (shot.image, marks, encoded)
        return encoded

    def native(self, observation: Observation, element_id: int) -> Any | None:
        """The accessibility object behind an element of a recent observation, if any.

        The loop hands tools a copy of the observation (with its screenshot path), so it is
        matched by its image bytes object, else by equal elements. LookupError when the
        inventory thread that listed it has since been abandoned: it hung in a call, and what
        it listed may belong to the provider that hung it (and COM objects made in one
        apartment, D-Bus proxies on a closed connection, are not the new thread's to use).
        """
        # an unchanged screen shares its image bytes between observations: their element
        # lists (walked anew each time) must be the same too
        found = next(
            (
                (natives, abandoned)
                for seen, natives, abandoned in reversed(self._natives)
                if seen.image is observation.image and seen.elements == observation.elements
            ),
            None,
        ) or next(
            (
                (natives, abandoned)
                for seen, natives, abandoned in reversed(self._natives)
                if seen.elements and seen.elements == observation.elements
            ),
            None,
        )
        if found is None:
            return None
        natives, abandoned = found
        native = natives.get(element_id)
        if native is not None and abandoned != self._abandoned():
            raise LookupError(
                f"element {element_id} was listed by an accessibility thread that hung and "
                "was replaced; observe again"
            )
        return native

    def _abandoned(self) -> int:
        return self.inventory.abandoned if self.inventory is not None else 0

    def close(self) -> None:
        """Release the capture and inventory threads (the observer cannot be used after)."""
        self._capture_thread.submit(self._capture.close)
        if isinstance(self._locate, WorkLocator):
            self._capture_thread.submit(self._locate.close)
        self._capture_thread.shutdown(wait=False)
        self._ocr_thread.shutdown(wait=False, cancel_futures=True)
        if self.inventory is not None:
            self.inventory.close()


def _placed_texts(
    texts: list[RawElement], places: dict[RelativeTo, tuple[int, int] | None]
) -> list[RawElement]:
    """The texts read beside the list (Wayland: in their window's own px) moved to where
    their windows were found on the image. A text of a window not found there has no place
    to give, yet the model sees it on the screenshot: the screen's pixels are read instead
    (atspi_wayland.SCREEN, once), as for a window the list gave no control of."""
    from desktop_agent.desktop.inventory.atspi_wayland import SCREEN
    from desktop_agent.desktop.window_place import moved

    moved_texts = [moved(item, places) for item in texts]
    placed = [item for item in moved_texts if item.relative is None]
    if len(placed) < len(moved_texts) and not any(i.pixels and i.rect == SCREEN for i in placed):
        placed.append(RawElement("window text", "", SCREEN, pixels=True))
    return placed


def _relative_elements(unplaced: list[RawElement]) -> tuple[Element, ...]:
    if not unplaced:
        return ()
    from desktop_agent.desktop.window_place import relative_elements

    return relative_elements(unplaced)


#: the bound of one read of the window list at action time (a few X round trips)
OWN_WINDOWS_TIMEOUT_S = 0.4


def _texts(backend: Any, budget_s: float, titles: bool = False) -> tuple[list[RawElement], str]:
    """On the inventory thread: the backend's texts beside its element list, read within
    `budget_s` (a backend without `read_texts` has none), and why some were not read (the
    backend's `texts_unread`: a walk cut at the deadline, a failed read; "" when all were);
    with `titles`, the windows' titles first, as texts (the list that holds them came too
    late: a title may give orders, the eval's inj-filename)."""
    read = getattr(backend, "read_texts", None)
    found: list[RawElement] = []
    if titles and isinstance(windows := getattr(backend, "windows", None), X11Windows):
        try:
            listed = window_elements(listed_windows(windows))
        except LookupError as why:
            # no window list on this desktop (Wayland: atspi_wayland._NoWindowList): no
            # titles to read, as on every other look there; the texts are still read
            log.debug("no windows' titles read: %s", why)
        else:
            found += [replace(window, contents=True) for window in listed if window.name]
    if read is None:
        return found, ""
    found += read(WalkLimits(deadline=time.monotonic() + budget_s))
    return found, str(getattr(backend, "texts_unread", ""))


class MonitorShown:
    """A DesktopObserver showing one run's monitor choice: `observe` grabs that monitor, the
    rest (zoom's regions, the own-window, window-list and pointer reads, whether the desktop
    shows the app's own windows) is the observer's own. Every port the observer answers is
    answered here too: one left out is a check the gate skips for a run on its own monitor
    (tests/unit/desktop/test_monitor_shown.py)."""

    def __init__(self, observer: DesktopObserver, monitor: MonitorChoice) -> None:
        self.observer = observer
        self.monitor = monitor

    @property
    def sees_own_windows(self) -> bool:
        # False on Wayland: the gate asks before every pointer and key call (core/gate.py)
        return bool(getattr(self.observer, "sees_own_windows", True))

    async def observe(self) -> Observation:
        return await self.observer.observe(self.monitor)

    async def monitors_now(self) -> ScreenLayout:
        return await self.observer.monitors_now()

    async def window_ids_now(self) -> frozenset[str] | None:
        return await self.observer.window_ids_now()

    async def region(self, observation: Observation, box: tuple[int, int, int, int]) -> bytes:
        return await self.observer.region(observation, box)

    async def own_windows_now(self, observation: Observation) -> tuple[Element, ...] | None:
        return await self.observer.own_windows_now(observation)

    async def pointer_now(self, observation: Observation) -> tuple[int, int] | None:
        return await self.observer.pointer_now(observation)


def _window_list(backend: Any) -> list[RawElement] | None:
    """On the inventory thread: the backend's top-level windows, topmost first, as elements
    (the X11 window list; Windows reads them from user32 instead, `_windows_now`)."""
    windows = getattr(backend, "windows", None)
    if isinstance(windows, X11Windows):
        return window_elements(listed_windows(windows))
    return None


class WorkLocator:
    """Where the work is, for monitor "auto": the active window's frame unless it is the
    app's own (the work is elsewhere then), else the pointer as a 1x1 rectangle. X11: two
    or three round trips on a connection of its own; Windows: the foreground window from
    user32 (no pointer: the primary is shown then). Used from one thread (the capture's)."""

    def __init__(self) -> None:
        self._windows: X11Windows | None = None

    def __call__(self) -> tuple[int, int, int, int] | None:
        if sys.platform == "win32":
            from desktop_agent.desktop.win_windows import system_windll, top_level_windows

            active = [w for w in top_level_windows(system_windll()) if w.focused and not w.own]
            return active[0].rect if active else None
        if self._windows is None:
            self._windows = X11Windows()
        windows = self._windows
        try:
            active = windows.active_id()
            info = windows.info(active, active) if active is not None else None
            if info is not None and not info.own:
                return info.rect
            reply = windows._dpy().screen().root.query_pointer()
        except Exception:
            windows.close()  # a broken connection is opened anew next time
            raise
        return int(reply.root_x), int(reply.root_y), 1, 1

    def close(self) -> None:
        if self._windows is not None:
            self._windows.close()
            self._windows = None


def _window_ids(backend: Any) -> frozenset[str] | None:
    """On the inventory thread: the windows the backend's walk would list now (the same X11
    reads: the managed windows, then the notification windows), as `_ids_of` names them."""
    windows = getattr(backend, "windows", None)
    if not isinstance(windows, X11Windows):
        return None
    return _ids_of([*window_elements(listed_windows(windows)), *notification_elements(windows)])


def _ids_of(raw: Iterable[RawElement]) -> frozenset[str]:
    """The X11 windows among `raw` (top-level windows and notifications), each by its id,
    frame and title: a window that came up, and one that changed its title or grew (dunst
    draws every notification in one window, which grows by each new one)."""
    return frozenset(
        f"x11:{item.native[1]}:{item.rect}:{item.name}"
        for item in raw
        if item.role in ("window", "notification")
        and isinstance(item.native, tuple)
        and item.native[0] == "x11"
    )


def _pointer(backend: Any) -> tuple[int, int] | None:
    """On the inventory thread: the pointer's root position on the backend's X display."""
    windows = getattr(backend, "windows", None)
    if not isinstance(windows, X11Windows):
        return None
    reply = windows._dpy().screen().root.query_pointer()
    return int(reply.root_x), int(reply.root_y)
