"""On a real X server: the screenshot shows what is on screen, and input lands where it says."""

from __future__ import annotations

import asyncio
import io
from asyncio.subprocess import PIPE
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from desktop_agent.desktop import DesktopExecutor, DesktopObserver
from desktop_agent.desktop.doctor import run_doctor
from desktop_agent.desktop.geometry import point_to_screen
from tests.desktop.conftest import act
from tests.support.xdisplay import XSession, wait_until

ORANGE = (255, 136, 0)
#: where the test window sits on the 1920x1080 screen
LEFT, TOP, WIDTH, HEIGHT = 300, 210, 600, 330


class ColourWindow:
    """A plain X window at a known place, filled with one colour, recording button events."""

    def __init__(self, display_name: str) -> None:
        from Xlib import X, display

        self.display = display.Display(display_name)
        screen = self.display.screen()
        pixel = (ORANGE[0] << 16) | (ORANGE[1] << 8) | ORANGE[2]
        # override-redirect: the window manager neither moves nor decorates it
        self.window = screen.root.create_window(
            LEFT,
            TOP,
            WIDTH,
            HEIGHT,
            0,
            screen.root_depth,
            background_pixel=pixel,
            override_redirect=True,
            event_mask=X.ButtonPressMask | X.ButtonReleaseMask | X.ExposureMask,
        )
        self.window.map()
        self.display.sync()
        self.mapped = lambda: self.window.get_attributes().map_state == X.IsViewable
        wait_until(self.mapped, what="the test window to map")

    def button_events(self, count: int) -> list[tuple[str, int, int, int]]:
        """The next `count` button events as (kind, button, root x, root y)."""
        from Xlib import X

        found: list[tuple[str, int, int, int]] = []

        def collect() -> bool:
            while self.display.pending_events():
                event = self.display.next_event()
                if event.type in (X.ButtonPress, X.ButtonRelease):
                    kind = "press" if event.type == X.ButtonPress else "release"
                    found.append((kind, event.detail, event.root_x, event.root_y))
            return len(found) >= count

        wait_until(collect, timeout=5, what=f"{count} button events")
        return found

    def close(self) -> None:
        self.window.destroy()
        self.display.close()


@pytest.fixture
def colour_window(xsession: XSession) -> Iterator[ColourWindow]:
    window = ColourWindow(xsession.display)
    yield window
    window.close()


@pytest.fixture
async def observer() -> Any:
    observer = DesktopObserver(fmt="png", inventory=False)
    yield observer
    observer.close()


