"""The element list on the headless GNOME Wayland desk (issue 34 item 2): AT-SPI's boxes of a
native Wayland window, placed on the portal's screenshot by finding the window there."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PIL import Image

from desktop_agent.core.models import Element, Observation
from desktop_agent.desktop.capture import ScreenCapture
from desktop_agent.desktop.observer import DesktopObserver
from desktop_agent.desktop.takeover import InjectionWindows
from desktop_agent.desktop.wayland import PortalDesk, PortalDriver, PortalScreen, wayland_parts
from desktop_agent.eval.desk import wait_until
from desktop_agent.eval.wayland_desk import WaylandSession
from desktop_agent.planner.screen_text import screen_text_block
from desktop_agent.settings import Settings
from tests.support.gtk import still_gtk_env
from tests.support.wayland import AtspiRig, Node, person_answers

#: ATSPI_STATE_FOCUSED, ATSPI_STATE_SELECTED (at-spi2-core's atspi-constants.h): the focus;
#: an open menu of a menu bar
STATE_FOCUSED = 12
STATE_SELECTED = 23


def text_area(image: Image.Image) -> tuple[int, int, int, int] | None:
    """(left, top, right, bottom) of the white pixels: the editor's text area, read off the
    screenshot (the rest of the desk is a blue backdrop and grey bars)."""
    return image.convert("L").point(lambda level: 255 if level >= 254 else 0).getbbox()


@pytest.fixture
def editor(wayland_env: WaylandSession, atspi_rig: AtspiRig, tmp_path: Path) -> Iterator[Node]:
    process = wayland_env.spawn(
        ["l3afpad", str(tmp_path / "note.txt")], extra_env=still_gtk_env(tmp_path / "config")
    )
    try:
        yield atspi_rig.wait_for("application", "l3afpad")
    finally:
        wayland_env.stop(process)


Parts = tuple[DesktopObserver, PortalDriver, PortalDesk]


@pytest.fixture
def parts(wayland_env: WaylandSession) -> Iterator[Parts]:
    observer, driver, desk = wayland_parts(Settings(), InjectionWindows())
    try:
        yield observer, driver, desk
    finally:
        observer.close()
        desk.close()


def has_state(rig: AtspiRig, node: Node, state: int) -> bool:
    (states,) = rig._call(node.bus, node.path, "org.a11y.atspi.Accessible", "GetState")
    return bool(states[0] & (1 << state))


def focused(rig: AtspiRig, node: Node) -> bool:
    return has_state(rig, node, STATE_FOCUSED)


def named(observation: Observation, role: str, name: str) -> Element | None:
    return next((e for e in observation.elements if e.role == role and e.name == name), None)


def right_click_until(
    driver: PortalDriver, point: tuple[int, int], shown: Callable[[], Observation | None]
) -> Observation:
    """Right-click at `point` until `shown` sees the context menu, as a person clicks again
    when no menu came up. On the headless desk no menu is seen after the portal's right
    click about 1 time in 10 (measured: 3 of 28 runs, and 25 of 40 with the button held 30 ms
    between press and release, so the release reaching the open popup seems to close it).
    The observer's listing is what this test is about, not GTK's popup."""
    for _ in range(2):
        driver.click(*point, "right", 1)
        with contextlib.suppress(TimeoutError):
            menu: Observation = wait_until(shown, timeout=5, what="the context menu")
            return menu
    driver.click(*point, "right", 1)
    menu = wait_until(shown, timeout=5, what="the context menu's items listed")
    return menu


def test_element_boxes_of_a_native_wayland_window_land_on_the_screenshot(
    editor: Node,
    atspi_rig: AtspiRig,
    parts: Parts,
) -> None:
    """The editor's text box is where its white area is on the screenshot, a click at its
    centre focuses it, and a click at the centre of the "File" element opens the File menu
    (AT-SPI says so)."""
    observer, driver, desk = parts
    with person_answers(atspi_rig) as errors:
        asyncio.run(observer.observe())
    assert not errors

    # the consent dialog goes and the editor takes the focus a few frames after the answer
    def listed() -> Observation | None:
        seen = asyncio.run(observer.observe())
        return seen if named(seen, "menu", "File") and named(seen, "edit", "") else None

    observation = wait_until(listed, timeout=20, what="the editor's File menu in the list")
    assert observation.inventory_backend == "atspi"
    assert not observation.window_relative
    capture = ScreenCapture(width=1280, scaler="pillow", screen=lambda: PortalScreen(desk))
    white = text_area(capture.grab().image)
    assert white is not None
    text = named(observation, "edit", "")
    assert text is not None
    left, top, width, height = text.box
    # AT-SPI's text box is the white area (GTK's text view draws no border of its own)
    assert abs(left - white[0]) <= 2 and abs(top - white[1]) <= 2, (text.box, white)
    assert abs(left + width - white[2]) <= 2, (text.box, white)

    # a click at the text element's centre puts the caret there (the portal's dialog may
    # have had the keyboard; test_portal_path gives the editor the focus the same way)
    x, y = observation.mapping.to_screen(*text.center)
    driver.click(x, y, "left", 1)
    text_node = atspi_rig.find("text", "", editor)
    assert text_node is not None
    wait_until(lambda: focused(atspi_rig, text_node), timeout=10, what="the text focused")

    menu = named(observation, "menu", "File")
    assert menu is not None
    file_menu = atspi_rig.find("menu", "File", editor)
    assert file_menu is not None
    x, y = observation.mapping.to_screen(*menu.center)
    driver.click(x, y, "left", 1)

    try:
        wait_until(
            lambda: has_state(atspi_rig, file_menu, STATE_SELECTED),
            timeout=10,
            what="the File menu open",
        )
    finally:
        driver.press("escape")


def test_a_context_menus_items_are_listed_relative_to_it_never_as_targets(
    editor: Node,
    atspi_rig: AtspiRig,
    parts: Parts,
) -> None:
    """A context menu is a popup of its own (the active top-level, role "window"): its items'
    boxes are relative to it, and it is not looked for on the screenshot (a search placed one
    on the editor's lines, 150 px off): they are listed relative to it, none is a target."""
    observer, driver, _ = parts
    with person_answers(atspi_rig) as errors:
        asyncio.run(observer.observe())
    assert not errors

    def editor_listed() -> Observation | None:
        seen = asyncio.run(observer.observe())
        return seen if named(seen, "edit", "") else None

    observation = wait_until(editor_listed, timeout=20, what="the editor's text box listed")
    text = named(observation, "edit", "")
    assert text is not None
    x, y = observation.mapping.to_screen(*text.center)
    driver.click(x, y, "left", 1)  # the focus (the portal's dialog may have had it)
    wait_until(
        lambda: focused(atspi_rig, atspi_rig.find("text", "", editor)),  # type: ignore[arg-type]
        timeout=10,
        what="the text focused",
    )

    def menu_listed() -> Observation | None:
        seen = asyncio.run(observer.observe())
        names = [e.name for e in seen.window_relative if e.role == "menuitem"]
        return seen if "Insert Emoji" in names else None

    try:
        shown = right_click_until(driver, (x, y), menu_listed)
    finally:
        driver.press("escape")
    assert not [e for e in shown.elements if e.role == "menuitem"], shown.elements
    block = screen_text_block(shown)
    assert block is not None and "not targets" in block
    assert 'menuitem "Insert Emoji" @ ' in block and "[" not in block.split("```text")[-1]
