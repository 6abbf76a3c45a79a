"""The screen signature: capture.signature's grey grid and the observer filling it in."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw, ImageFont

from desktop_agent.core.effect import screen_change, visibly_changed
from desktop_agent.core.models import MonitorArea, MonitorChoice
from desktop_agent.desktop.capture import SIGNATURE_WIDTH, Shot, signature
from desktop_agent.desktop.inventory import RawElement
from desktop_agent.desktop.observer import DesktopObserver
from tests.unit.desktop.fakes import FakeBackend, FakeCapture

PRIMARY = MonitorArea(1, 0, 0, 1920, 1080, primary=True)


def test_each_byte_is_the_mean_grey_of_a_10_pixel_cell_at_1280x720() -> None:
    image = Image.new("RGB", (1280, 720), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 639, 719), fill=(0, 0, 0))  # the left half black
    draw.rectangle((640, 0, 644, 9), fill=(0, 0, 0))  # half of the first white cell black

    grid = signature(image)

    assert len(grid) == 128 * 72
    assert grid[:64] == bytes(64)
    assert grid[64] in (127, 128)  # (50 black + 50 white pixels) / 100, rounded
    assert grid[65:128] == bytes([255]) * 63
    assert grid[128 + 64] == 255  # the row below is white again


@pytest.mark.parametrize(
    ("size", "rows"),
    [((1280, 720), 72), ((1366, 768), 72), ((1280, 1024), 102), ((1000, 1000), 128), ((16, 9), 72)],
)
def test_the_grid_is_128_across_with_rows_as_the_screens_aspect(
    size: tuple[int, int], rows: int
) -> None:
    assert len(signature(Image.new("RGB", size, (9, 9, 9)))) == SIGNATURE_WIDTH * rows


def text_screen(*, caret: bool = False, word: str = "") -> Image.Image:
    """A white 1280x720 screenshot with a line of text, a 1-pixel caret and maybe a word."""
    image = Image.new("RGB", (1280, 720), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=13)
    draw.text((203, 301), "The quick brown fox ", fill=(0, 0, 0), font=font)
    end = 203 + int(draw.textlength("The quick brown fox ", font=font))
    if word:
        draw.text((end, 301), word, fill=(0, 0, 0), font=font)
        end += int(draw.textlength(word, font=font))
    if caret:
        draw.line((end + 1, 299, end + 1, 314), fill=(0, 0, 0))
    return image


def test_a_caret_blink_is_no_effect_and_a_typed_word_is() -> None:
    still = signature(text_screen(caret=True))

    assert not visibly_changed(still, signature(text_screen(caret=False)))
    assert visibly_changed(still, signature(text_screen(caret=True, word="hello")))


async def test_the_observer_fills_the_signature_of_the_screen_without_marks() -> None:
    backend = FakeBackend([RawElement("button", "OK", (300, 300, 300, 150))])
    observer = DesktopObserver(
        capture=FakeCapture(PRIMARY, (1280, 720)), fmt="png", set_of_mark=True, backend=backend
    )
    try:
        observation = await observer.observe()
    finally:
        observer.close()

    assert observation.elements  # marks were drawn on the image...
    assert observation.signature == bytes([128]) * (128 * 72)  # ...not on the signature


class ChangingCapture(FakeCapture):
    """A screen whose next grab shows a word typed."""

    def grab(
        self, near: tuple[int, int, int, int] | None = None, choice: MonitorChoice | None = None
    ) -> Shot:
        self.grabs += 1
        word = "typed" if self.grabs > 1 else ""
        return Shot(text_screen(caret=True, word=word), self.monitor)


async def test_two_observations_signatures_tell_whether_the_screen_changed() -> None:
    observer = DesktopObserver(capture=ChangingCapture(PRIMARY, (1280, 720)), inventory=False)
    try:
        first = await observer.observe()
        second = await observer.observe()
    finally:
        observer.close()

    assert screen_change(first.signature, first.signature) == 0.0
    assert visibly_changed(first.signature, second.signature)