async def test_screenshot_shows_the_window_where_the_mapping_says(
    colour_window: ColourWindow, observer: DesktopObserver
) -> None:
    observation = await observer.observe()

    image = Image.open(io.BytesIO(observation.image)).convert("RGB")
    assert image.size == (1280, 720) == (observation.width, observation.height)
    left, top = observation.mapping.to_image(LEFT, TOP)
    right, bottom = observation.mapping.to_image(LEFT + WIDTH, TOP + HEIGHT)
    assert (left, top, right, bottom) == (200, 140, 600, 360)
    # inside the window (one pixel in from each edge): exactly its colour
    for x in (left + 1, (left + right) // 2, right - 2):
        for y in (top + 1, (top + bottom) // 2, bottom - 2):
            assert image.getpixel((x, y)) == ORANGE
    # just outside it: not
    for x, y in ((left - 2, top + 50), (right + 1, top + 50), (left + 50, top - 2)):
        assert image.getpixel((x, y)) != ORANGE
    assert observation.thumbnail and Image.open(io.BytesIO(observation.thumbnail)).width == 240


async def test_click_lands_where_the_mapping_says(
    colour_window: ColourWindow, observer: DesktopObserver
) -> None:
    observation = await observer.observe()
    executor = DesktopExecutor(observer=observer)
    try:
        result = await act(executor, "click", observation, x=333, y=257)
    finally:
        executor.close()

    expected = point_to_screen(333, 257, observation.mapping)
    assert expected == (500, 386)
    assert colour_window.button_events(2) == [
        ("press", 1, *expected),
        ("release", 1, *expected),
    ]
    assert result.summary == "clicked (333, 257)" and result.target == (333, 257)


async def test_drag_presses_at_the_start_and_releases_at_the_end(
    colour_window: ColourWindow, observer: DesktopObserver
) -> None:
    observation = await observer.observe()
    executor = DesktopExecutor(observer=observer)
    try:
        await act(executor, "drag", observation, x=250, y=200, to_x=500, to_y=300)
    finally:
        executor.close()

    assert colour_window.button_events(2) == [
        ("press", 1, *point_to_screen(250, 200, observation.mapping)),
        ("release", 1, *point_to_screen(500, 300, observation.mapping)),
    ]


async def test_move_mouse_puts_the_pointer_where_xdotool_finds_it(
    xsession: XSession, observer: DesktopObserver
) -> None:
    observation = await observer.observe()
    executor = DesktopExecutor(observer=observer)
    try:
        await act(executor, "move_mouse", observation, x=1001, y=17)
    finally:
        executor.close()

    process = await asyncio.create_subprocess_exec(
        "xdotool", "getmouselocation", "--shell", env=xsession.child_env(), stdout=PIPE
    )
    location = (await process.communicate())[0].decode()
    fields = dict(line.split("=", 1) for line in location.split())
    assert (int(fields["X"]), int(fields["Y"])) == point_to_screen(1001, 17, observation.mapping)


def test_doctor_passes_on_the_test_desktop(xsession: XSession) -> None:
    items = {item.name: item for item in run_doctor()}

    assert all(item.ok for item in items.values()), items
    assert items["display"].detail == f"X11 display {xsession.display}, 1920x1080"
    assert "→ 1280x720 JPEG in" in items["capture"].detail
    assert items["hotkey"].detail == "ctrl+alt+esc is free (XGrabKey on the X11 root window)"
    assert items["inventory"].detail.startswith("atspi: ")


async def test_a_zoom_region_is_captured_anew_at_the_screens_own_resolution(
    colour_window: ColourWindow, observer: DesktopObserver
) -> None:
    observation = await observer.observe()

    # 40x30 screenshot pixels around the window's top-left corner: 60x45 on the screen
    data = await observer.region(observation, (190, 130, 40, 30))

    region = Image.open(io.BytesIO(data)).convert("RGB")
    assert region.size == (60, 45)
    # the corner (300, 210) is at (15, 15) of the region (285, 195 on the screen)
    inside, outside = region.getpixel((25, 25)), region.getpixel((5, 5))
    assert isinstance(inside, tuple) and isinstance(outside, tuple)  # an RGB image's pixels
    assert all(abs(a - b) <= 12 for a, b in zip(inside, ORANGE, strict=True)), inside
    assert abs(outside[1] - ORANGE[1]) > 40 or abs(outside[2] - ORANGE[2]) > 40, outside


async def test_the_same_pixels_are_not_downscaled_or_encoded_again_other_pixels_are(
    xsession: XSession, observer: DesktopObserver, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop_agent.desktop import capture

    scaled: list[tuple[int, int]] = []
    scale_bgra = capture.scale_bgra

    def counted(bgra: bytes, source: tuple[int, int], size: tuple[int, int], *rest: Any) -> Any:
        scaled.append(size)
        return scale_bgra(bgra, source, size, *rest)

    monkeypatch.setattr(capture, "scale_bgra", counted)
    window = ColourWindow(xsession.display)
    try:
        first = await observer.observe()
        again = await observer.observe()  # nothing moved on the test desktop
        downscaled_for_both = len(scaled)
    finally:
        window.close()
    gone = await observer.observe()
    for _ in range(100):  # until the X server has taken the window away
        if centre_of(gone) != ORANGE:
            break
        await asyncio.sleep(0.05)
        gone = await observer.observe()

    assert downscaled_for_both == 1
    assert again.image is first.image and again.thumbnail is first.thumbnail
    assert centre_of(first) == ORANGE and centre_of(gone) != ORANGE
    assert len(scaled) >= 2  # other pixels: downscaled anew


def centre_of(observation: Any) -> Any:
    """The colour at the test window's centre in an observation's screenshot."""
    return Image.open(io.BytesIO(observation.image)).convert("RGB").getpixel((400, 250))
