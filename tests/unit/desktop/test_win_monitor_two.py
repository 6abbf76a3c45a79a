"""Monitor 2 on Windows at negative coordinates (issue 33 item 5): the image of it, the zoom's
crop captured anew within it, and a grounded point that the click lands on, through mss's
Windows monitors and BitBlt (tests/unit/desktop/fake_win_screen.py, transcribed from mss)
and SendInput's absolute coordinates."""

from __future__ import annotations

import base64
import io
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from desktop_agent.core.models import TokenUsage
from desktop_agent.core.ports import GroundRequest
from desktop_agent.desktop.capture import ScreenCapture
from desktop_agent.desktop.input import PyAutoGuiDriver
from desktop_agent.desktop.observer import DesktopObserver
from desktop_agent.planner.grounder import ModelGrounder
from desktop_agent.planner.profiles import ModelProfile, profile_named
from tests.unit.desktop.fake_pyautogui import FakePyAutoGui
from tests.unit.desktop.fake_win_screen import FakeWinMss, Rect
from tests.unit.desktop.fake_windows import FakeWindows

#: EnumDisplayMonitors' order: monitor 2 (150 %, 2880x1620 physical) left of and above the
#: primary comes first, as Windows may list it; the capture numbers the primary 1
LAYOUT: list[Rect] = [(-2880, -400, 2880, 1620, False), (0, 0, 1920, 1080, True)]
SECOND = (-2880, -400, 2880, 1620)
#: a white button on monitor 2 (physical px); the primary has a grey one at the same place
#: within it, so a crop that left out the monitor's offset shows grey
BUTTON = (-2280, 200, 450, 180)


def desktop() -> Any:
    from PIL import Image, ImageDraw

    origin = (-2880, -400)
    image = Image.new("RGB", (2880 + 1920, 1620))
    draw = ImageDraw.Draw(image)
    left, top, width, height = BUTTON
    x, y = left - origin[0], top - origin[1]
    draw.rectangle((x, y, x + width - 1, y + height - 1), fill=(255, 255, 255))
    # the same place within the primary: BUTTON's offset from monitor 2's corner
    px, py = left - SECOND[0] - origin[0], top - SECOND[1] - origin[1]
    draw.rectangle((px, py, px + width - 1, py + height - 1), fill=(128, 128, 128))
    return image


def grey_image(data: bytes) -> Any:
    from PIL import Image

    return Image.open(io.BytesIO(data)).convert("L")


@dataclass
class _Answer:
    text: str
    usage: TokenUsage | None = None


class EdgeModel:
    """The grounding model (the TextModel port): it reads the image it is sent (the whole
    screenshot, or a crop) and answers a point just inside the white's left edge, halfway
    down the white, in that image's pixels (the profile's space)."""

    model = "edge"

    def __init__(self, profile: ModelProfile) -> None:
        self.profile = profile
        self.images: list[Any] = []

    async def complete_text(self, messages: list[dict[str, Any]]) -> _Answer:
        (url,) = [
            part["image_url"]["url"]
            for message in messages
            if isinstance(message["content"], list)
            for part in message["content"]
            if part.get("type") == "image_url"
        ]
        image = grey_image(base64.b64decode(url.split(",", 1)[1]))
        self.images.append(image)
        box = image.point(lambda v: 255 if v > 200 else 0).getbbox()
        if box is None:
            return _Answer('{"x": -1, "y": -1}')
        return _Answer(f'{{"x": {box[0] + 4}, "y": {(box[1] + box[3]) // 2}}}')


@pytest.fixture
def screen() -> FakeWinMss:
    return FakeWinMss(LAYOUT, desktop())


@pytest.mark.parametrize("mode", ["zoom", "grounder"])
async def test_grounding_on_monitor_2_crops_within_it_and_the_click_lands_on_the_point_found(
    mode: str, screen: FakeWinMss, monkeypatch: pytest.MonkeyPatch
) -> None:
    # zoom: the planner's own model on a crop; grounder: a grounding model on the whole
    # image of monitor 2 first, then on a crop around its point
    observer = DesktopObserver(
        capture=ScreenCapture(width=1280, screen=lambda: screen, scaler="pillow"),
        inventory=False,
        guard_texts=False,
        locate=lambda: (-2000, 100, 800, 600),  # the active window: on monitor 2
    )
    try:
        observation = await observer.observe()
        assert observation.layout is not None
        shown = observation.layout.shown
        assert (shown.number, shown.rect) == (2, SECOND)
        left, top, width, height = SECOND
        assert screen.grabbed[-1] == {"left": left, "top": top, "width": width, "height": height}
        # the planner's point: near the button's middle, a little off
        first = observation.mapping.to_image(-2030, 270)
        model = EdgeModel(profile_named("openai"))
        grounder = (
            ModelGrounder(mode="zoom", zoom_with=model)
            if mode == "zoom"
            else ModelGrounder(mode="grounder", locate_with=model)
        )
        grounding = await grounder.ground(
            GroundRequest(
                "click",
                "the button's left edge",
                first,
                observation,
                region=lambda box: observer.region(observation, box),
            )  # fmt: skip
        )
    finally:
        observer.close()

    assert grounding.refined, grounding.summary
    # the crop was captured anew within monitor 2, at its physical resolution
    region = screen.grabbed[-1]
    assert SECOND[0] <= region["left"] and region["left"] + region["width"] <= 0
    assert SECOND[1] <= region["top"] and region["top"] + region["height"] <= SECOND[1] + 1620
    assert len(model.images) == (1 if mode == "zoom" else 2)
    crop = model.images[-1]
    assert crop.getextrema() == (0, 255)  # the button's edge and the desk beside it
    # nothing of the primary's grey button, but for the resize's blur along an edge
    grey = sum(crop.histogram()[110:150])
    assert grey < crop.width * crop.height // 50, grey
    # the point found, on the desktop: just inside the button's left edge
    x, y = observation.mapping.to_screen(*grounding.point)
    left, top, width, height = BUTTON
    assert left <= x <= left + 6 and top <= y < top + height, (x, y)

    # the click goes there: SendInput's absolute move over the whole virtual desktop
    monkeypatch.setitem(sys.modules, "pyautogui", FakePyAutoGui("win32"))
    windows = FakeWindows()
    windows.desk = (-2880, -400, 4800, 1620)
    driver = PyAutoGuiDriver(
        windows=True,
        send_input=windows.send_input,
        virtual_desk=lambda: windows.desk,
        foreground_check=lambda keys: None,
    )
    driver.click(x, y, "left", 1)
    assert windows.pointer == (x, y)
