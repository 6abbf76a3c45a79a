"""The capture's way on Wayland (desktop/wayland.PortalDesk, PortalScreen): a ScreenCast the
portal could not start falls back to the Screenshot portal where there is one; a person's "no"
stays a no (no screenshot is taken instead). The portal session and the screenshots are fakes
of the ports PortalDesk takes (desktop/portal.PortalSession, PortalScreenshots)."""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image

from desktop_agent.core.errors import ObservationError
from desktop_agent.desktop.capture import ScreenCapture
from desktop_agent.desktop.portal import PortalDeclined, PortalUnavailable
from desktop_agent.desktop.wayland import SCREENCAST, SCREENSHOT, PortalDesk, PortalScreen


class RefusingSession:
    """A RemoteDesktop + ScreenCast session whose start fails with `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.starts = 0

    def _connect(self) -> Any:
        raise AssertionError("the test sets the way: no bus")

    def start(self) -> Any:
        self.starts += 1
        raise self.error

    def close(self) -> None:
        pass


class Pictures:
    def __init__(self) -> None:
        self.taken = 0

    def take(self) -> Image.Image:
        self.taken += 1
        return Image.new("RGB", (800, 600), (10, 20, 30))

    def close(self) -> None:
        pass


def desk_with(error: Exception, screenshot_version: int) -> tuple[PortalDesk, Pictures]:
    pictures = Pictures()
    desk = PortalDesk(RefusingSession(error), pictures)  # type: ignore[arg-type]
    # what choose() reads of the portal's properties: a ScreenCast, and the Screenshot's version
    desk.way, desk.screenshot_version = SCREENCAST, screenshot_version
    return desk, pictures


def test_a_screencast_the_portal_could_not_start_falls_back_to_the_screenshot_portal() -> None:
    desk, pictures = desk_with(PortalUnavailable("the portal could not Start (response 2)"), 1)
    capture = ScreenCapture(width=800, scaler="pillow", screen=lambda: PortalScreen(desk))

    shot = capture.grab()

    assert desk.way == SCREENSHOT
    assert shot.size == (800, 600) and shot.image.getpixel((5, 5)) == (10, 20, 30)
    assert pictures.taken == 1  # the picture taken to learn the size is the one handed out
    capture.grab()
    assert pictures.taken == 2


def test_a_person_saying_no_is_never_answered_by_taking_screenshots() -> None:
    desk, pictures = desk_with(PortalDeclined("the person declined sharing the screen"), 1)
    capture = ScreenCapture(width=800, scaler="pillow", screen=lambda: PortalScreen(desk))

    with pytest.raises(ObservationError, match="declined"):
        capture.grab()
    assert pictures.taken == 0 and desk.way == SCREENCAST


def test_without_a_screenshot_portal_the_screencasts_reason_stands() -> None:
    desk, pictures = desk_with(PortalUnavailable("the portal started no screen stream"), 0)
    capture = ScreenCapture(width=800, scaler="pillow", screen=lambda: PortalScreen(desk))

    with pytest.raises(ObservationError, match="no screen stream"):
        capture.grab()
    assert pictures.taken == 0
