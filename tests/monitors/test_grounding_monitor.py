"""A grounder on monitor 2 (issue 33 item 5): a whole run with a separate grounding model, the
target window on the monitor right of the primary. The grounder is shown that monitor, its
zoom crop is captured from that monitor, and the point it finds lands on the window's edge
there, as the X server reports the press."""

from __future__ import annotations

import base64
import io
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from desktop_agent.eval.monitors_desk import MonitorsSession, Output
from tests.e2e.conftest import Cli, json_lines, last_user_text
from tests.monitors.conftest import open_desk
from tests.monitors.target import TargetWindow
from tests.support.model_server import Reply
from tests.support.xdisplay import READY_TIMEOUT_S, wait_until

#: monitor 2 right of the primary, so that a point mapped without its offset lands elsewhere
LAYOUT = (
    Output("DUMMY0", 1920, 1080, 0, 0, primary=True),
    Output("DUMMY1", 1280, 1024, 1920, 0),
    Output("DUMMY2", 1024, 768, 3200, 300),
)
SECOND = (1920, 0, 1280, 1024)
GROUNDER = "edge-grounder"
_SHOWN = re.compile(r"The image shows monitor (\d+), (\d+)x(\d+) at (-?\d+),(-?\d+)")


@pytest.fixture
def monitors_desk() -> Iterator[MonitorsSession]:
    yield from open_desk(LAYOUT)


def image_of(body: dict[str, Any]) -> Any:
    """The one image of a grounding request, as a PIL image (greyscale)."""
    from PIL import Image

    for message in body["messages"]:
        content = message["content"]
        for part in content if isinstance(content, list) else ():
            if part.get("type") == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                return Image.open(io.BytesIO(base64.b64decode(data))).convert("L")
    raise AssertionError("a grounding request without an image")


def white_box(image: Any) -> tuple[int, int, int, int] | None:
    """The box (left, top, right, bottom) of the image's white: the target window."""
    box: tuple[int, int, int, int] | None = image.point(lambda v: 255 if v > 200 else 0).getbbox()
    return box


class EdgeGrounder:
    """A grounding model that reads its image: asked for the window's left edge it answers a
    point just inside the white, in pixels of the image it was sent (the default profile's
    space); it keeps every image it was shown."""

    def __init__(self) -> None:
        self.images: list[Any] = []
        self._lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> Reply:
        image = image_of(body)
        with self._lock:
            self.images.append(image)
            first = len(self.images) == 1
        box = white_box(image)
        if box is None:
            return Reply('{"x": -1, "y": -1}')  # nothing white: an answer the app refuses
        left, top, _, bottom = box
        # the whole screenshot: beside the edge, halfway down the window; the crop (4x):
        # nearer the edge, on its middle row (the crop is centred on the first answer)
        if first:
            return Reply({"x": left + 6, "y": (top + bottom) // 2})
        return Reply({"x": left + 6, "y": image.height // 2})


def test_a_grounder_finds_the_target_on_monitor_2_and_the_click_lands_there(
    cli: Cli, model: Any, monitors_desk: MonitorsSession, target: TargetWindow
) -> None:
    target.place(2120, 200)  # on monitor 2
    client = target.client_rect()
    grounder = EdgeGrounder()
    shown: list[str] = []
    clicked: list[bool] = []

    def respond(body: dict[str, Any]) -> Reply:
        if body["model"] == GROUNDER:
            return grounder.answer(body)
        found = _SHOWN.search(last_user_text(body))
        shown.append(found.group(0) if found else "")
        if clicked:
            wait_until(target.pressed, timeout=READY_TIMEOUT_S, what="the click")
            return Reply({"action": "done", "message": "clicked", "reason": "-"})
        if found is None or found.group(1) != "2":
            return Reply({"action": "tool", "tool": "wait", "args": {"seconds": 0.1},
                          "reason": "-"})  # fmt: skip
        clicked.append(True)
        # the planner's point is anywhere: the grounder finds the target
        args = {"x": 10, "y": 10, "target": "the left edge of the white window"}
        return Reply({"action": "tool", "tool": "click", "args": args, "reason": "-"})

    server = model(respond=respond, models=("qwen2.5vl", GROUNDER))
    process = cli.start_run(
        "click the white window's left edge", server, "--approve", "all",
        "--grounder-model", GROUNDER,
    )  # fmt: skip
    out, err = process.communicate(timeout=120)

    assert process.returncode == 0, err
    events = json_lines(out)
    assert events[-1]["run"]["status"] == "completed"
    assert shown[0].startswith("The image shows monitor 2, 1280x1024 at 1920,0")
    ground = [e["step"] for e in events if e["type"] == "step_finished"
              and e["step"]["kind"] == "ground"]  # fmt: skip
    assert len(ground) == 1 and "refined" in ground[0]["summary"], ground
    # the crop came from monitor 2: the window's edge is in it, black desk beside it
    whole, crop = grounder.images
    box = white_box(crop)
    assert box is not None and box[0] > 0, "the crop holds the window's edge"
    assert crop.getpixel((box[0] // 2, crop.height // 2)) < 60, "and the desk beside it"
    # the press at the X server: on monitor 2, just inside the window's left edge
    ((x, y),) = target.pressed()
    left, top, width, height = client
    assert SECOND[0] <= x < SECOND[0] + SECOND[2]
    assert left <= x <= left + 4, (x, client)
    assert top <= y < top + height
