"""What every inventory backend returns, the walk limits, and the conversion to core Elements."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from desktop_agent.core.injection import MAX_SCAN_CHARS, NOT_SCANNED
from desktop_agent.core.models import Element, ScreenLayout, ScreenMapping
from desktop_agent.desktop.geometry import monitor_holding, rect_to_image

NAME_LIMIT = 80
#: a text (AT-SPI Text) of at most this many characters is read whole; of a longer one (a
#: long document, a terminal's scrollback) only the part on the screen is read
TEXT_LIMIT = 2_000
#: the texts of one look, all together, as many characters as the injection detector scans
#: per observation (core/injection.py): a look whose texts pass it is not read whole, and
#: says so (`to_texts`)
TEXTS_LIMIT = MAX_SCAN_CHARS
#: this app's window class / application name (app.py): its windows are its own controls
APP_NAME = "desktop-agent"


@dataclass(frozen=True, slots=True)
class RelativeTo:
    """The window that a backend's boxes are relative to, where the desktop does not say
    where windows are (Wayland): its title and the outlines of its parts (boxes in the
    window's own px), from which the observer finds its place on the screenshot
    (desktop/window_place.py)."""

    title: str
    outlines: tuple[tuple[int, int, int, int], ...]
    #: whether its place is looked for at all: a popup (a menu) is small, its items' sides
    #: are mostly not drawn, and the search placed one on another window's lines (measured):
    #: its controls are listed relative to it instead
    findable: bool = True


@dataclass(frozen=True, slots=True)
class RawElement:
    """An element as a backend sees it: rectangle in physical screen px, plus its native handle."""

    role: str
    name: str
    rect: tuple[int, int, int, int]
    enabled: bool = True
    focused: bool = False
    password: bool = False
    #: one of this app's own windows: left out of the elements, given to the core apart
    #: (`own_window_elements`) so input aimed at it is refused
    own: bool = False
    #: text read off the screen, not a control: `name` holds the text (a document's
    #: contents, a label, an inactive window's control), given to the core apart (`to_texts`)
    contents: bool = False
    #: a region whose text only its pixels hold (a web view with no accessible text, a
    #: notification drawn by its daemon): the observer reads it by OCR (desktop/ocr.py)
    pixels: bool = False
    native: Any = field(default=None, compare=False, repr=False)
    #: `rect` is relative to this window, not the screen (Wayland): placed by the observer
    relative: RelativeTo | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class WalkLimits:
    """Bounds of one inventory walk: depth, element count, and a deadline on `clock`."""

    max_depth: int = 30
    max_elements: int = 150
    max_nodes: int = 2000
    deadline: float = float("inf")
    clock: Callable[[], float] = time.monotonic

    def expired(self) -> bool:
        return self.clock() >= self.deadline


class NoSuchWindow(LookupError):
    """No window has the title asked for (`activate_window`): the caller's mistake, not the
    backend's; the message lists the windows there are."""


class InventoryBackend(Protocol):
    """Lists the elements of the screen. Every method runs on the backend's own thread."""

    name: str

    def thread_init(self) -> None:
        """Called once on the backend's thread before anything else (COM on Windows)."""

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        """The elements (active window first where possible) and the backend that listed them."""
        ...

    def invoke(self, native: Any) -> str:
        """Press the element through the accessibility API; a one-line summary."""
        ...

    def set_value(self, native: Any, value: str) -> str: ...

    def focus(self, native: Any) -> str: ...

    def activate_window(self, title: str) -> str:
        """Bring the window whose title contains `title` to the front; LookupError if none."""
        ...

    def close(self) -> None: ...


class NoInventory:
    """The backend when none is available: no elements, and actions say why."""

    name = "none"

    def __init__(self, reason: str = "no accessibility backend is available") -> None:
        self.reason = reason

    def thread_init(self) -> None:
        return None

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        return [], "none"

    def invoke(self, native: Any) -> str:
        raise LookupError(self.reason)

    def set_value(self, native: Any, value: str) -> str:
        raise LookupError(self.reason)

    def focus(self, native: Any) -> str:
        raise LookupError(self.reason)

    def activate_window(self, title: str) -> str:
        raise LookupError(self.reason)

    def close(self) -> None:
        return None


def clean_name(name: str | None, limit: int = NAME_LIMIT) -> str:
    """One line, no control characters, at most `limit` characters."""
    text = " ".join((name or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def to_elements(
    raw: Iterable[RawElement], mapping: ScreenMapping, size: tuple[int, int]
) -> tuple[tuple[Element, ...], dict[int, Any]]:
    """Core Elements with ids 1.. in order, boxes in screenshot px; and id → native handle.

    Elements entirely off the screenshot are dropped; duplicates (same role, name and box)
    keep the first; this app's own windows are never listed (see `own_window_elements`).
    """
    elements: list[Element] = []
    natives: dict[int, Any] = {}
    seen: set[tuple[str, str, tuple[int, int, int, int]]] = set()
    for item in raw:
        if item.own or item.contents or item.pixels:
            continue
        box = rect_to_image(item.rect, mapping, size)
        if box is None:
            continue
        name = clean_name(item.name)
        key = (item.role, name, box)
        if key in seen:
            continue
        seen.add(key)
        element = Element(
            id=len(elements) + 1,
            role=item.role,
            name=name,
            box=box,
            enabled=item.enabled,
            focused=item.focused,
            password=item.password,
        )
        elements.append(element)
        if item.native is not None:
            natives[element.id] = item.native
    return tuple(elements), natives


def clean_text(text: str) -> str:
    """A read text: its lines kept (the detector reads a sentence's start by them), each
    one's blanks collapsed and empty lines dropped."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def to_texts(
    raw: Iterable[RawElement], mapping: ScreenMapping, size: tuple[int, int]
) -> tuple[tuple[Element, ...], str]:
    """The texts read off the screen (`RawElement.contents`) as core Elements with id 0,
    boxes in screenshot px, and why they are not all of them ("" when they are). Texts off
    the screenshot, empty or repeated (same role and text) are dropped: none of them shows
    anything more. Past TEXTS_LIMIT characters in all, the rest is left out and the look
    says so (NOT_SCANNED): what the guard does not read, it cannot judge."""
    found: list[Element] = []
    seen: set[tuple[str, str]] = set()
    left = TEXTS_LIMIT
    for item in raw:
        if not item.contents or item.own:
            continue
        box = rect_to_image(item.rect, mapping, size)
        if box is None:
            continue
        text = clean_text(item.name)
        if not text or (item.role, text) in seen:
            continue
        if len(text) > left:
            # what fits is still judged (an order there asks for its own reason)
            if left > 0:
                found.append(Element(0, item.role, text[:left], box))
            return tuple(found), NOT_SCANNED
        seen.add((item.role, text))
        found.append(Element(0, item.role, text, box))
        left -= len(text)
    return tuple(found), ""


#: at most this many elements of the monitors the image does not show are listed
MAX_ELSEWHERE = 60


def place_elements(
    raw: Iterable[RawElement],
    elements: tuple[Element, ...],
    mapping: ScreenMapping,
    size: tuple[int, int],
    layout: ScreenLayout,
) -> tuple[tuple[Element, ...], tuple[Element, ...]]:
    """On a desktop of several monitors: the listed elements tagged with their monitor, and
    the elements wholly on monitors the image does not show (ids after the listed ones, no
    box: no pixel of the image holds them), each tagged with its monitor.

    With one monitor shown every listed element is on it (a control straddling the edge is
    reached through the image's part of it); with all shown, the monitor holding its centre.
    """
    shown = layout.shown.number
    areas = layout.monitors
    tagged = tuple(
        replace(element, monitor=shown or monitor_holding(areas, _centre(element, mapping)))
        for element in elements
    )
    elsewhere: list[Element] = []
    seen: set[tuple[str, str, tuple[int, int, int, int]]] = set()
    for item in raw:
        if len(elsewhere) >= MAX_ELSEWHERE:
            break
        if item.own or item.contents or item.pixels:
            continue  # never listed (own windows) or text apart, not a control
        if rect_to_image(item.rect, mapping, size) is not None:
            continue
        number = monitor_holding(areas, item.rect)
        key = (item.role, clean_name(item.name), item.rect)
        if not number or number == shown or key in seen:
            continue
        seen.add(key)
        elsewhere.append(
            Element(
                id=len(tagged) + len(elsewhere) + 1,
                role=item.role,
                name=key[1],
                box=(0, 0, 0, 0),
                enabled=item.enabled,
                focused=item.focused,
                password=item.password,
                monitor=number,
            )
        )
    return tagged, tuple(elsewhere)


def _centre(element: Element, mapping: ScreenMapping) -> tuple[int, int, int, int]:
    x, y = mapping.to_screen(*element.center)
    return x, y, 1, 1


def own_window_elements(
    raw: Iterable[RawElement], mapping: ScreenMapping, size: tuple[int, int]
) -> tuple[Element, ...]:
    """The parts of this app's own windows that no other window covers, in screenshot px.

    `raw` lists windows topmost first (every backend does): a piece of an own window under
    another app's window is that window's, and a click there is not refused.
    """
    above: list[tuple[int, int, int, int]] = []
    found: list[Element] = []
    for item in raw:
        if item.role != "window":
            continue
        if not item.own:
            above.append(item.rect)
            continue
        pieces = [item.rect]
        for cover in above:
            pieces = [part for piece in pieces for part in without(piece, cover)]
        for piece in pieces:
            box = rect_to_image(piece, mapping, size)
            if box is not None:
                name = clean_name(item.name)
                found.append(Element(0, "window", name, box, focused=item.focused))
    return tuple(found)


def without(
    rect: tuple[int, int, int, int], cover: tuple[int, int, int, int]
) -> list[tuple[int, int, int, int]]:
    """`rect` minus `cover`: up to four rectangles (left, top, width, height)."""
    x, y, w, h = rect
    cx, cy, cw, ch = cover
    left, top, right, bottom = max(x, cx), max(y, cy), min(x + w, cx + cw), min(y + h, cy + ch)
    if left >= right or top >= bottom:
        return [rect]
    parts = [
        (x, y, w, top - y),  # above the cover
        (x, bottom, w, y + h - bottom),  # below it
        (x, top, left - x, bottom - top),  # left of it
        (right, top, x + w - right, bottom - top),  # right of it
    ]
    return [part for part in parts if part[2] > 0 and part[3] > 0]


def inventory_text(elements: Sequence[Element]) -> str:
    """The text form of DESIGN §3, one element a line."""
    return "\n".join(element.line() for element in elements)
