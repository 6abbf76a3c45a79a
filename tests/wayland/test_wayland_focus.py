"""The focus probe on the headless GNOME Wayland desk: AT-SPI alone reads the focused text
field's role of a native Wayland window, and tells a window of the app's own process by the
process the accessibility bus names for its connection (no window list on Wayland)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_agent.core.models import Element, Observation
from desktop_agent.core.own_windows import OWN_WINDOW_ROLE
from desktop_agent.desktop.focus import backend_focus
from desktop_agent.desktop.inventory.atspi_wayland import WaylandAtspiInventory
from desktop_agent.desktop.takeover import InjectionWindows
from desktop_agent.desktop.wayland import wayland_parts
from desktop_agent.eval.desk import wait_until
from desktop_agent.eval.wayland_desk import WaylandSession
from desktop_agent.settings import Settings
from tests.support.gtk import still_gtk_env
from tests.support.wayland import AtspiRig, Node, person_answers

ACCESSIBLE = "org.a11y.atspi.Accessible"
STATE_FOCUSED = 12  # ATSPI_STATE_FOCUSED (at-spi2-core's atspi-constants.h)


@contextlib.contextmanager
def probe(own_pid: int | None = None) -> Iterator[WaylandAtspiInventory]:
    backend = WaylandAtspiInventory(own_pid=own_pid)
    backend.thread_init()
    try:
        yield backend
    finally:
        backend.close()


def named(observation: Observation, role: str, name: str) -> Element | None:
    return next((e for e in observation.elements if e.role == role and e.name == name), None)


@pytest.fixture
def editor(wayland_env: WaylandSession, atspi_rig: AtspiRig, tmp_path: Path) -> Iterator[int]:
    """l3afpad on the desk, its text view focused by a click through the portal (a window
    that opens on the headless desk is not made active): its pid."""
    process = wayland_env.spawn(
        ["l3afpad", str(tmp_path / "note.txt")], extra_env=still_gtk_env(tmp_path / "config")
    )
    observer, driver, desk = wayland_parts(Settings(), InjectionWindows())
    try:
        app = atspi_rig.wait_for("application", "l3afpad")
        with person_answers(atspi_rig) as errors:
            asyncio.run(observer.observe())
        assert not errors

        def listed() -> Observation | None:
            seen = asyncio.run(observer.observe())
            return seen if named(seen, "edit", "") else None

        observation: Observation = wait_until(
            listed, timeout=20, what="the editor's text box listed"
        )
        text = named(observation, "edit", "")
        assert text is not None
        driver.click(*observation.mapping.to_screen(*text.center), "left", 1)

        def text_focused() -> Node | None:
            node = atspi_rig.find("text", "", app)
            if node is None:
                return None
            (states,) = atspi_rig._call(node.bus, node.path, ACCESSIBLE, "GetState")
            return node if states[0] & (1 << STATE_FOCUSED) else None

        wait_until(text_focused, timeout=20, what="the editor's text focused")
        yield process.pid
    finally:
        observer.close()
        desk.close()
        wayland_env.stop(process)


def test_the_focused_text_fields_role_is_read_and_the_apps_own_window_told(
    editor: int,
) -> None:
    # this test's process is not the editor's: its focused text view is the answer
    with probe() as backend:
        assert backend_focus(backend, time.monotonic() + 2).role == "text"
    # the same window, where the editor's process were the app's: its own window in front
    with probe(own_pid=editor) as backend:
        assert backend_focus(backend, time.monotonic() + 2).role == OWN_WINDOW_ROLE


#: a window of the app's kind in a process of its own: the app's start (app.py) before its
#: QApplication, then a focused line edit filling the screen (a click anywhere lands on it)
OWN_WINDOW = """
from PySide6.QtWidgets import QApplication, QLineEdit
from desktop_agent.host.display import windows_on_the_accessibility_bus
windows_on_the_accessibility_bus()
app = QApplication(["desktop-agent"])
app.setApplicationName("desktop-agent")
edit = QLineEdit()
edit.setWindowTitle("Desktop Agent")
edit.showFullScreen()
app.exec()
"""


def test_the_apps_own_qt_window_is_on_the_bus_and_told_when_it_has_the_focus(
    wayland_env: WaylandSession, atspi_rig: AtspiRig
) -> None:
    # on old main the app's Qt windows were not on the AT-SPI bus of a Wayland desktop (Qt
    # puts them there only for a screen reader): nothing could see one of them active
    process = wayland_env.spawn(
        [sys.executable, "-c", OWN_WINDOW], extra_env={"QT_QPA_PLATFORM": "wayland"}
    )
    observer, driver, desk = wayland_parts(Settings(), InjectionWindows())
    try:
        atspi_rig.wait_for("application", "desktop-agent")
        with person_answers(atspi_rig) as errors:
            asyncio.run(observer.observe())
        assert not errors
        with probe() as backend:
            driver.click(640, 360, "left", 1)
            wait_until(
                lambda: backend_focus(backend, time.monotonic() + 2).role == OWN_WINDOW_ROLE,
                timeout=20,
                what="the app's own window told as the focus holder",
            )
    finally:
        observer.close()
        desk.close()
        wayland_env.stop(process)
