"""Finding a window on a screenshot from its parts' boxes (Wayland hides its place; issue 34
item 2): drawn windows on a drawn desk, the observer placing a backend's relative boxes, and
the prompt saying so when the window is not found."""

from __future__ import annotations

import asyncio

import pytest
from PIL import Image, ImageDraw

from desktop_agent.core.models import Element, MonitorArea, MonitorChoice, ScreenMapping
from desktop_agent.desktop.capture import ScreenCapture, Shot
from desktop_agent.desktop.inventory import NoInventory, RawElement, RelativeTo, choose_backend
from desktop_agent.desktop.observer import DesktopObserver
from desktop_agent.desktop.window_place import find_window, place_relative
from desktop_agent.planner.screen_text import screen_text_block
from tests.unit.desktop.fakes import FakeBackend

#: a window as GTK 3 draws one on Wayland: its surface has a 26 px shadow margin; the parts'
#: boxes are in the surface's own px (as AT-SPI gives them there)
MARGIN = 26
TITLE, MENU, WIDTH, HEIGHT = 36, 26, 600, 400
PARTS = {
    "menu bar": (MARGIN, MARGIN + TITLE, WIDTH, MENU),
    "File": (MARGIN, MARGIN + TITLE, 40, MENU),
    "Edit": (MARGIN + 40, MARGIN + TITLE, 44, MENU),
    "text": (MARGIN, MARGIN + TITLE + MENU + 1, WIDTH, HEIGHT - TITLE - MENU - 1),
    "Close": (MARGIN + WIDTH - 34, MARGIN + 4, 28, 28),
}


def desk(size: tuple[int, int] = (1280, 720)) -> Image.Image:
    """A blue backdrop shading from top to bottom, as mutter's headless desk has."""
    image = Image.new("RGB", size)
    draw = ImageDraw.Draw(image)
    for y in range(size[1]):
        shade = 30 + 40 * y // size[1]
        draw.line([(0, y), (size[0], y)], fill=(10, shade, shade + 40))
    return image


