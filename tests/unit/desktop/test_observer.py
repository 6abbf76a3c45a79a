"""DesktopObserver without a screen: encoding, thumbnails, set-of-mark, errors, native lookup."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from desktop_agent.core.errors import ConfigError, ObservationError
from desktop_agent.core.models import MonitorArea, MonitorChoice
from desktop_agent.desktop.capture import MARK_COLOUR, ScreenCapture, Shot, scale_bgra
from desktop_agent.desktop.inventory import RawElement
from desktop_agent.desktop.observer import DesktopObserver
from tests.unit.desktop.fakes import FakeBackend, FakeCapture

PRIMARY = MonitorArea(1, 0, 0, 1920, 1080, primary=True)


def observer(**kwargs: object) -> DesktopObserver:
    kwargs.setdefault("capture", FakeCapture(PRIMARY, (1280, 720)))
    return DesktopObserver(**kwargs)  # type: ignore[arg-type]


async def test_jpeg_observation_with_thumbnail_and_mapping() -> None:
    obs = observer(inventory=False)
    try:
        observation = await obs.observe()
    finally:
        obs.close()

    assert observation.mime == "image/jpeg"
    assert (observation.width, observation.height) == (1280, 720)
    assert Image.open(io.BytesIO(observation.image)).format == "JPEG"
    assert observation.thumbnail is not None
    thumb = Image.open(io.BytesIO(observation.thumbnail))
    assert (thumb.format, thumb.size) == ("JPEG", (240, 135))
    assert observation.mapping.to_screen(1280, 720) == (1920, 1080)


async def test_png_is_lossless() -> None:
    obs = observer(inventory=False, fmt="png")
    try:
        observation = await obs.observe()
    finally:
        obs.close()

    image = Image.open(io.BytesIO(observation.image))
    assert observation.mime == "image/png"
    assert image.getpixel((10, 10)) == (128, 128, 128)


async def test_a_run_on_its_own_monitor_grabs_that_monitor_through_the_fake_capture() -> None:
    # FakeCapture.grab took `near` alone, not ScreenCapture.grab's `choice`: a run with its
    # own monitor (MonitorShown) could not be looked at through it (TypeError in the grab)
    capture = FakeCapture(PRIMARY, (1280, 720))
    obs = observer(capture=capture, inventory=False)
    try:
        shown = await obs.showing("2").observe()
        await obs.observe()
    finally:
        obs.close()

    assert (shown.width, shown.height) == (1280, 720)
    assert capture.choices == [2, None]


async def test_set_of_mark_draws_numbered_boxes_on_the_image_sent() -> None:
    backend = FakeBackend([RawElement("button", "OK", (300, 300, 300, 150))])
    obs = observer(fmt="png", set_of_mark=True, backend=backend)
    try:
        observation = await obs.observe()
    finally:
        obs.close()

    image = Image.open(io.BytesIO(observation.image)).convert("RGB")
    assert observation.marked  # the prompt says so (planner/prompt.py)
    assert observation.elements[0].box == (200, 200, 200, 100)
    assert image.getpixel((300, 299)) == MARK_COLOUR  # bottom edge of the box
    assert image.getpixel((399, 250)) == MARK_COLOUR  # right edge
    assert image.getpixel((300, 250)) == (128, 128, 128)  # inside stays as captured
    # the label sits above the box's top-left corner
    assert MARK_COLOUR in [image.getpixel((202, y)) for y in range(185, 200)]


async def test_without_set_of_mark_the_image_is_untouched() -> None:
    backend = FakeBackend([RawElement("button", "OK", (300, 300, 300, 150))])
    obs = observer(fmt="png", backend=backend)
    try:
        observation = await obs.observe()
    finally:
        obs.close()

    image = Image.open(io.BytesIO(observation.image)).convert("RGB")
    assert image.getpixel((300, 299)) == (128, 128, 128)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fmt": "gif"}, "screenshot format must be 'jpeg' or 'png', not 'gif'"),
        ({"quality": 0}, "JPEG quality must be 1-100, not 0"),
        ({"width": 8}, "screenshot width must be at least 16 px, not 8"),
        (
            {"monitor": -1},
            "monitor must be auto, all or a monitor number from 1 \\(the primary\\) to 16, not -1",
        ),
        ({"inventory_budget_s": 0}, "inventory budget must be positive, not 0"),
    ],
)
def test_bad_settings_are_refused_naming_the_value(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        DesktopObserver(**kwargs)  # type: ignore[arg-type]


def test_constructing_an_observer_needs_no_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)

    DesktopObserver().close()


async def test_capture_failure_is_an_observation_error_in_one_line() -> None:
    class Broken(ScreenCapture):
        def grab(
            self, near: tuple[int, int, int, int] | None = None, choice: MonitorChoice | None = None
        ) -> Shot:
            raise OSError("XGetImage failed\nwith details")

    obs = DesktopObserver(inventory=False, capture=Broken())
    try:
        with pytest.raises(ObservationError, match="^screen capture failed: XGetImage failed"):
            await obs.observe()
    finally:
        obs.close()


async def test_without_a_display_observe_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    obs = DesktopObserver(inventory=False)
    try:
        with pytest.raises(ObservationError, match="no X display: DISPLAY is not set"):
            await obs.observe()
    finally:
        obs.close()


async def test_native_handles_are_found_from_the_copy_the_loop_passes_on() -> None:
    backend = FakeBackend(
        [
            RawElement("menu", "File", (0, 0, 60, 30), native="file"),
            RawElement("edit", "", (0, 60, 600, 300), native="text"),
        ]
    )
    obs = observer(backend=backend)
    try:
        first = await obs.observe()
        second = await obs.observe()
    finally:
        obs.close()

    assert obs.native(first.with_(screenshot_path="runs/r/0001.jpg"), 2) == "text"
    assert obs.native(second, 1) == "file"
    assert obs.native(second, 3) is None


@pytest.mark.parametrize("scaler", ["pillow", "qt"])
def test_both_scalers_turn_bgra_into_the_right_rgb(scaler: str) -> None:
    # 24x4 BGRA: a blue left half and a red right half
    blue, red = bytes([255, 0, 0, 255]), bytes([0, 0, 255, 255])
    row = blue * 12 + red * 12
    bgra = row * 4

    image = scale_bgra(bgra, (24, 4), (12, 2), scaler)  # type: ignore[arg-type]

    assert (image.mode, image.size) == ("RGB", (12, 2))
    assert image.getpixel((1, 1)) == (0, 0, 255)
    assert image.getpixel((10, 1)) == (255, 0, 0)


async def test_a_zoom_region_is_asked_of_the_screen_in_its_own_pixels() -> None:
    capture = FakeCapture(PRIMARY, (1280, 720))
    obs = observer(inventory=False, capture=capture)
    try:
        observation = await obs.observe()
        data = await obs.region(observation, (480, 270, 320, 180))
    finally:
        obs.close()

    # 1920 wide on a 1280 screenshot: the box is 1.5 times as big on the screen
    assert capture.regions == [(720, 405, 480, 270)]
    region = Image.open(io.BytesIO(data))
    assert (region.format, region.size) == ("JPEG", (480, 270))
