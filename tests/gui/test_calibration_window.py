"""The calibration window: targets painted where it says, the model asked, the report shown.

The observer grabs the window itself (offscreen there is no screen to capture); the model is
the scripted loopback server answering in 0–1000 of the image it is sent.
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
from typing import Any

import pytest
from PIL import Image
from PySide6.QtCore import QBuffer, QIODevice, QPoint

from desktop_agent.core.models import Observation, ScreenMapping
from desktop_agent.planner import OpenAIPlanner, ResponseFormatMemory
from desktop_agent.planner.calibration import TARGET_RADIUS, targets_for
from desktop_agent.ui.calibration import CalibrationWindow
from tests.support.model_server import ModelServer, Reply, ScriptItem

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore(r"^This plugin does not support (propagateSizeHints|raise)\(\)"),
]
_LABEL = re.compile(r"red ring labelled ([A-Z])")


@pytest.fixture(scope="session")
def qapp_args() -> list[str]:
    return ["desktop-agent-tests", "-platform", "offscreen"]


class WindowGrab:
    """A ScreenObserver that 'captures the screen' by grabbing the window (offscreen)."""

    def __init__(self, window: CalibrationWindow) -> None:
        self.window = window
        self.image: Image.Image | None = None

    async def observe(self) -> Observation:
        pixmap = self.window.grab()
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        pixmap.save(buffer, "PNG")
        data = bytes(buffer.data().data())
        self.image = Image.open(io.BytesIO(data)).convert("RGB")
        origin = self.window.mapToGlobal(QPoint(0, 0))
        return Observation(
            image=data,
            mime="image/png",
            width=pixmap.width(),
            height=pixmap.height(),
            mapping=ScreenMapping(offset_x=origin.x(), offset_y=origin.y()),
        )


def normalized_model(body: dict[str, Any]) -> ScriptItem:
    """Clicks the named ring, answering in 0–1000 of the image it was sent."""
    parts = body["messages"][-1]["content"]
    url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    match = _LABEL.search(body["messages"][0]["content"])
    assert match is not None
    target = next(t for t in targets_for(*image.size) if t.label == match.group(1))
    x = round(target.x / image.width * 1000)
    y = round(target.y / image.height * 1000)
    return Reply({"action": "tool", "tool": "click", "args": {"x": x, "y": y}})


def test_window_shows_targets_finds_a_0_to_1000_model_and_offers_to_save(
    qapp: Any, qloop: Any, qtbot: Any
) -> None:
    window = CalibrationWindow()
    qtbot.addWidget(window)
    grab = WindowGrab(window)

    async def go() -> Any:
        async with ModelServer(respond=normalized_model) as server:
            planner = OpenAIPlanner(
                base_url=server.base_url,
                model="some-vlm",
                api_key=None,
                profile="generic",
                formats=ResponseFormatMemory(),
            )
            async with planner:
                report = await window.run(planner, grab, "some-vlm")
            return report, len(server.requests)

    report, requests = qloop.run_until_complete(go())
    assert requests == 5  # one chat request per target
    assert report is not None
    assert report.best.space == "normalized"
    assert report.best.max_px <= 1.0
    # the rings are painted where the window says: red on each ring's left edge
    assert grab.image is not None
    for target in window.local_targets():
        r, g, b = grab.image.getpixel((target.x - TARGET_RADIUS, target.y))
        assert r > 180 and g < 90 and b < 90, (target, (r, g, b))
    assert "best fit: normalized, not the profile's pixels" in window.status.text()
    assert window.save_button.isEnabled()
    with qtbot.waitSignal(window.save_requested) as saved:
        window.save_button.click()
    assert saved.args == ["normalized"]
    assert not window.save_button.isEnabled()


def test_a_failed_calibration_says_why_in_one_line(qapp: Any, qloop: Any, qtbot: Any) -> None:
    window = CalibrationWindow()
    qtbot.addWidget(window)

    async def go() -> Any:
        async with ModelServer() as server:  # answers 500 "script exhausted"
            planner = OpenAIPlanner(
                base_url=server.base_url,
                model="m",
                api_key=None,
                max_attempts=1,
                formats=ResponseFormatMemory(),
            )
            async with planner:
                return await window.run(planner, WindowGrab(window), "m")

    assert qloop.run_until_complete(go()) is None
    text = window.status.text()
    assert text.startswith("Calibration failed: model server at http://127.0.0.1:")
    assert "\n" not in text
    assert not window.save_button.isEnabled()


def test_closing_the_window_ends_a_calibration_still_asking_the_model(
    qapp: Any, qloop: Any, qtbot: Any
) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop_agent.settings import Settings
    from desktop_agent.ui.calibration import calibrate_in_window
    from tests.gui.fake_agent import real_observation
    from tests.support.model_server import Hang

    class Still:
        async def observe(self) -> Observation:
            return real_observation()

    def open_windows() -> list[CalibrationWindow]:
        return [
            widget
            for widget in QApplication.topLevelWidgets()
            if isinstance(widget, CalibrationWindow) and widget.isVisible()
        ]

    async def go() -> Any:
        async with ModelServer(script=[Hang()]) as server:
            settings = Settings(base_url=server.base_url, model="m", model_profile="generic")
            calibrating = asyncio.ensure_future(
                calibrate_in_window(settings, None, observer=Still())
            )
            await server.wait_requests(1)  # the model is thinking about the first target
            (window,) = open_windows()
            window.close()  # the user presses Escape
            report = await asyncio.wait_for(calibrating, 5)
            return report, len(server.requests)

    report, requests = qloop.run_until_complete(go())
    assert report is None
    assert requests == 1  # the model is asked nothing more
    assert open_windows() == []
