"""Capture and input through the RemoteDesktop + ScreenCast portal on a real headless GNOME
session, on a native Wayland window; the person's consent dialog answered by the test rig."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from desktop_agent.desktop.capture import ScreenCapture
from desktop_agent.desktop.wayland import PortalDesk, PortalDriver, PortalScreen
from desktop_agent.eval.desk import wait_until
from desktop_agent.eval.wayland_desk import WaylandSession
from tests.support.gtk import still_gtk_env
from tests.support.wayland import AtspiRig, Node, person_answers


def white_box(image: Image.Image) -> tuple[int, int, int, int] | None:
    """The bounding box (left, top, right, bottom) of the pure white pixels: the editor's text
    area (the rest of the screen is a blue backdrop, grey bars, dark text); None when none."""
    mask = image.convert("L").point(lambda level: 255 if level == 255 else 0)
    return mask.getbbox()


@pytest.fixture
def editor(
    wayland_env: WaylandSession, atspi_rig: AtspiRig, tmp_path: Path
) -> Iterator[tuple[Node, Path]]:
    note = tmp_path / "note.txt"
    process = wayland_env.spawn(
        ["l3afpad", str(note)], extra_env=still_gtk_env(tmp_path / "config")
    )
    try:
        application = atspi_rig.wait_for("application", "l3afpad")
        yield atspi_rig.wait_for("text", "", application), note
    finally:
        wayland_env.stop(process)


@pytest.fixture
def desk() -> Iterator[PortalDesk]:
    portal = PortalDesk()
    try:
        yield portal
    finally:
        portal.close()


def test_a_screenshot_clicks_and_keys_reach_a_native_wayland_editor_through_the_portal(
    editor: tuple[Node, Path], atspi_rig: AtspiRig, desk: PortalDesk
) -> None:
    """A screenshot, clicks and typed keys through the portal write a line in l3afpad (a
    native Wayland client) and open its File menu: the places clicked are read off the
    screenshot."""
    text, note = editor
    capture = ScreenCapture(width=1280, scaler="pillow", screen=lambda: PortalScreen(desk))
    with person_answers(atspi_rig) as errors:
        capture.grab()
    assert not errors

    # the editor may paint, and the consent dialog go, a few frames after the answer (seen in
    # the whole suite on a loaded machine): wait for the editor's white text area
    def editor_shown() -> Any:
        grabbed = capture.grab()
        return grabbed if white_box(grabbed.image) else None

    shot = wait_until(
        editor_shown,
        timeout=20,
        what="the editor's white text area on the screenshot",
    )
    assert shot.size == (1280, 720) and desk.session.input_granted
    box = white_box(shot.image)
    assert box is not None
    left, top, right, bottom = box
    driver = PortalDriver(desk)
    # the portal's dialog had the focus; a click in the text gives it to the editor
    driver.click((left + right) // 2, (top + bottom) // 2, "left", 1)
    for char in "A line, typed.":
        driver.type_char(char)
    wait_until(lambda: atspi_rig.text_of(text).endswith("."), timeout=10, what="the line")
    assert atspi_rig.text_of(text) == "A line, typed."
    # the File menu's label sits on the menu bar just above the text area's left end
    driver.click(left + 16, top - 14, "left", 1)
    menu = (left, top + 4, left + 240, top + 200)
    wait_until(
        lambda: capture.grab().image.crop(menu) != shot.image.crop(menu),
        timeout=10,
        what="the File menu on the screenshot",
    )


def test_the_person_saying_no_is_an_observation_error_never_a_screenshot(
    wayland_env: WaylandSession, atspi_rig: AtspiRig, desk: PortalDesk
) -> None:
    from desktop_agent.core.errors import ObservationError

    capture = ScreenCapture(width=640, scaler="pillow", screen=lambda: PortalScreen(desk))
    cancelled: list[bool] = []

    def cancel() -> None:
        dialog = atspi_rig.wait_for("window", "Remote desktop")
        cancelled.append(atspi_rig.do_action(atspi_rig.wait_for("button", "Cancel", dialog)))

    import threading

    person = threading.Thread(target=cancel)
    person.start()
    try:
        with pytest.raises(ObservationError, match="declined"):
            capture.grab()
    finally:
        person.join(timeout=30)
    assert cancelled == [True]
