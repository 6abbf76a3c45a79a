"""The calibration window: targets painted where it says, the model asked, the report shown.

The observer grabs the window itself (offscreen there is no screen to capture); the model is
the scripted loopback server answering in 0–1000 of the image it is sent. The screenshot and
the model's requests are the engine's (host/calibration.py): with a real engine thread, the
GUI thread never captures or reads the key.
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PIL import Image
from PySide6.QtCore import QBuffer, QIODevice, QPoint

from desktop_agent.core.calibration import TARGET_RADIUS, targets_for
from desktop_agent.core.models import Observation, ScreenMapping
from desktop_agent.host.calibration import ScreenCalibration
from desktop_agent.host.engine import Engine
from desktop_agent.planner import ResponseFormatMemory
from desktop_agent.settings import Settings
from desktop_agent.ui.calibration import CalibrationWindow, calibrate_in_window
from tests.fakes import real_observation
from tests.support.model_server import Hang, ModelServer, Reply, ScriptItem

pytestmark = [pytest.mark.gui]
_LABEL = re.compile(r"red ring labelled ([A-Z])")
T = TypeVar("T")


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The API key rule reads the settings file: this test's, not the user's."""
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))


@pytest.fixture
def engine() -> Iterator[Engine]:
    engine = Engine().start()
    yield engine
    engine.close()


async def here(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """On this loop: the window's grab is a Qt call, made on the GUI thread."""
    return await fn(*args)


def on(engine: Engine) -> Callable[..., Awaitable[Any]]:
    """`fn(*args)` awaited on `engine`'s thread (as EngineClient.ask)."""

    async def ask(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        async def call() -> T:
            return await fn(*args)

        return await engine.run(call())

    return ask


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
            settings = Settings(base_url=server.base_url, model="some-vlm", model_profile="generic")
            calibration = ScreenCalibration(settings, observer=grab, formats=ResponseFormatMemory())
            report = await window.run(calibration, here)
            return report, len(server.requests)

    report, requests = qloop.run_until_complete(go())
    assert requests == 5  # one chat request per target
    assert report is not None
    assert report.suggested == "normalized"
    for line in report.lines:
        if " px off as " in line:
            assert line.endswith(" as normalized")
            assert float(line.rsplit("→ ", 1)[1].split(" px")[0]) <= 1.0, line
    # the rings are painted where the window says: red on each ring's left edge
    assert grab.image is not None
    for target in window.local_targets():
        pixel = grab.image.getpixel((target.x - TARGET_RADIUS, target.y))
        assert isinstance(pixel, tuple)  # an RGB image's pixel
        r, g, b = pixel
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
            settings = Settings(base_url=server.base_url, model="m")
            calibration = ScreenCalibration(
                settings,
                observer=WindowGrab(window),
                max_attempts=1,
                formats=ResponseFormatMemory(),
            )
            return await window.run(calibration, here)

    assert qloop.run_until_complete(go()) is None
    text = window.status.text()
    assert text.startswith("Calibration failed: model server at http://127.0.0.1:")
    assert "\n" not in text
    assert not window.save_button.isEnabled()


class Still:
    """An observer with one still image; it remembers the threads it was asked on."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []

    async def observe(self) -> Observation:
        self.threads.append(threading.current_thread())
        return real_observation()


def open_windows() -> list[CalibrationWindow]:
    from PySide6.QtWidgets import QApplication

    return [
        widget
        for widget in QApplication.topLevelWidgets()
        if isinstance(widget, CalibrationWindow) and widget.isVisible()
    ]


def test_closing_the_window_ends_a_calibration_still_asking_the_model_on_the_engine(
    qapp: Any, qloop: Any, qtbot: Any, engine: Engine
) -> None:
    async def go() -> Any:
        async with ModelServer(script=[Hang()]) as server:
            settings = Settings(base_url=server.base_url, model="m", model_profile="generic")
            calibrating = asyncio.ensure_future(
                calibrate_in_window(ScreenCalibration(settings, observer=Still()), on(engine))
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


def test_the_screenshot_and_the_key_are_taken_off_the_gui_thread_and_the_window_shows_the_report(
    qapp: Any, qloop: Any, qtbot: Any, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import desktop_agent.settings

    key_threads: list[threading.Thread] = []
    real_api_key_for = desktop_agent.settings.api_key_for

    def read_key(url: str, settings: Any) -> str | None:
        key_threads.append(threading.current_thread())
        return real_api_key_for(url, settings)

    monkeypatch.setattr(desktop_agent.settings, "api_key_for", read_key)
    still = Still()
    reports: list[str] = []

    async def go() -> Any:
        click = Reply({"action": "tool", "tool": "click", "args": {"x": 10, "y": 10}})
        async with ModelServer(then=click) as server:
            settings = Settings(base_url=server.base_url, model="m", model_profile="generic")
            calibrating = asyncio.ensure_future(
                calibrate_in_window(
                    ScreenCalibration(settings, observer=still),
                    on(engine),
                    on_report=reports.append,
                )
            )
            while not reports:  # noqa: ASYNC110 - the report shown, delivered on this loop
                await asyncio.sleep(0.005)
            (window,) = open_windows()
            window.close()
            await asyncio.wait_for(calibrating, 5)
            return len(server.requests)

    assert qloop.run_until_complete(go()) == 5
    assert still.threads == [engine.thread]
    assert key_threads and threading.main_thread() not in key_threads
    assert engine.thread not in key_threads  # the keyring: off the engine's loop too
    (report,) = reports
    assert report.startswith("model m, profile generic")