def draw_window(
    image: Image.Image, origin: tuple[int, int], scale: float = 1.0, *, labels: bool = True
) -> None:
    """The window whose surface starts at `origin`: a grey title bar, a lighter menu bar with
    a line under it, a white text area (scaled by `scale`, as a downscaled screenshot); with
    `labels`, the File menu's word and the close button's disc."""
    draw = ImageDraw.Draw(image)

    def box(rect: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        x, y, w, h = rect
        return (
            round(origin[0] + x * scale),
            round(origin[1] + y * scale),
            round(origin[0] + (x + w) * scale) - 1,
            round(origin[1] + (y + h) * scale) - 1,
        )

    frame = (MARGIN, MARGIN, WIDTH, HEIGHT)
    draw.rectangle(box(frame), fill=(222, 221, 218))
    draw.rectangle(box(PARTS["menu bar"]), fill=(246, 245, 244))
    draw.rectangle(box(PARTS["text"]), fill=(255, 255, 255))
    if labels:
        draw.text(box(PARTS["File"])[:2], "File", fill=(40, 40, 40))
        draw.ellipse(box(PARTS["Close"]), fill=(120, 120, 120))


def outlines(scale: float = 1.0) -> list[tuple[int, int, int, int]]:
    return [tuple(round(value * scale) for value in rect) for rect in PARTS.values()]  # type: ignore[misc]


@pytest.mark.parametrize("origin", [(13, 71), (400, 200), (-40, 300), (650, -30)])
def test_a_window_is_found_where_it_is_drawn(origin: tuple[int, int]) -> None:
    image = desk()
    draw_window(image, origin)

    found = find_window(image, outlines())

    assert found is not None
    assert abs(found[0] - origin[0]) <= 1 and abs(found[1] - origin[1]) <= 1, found


def test_two_windows_alike_side_by_side_are_no_answer() -> None:
    """Where the same parts fit two places equally, no place is guessed."""
    image = desk()
    draw_window(image, (13, 71))
    draw_window(image, (660, 71))

    assert find_window(image, outlines()) is None


def test_a_window_not_on_the_screenshot_is_not_found() -> None:
    assert find_window(desk(), outlines()) is None


class ImageCapture(ScreenCapture):
    """A 'screen' that is a given image of a given monitor (its downscaled shot)."""

    def __init__(self, image: Image.Image, monitor: MonitorArea) -> None:
        super().__init__(width=image.size[0])
        self.image = image
        self.monitor = monitor

    def grab(
        self, near: tuple[int, int, int, int] | None = None, choice: MonitorChoice | None = None
    ) -> Shot:
        return Shot(self.image, self.monitor)

    def close(self) -> None:
        return None


def relative_elements(window: RelativeTo) -> list[RawElement]:
    return [
        RawElement("menu", "File", PARTS["File"], relative=window),
        RawElement("edit", "", PARTS["text"], focused=True, relative=window),
        RawElement("button", "Close", PARTS["Close"], relative=window),
    ]


def observe(image: Image.Image, monitor: MonitorArea, raw: list[RawElement]) -> object:
    observer = DesktopObserver(
        backend=FakeBackend(raw),
        capture=ImageCapture(image, monitor),
        guard_texts=False,
        locate=lambda: None,
    )
    try:
        return asyncio.run(observer.observe())
    finally:
        observer.close()


def test_the_observer_lists_relative_boxes_at_the_window_found_on_a_downscaled_shot() -> None:
    """A 1920x1080 monitor at (1920, 0) shown at 1280x720: boxes relative to the window
    become screenshot boxes where the window is drawn."""
    scale = 1280 / 1920
    physical = (600, 240)  # the surface's place on the monitor
    image = desk()
    draw_window(image, (round(physical[0] * scale), round(physical[1] * scale)), scale)
    window = RelativeTo("(note.txt)", tuple(PARTS.values()))

    observation = observe(image, MonitorArea(1, 1920, 0, 1920, 1080), relative_elements(window))

    boxes = {e.name: e.box for e in observation.elements}  # type: ignore[attr-defined]
    assert observation.window_relative == ()  # type: ignore[attr-defined]
    x, y, w, h = PARTS["File"]
    expected = (round((physical[0] + x) * scale), round((physical[1] + y) * scale))
    assert abs(boxes["File"][0] - expected[0]) <= 2 and abs(boxes["File"][1] - expected[1]) <= 2
    assert abs(boxes["File"][2] - round(w * scale)) <= 1


def test_boxes_of_a_window_not_found_are_listed_as_relative_and_never_as_targets() -> None:
    window = RelativeTo('Two "windows"', tuple(PARTS.values()))
    image = desk()
    draw_window(image, (13, 71))
    draw_window(image, (660, 71))

    observation = observe(image, MonitorArea(1, 0, 0, 1280, 720), relative_elements(window))

    assert observation.elements == ()  # type: ignore[attr-defined]
    relative = observation.window_relative  # type: ignore[attr-defined]
    assert [(e.id, e.name, e.box) for e in relative] == [
        (0, "File", PARTS["File"]),
        (0, "", PARTS["text"]),
        (0, "Close", PARTS["Close"]),
    ]
    block = screen_text_block(observation)  # type: ignore[arg-type]
    assert block is not None
    heading, fence = block.split("```text\n", 1)
    assert "relative to the window's own top-left corner, not image pixels" in heading
    assert "windows" not in heading  # the title is screen text: inside the fence only
    lines = fence.split("\n```", 1)[0].splitlines()
    x, y, w, h = PARTS["File"]
    assert lines[:2] == [
        "window \"Two 'windows'\"",
        f'menu "File" @ {x},{y} {w}x{h} in the window',
    ]


def test_place_relative_keeps_boxes_that_are_not_relative() -> None:
    plain = RawElement("button", "OK", (10, 10, 40, 20))

    placed, places = place_relative([plain], desk(), ScreenMapping())

    assert placed == [plain] and places == {}


def test_a_wayland_session_lists_elements_through_atspi_relative_to_the_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not XWayland's window list, even with DISPLAY set (GNOME sets it for XWayland)."""
    from desktop_agent.desktop.inventory import atspi
    from desktop_agent.desktop.inventory.atspi_wayland import WaylandAtspiInventory

    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.delenv("DESKTOP_AGENT_DESKTOP", raising=False)
    monkeypatch.setattr(atspi, "atspi_status", lambda: (True, "the AT-SPI bus answers"))
    assert isinstance(choose_backend(), WaylandAtspiInventory)

    monkeypatch.setattr(atspi, "atspi_status", lambda: (False, "no D-Bus session bus"))
    backend = choose_backend()
    assert isinstance(backend, NoInventory)
    assert backend.reason == "Wayland session, and AT-SPI is not reachable: no D-Bus session bus"


def test_element_lines_relative_to_a_window_carry_no_id() -> None:
    element = Element(0, "button", 'Say "hi"', (5, 6, 7, 8), focused=True)
    assert element.line_relative() == "button \"Say 'hi'\" @ 5,6 7x8 in the window focused"


def test_a_window_not_to_be_looked_for_is_listed_relative_even_where_it_would_be_found() -> None:
    """A popup (RelativeTo.findable False) is never searched for: its boxes stay relative."""
    image = desk()
    draw_window(image, (13, 71))
    window = RelativeTo("", tuple(PARTS.values()), findable=False)

    observation = observe(image, MonitorArea(1, 0, 0, 1280, 720), relative_elements(window))

    assert observation.elements == ()  # type: ignore[attr-defined]
    assert len(observation.window_relative) == 3  # type: ignore[attr-defined]


def test_a_place_where_the_named_controls_show_nothing_drawn_is_no_answer() -> None:
    """The outlines fit, but the File menu and the close button are flat there (no word, no
    disc): the lines met are not this window's, and nothing is placed."""
    window = RelativeTo("(note.txt)", tuple(PARTS.values()))
    drawn, bare = desk(), desk()
    draw_window(drawn, (300, 100))
    draw_window(bare, (300, 100), labels=False)

    placed = observe(drawn, MonitorArea(1, 0, 0, 1280, 720), relative_elements(window))
    flat = observe(bare, MonitorArea(1, 0, 0, 1280, 720), relative_elements(window))

    assert [e.name for e in placed.elements] == ["File", "", "Close"]  # type: ignore[attr-defined]
    assert flat.elements == () and len(flat.window_relative) == 3  # type: ignore[attr-defined]
