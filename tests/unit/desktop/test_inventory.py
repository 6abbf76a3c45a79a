"""Inventory text, ids and boxes; the hard time budget; which backend and why."""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass

import pytest

from desktop_agent.core.models import MonitorArea, MonitorChoice, ScreenMapping
from desktop_agent.desktop.capture import Shot
from desktop_agent.desktop.geometry import mapping_for
from desktop_agent.desktop.inventory import (
    InventoryRunner,
    NoInventory,
    RawElement,
    WalkLimits,
    choose_backend,
    inventory_text,
    own_window_elements,
    to_elements,
)
from desktop_agent.desktop.inventory.atspi import atspi_status
from desktop_agent.desktop.inventory.x11 import WindowInfo
from desktop_agent.desktop.observer import DesktopObserver
from tests.support.xdisplay import wait_until
from tests.unit.desktop.fakes import FakeBackend, FakeCapture

MAPPING = mapping_for(MonitorArea(1, 0, 0, 1920, 1080), (1280, 720))
SIZE = (1280, 720)


def test_inventory_text_is_one_element_a_line_in_screenshot_pixels() -> None:
    raw = [
        RawElement("menu", "File", (660, 347, 39, 25)),
        RawElement("button", "Save", (960, 768, 120, 36), enabled=False),
        RawElement("edit", "File name", (180, 720, 600, 36), focused=True),
        RawElement("edit", "Password", (180, 780, 600, 36), password=True),
    ]

    elements, _ = to_elements(raw, MAPPING, SIZE)

    assert inventory_text(elements) == "\n".join(
        [
            '[1] menu "File" @ 440,231 26x17',
            '[2] button "Save" @ 640,512 80x24 disabled',
            '[3] edit "File name" @ 120,480 400x24 focused',
            '[4] edit "Password" @ 120,520 400x24 password',
        ]
    )


def test_names_become_one_clean_line_of_at_most_80_characters() -> None:
    raw = [
        RawElement("text", 'Line one\n  "quoted"\tend', (0, 0, 30, 30)),
        RawElement("link", "x" * 200, (0, 40, 30, 30)),
    ]

    elements, _ = to_elements(raw, MAPPING, SIZE)

    assert elements[0].line() == "[1] text \"Line one 'quoted' end\" @ 0,0 20x20"
    assert len(elements[1].name) == 80 and elements[1].name.endswith("…")


def test_ids_count_from_one_over_the_kept_elements_and_map_to_natives() -> None:
    raw = [
        RawElement("window", "Left monitor", (-1920, 0, 800, 600), native="off-screen"),
        RawElement("button", "OK", (30, 30, 60, 30), native="ok"),
        RawElement("button", "OK", (30, 30, 60, 30), native="duplicate"),
        RawElement("button", "Cancel", (120, 30, 60, 30)),
        RawElement("edit", "Name", (30, 90, 300, 30), native="name"),
    ]

    elements, natives = to_elements(raw, MAPPING, SIZE)

    assert [(e.id, e.name) for e in elements] == [(1, "OK"), (2, "Cancel"), (3, "Name")]
    assert natives == {1: "ok", 3: "name"}


def test_window_label_names_the_program_when_the_title_does_not() -> None:
    def window(title: str, wm_class: str) -> WindowInfo:
        return WindowInfo(1, title, wm_class, (0, 0, 10, 10), active=False)

    assert window("(Untitled)", "L3afpad").label == "(Untitled) — L3afpad"
    assert window("notes.txt - l3afpad", "L3afpad").label == "notes.txt - l3afpad"
    assert window("", "XTerm").label == "XTerm"
    # a class the title holds elsewhere (a terminal's cwd) still ends the label: the gate
    # matches terminal names that are also words only there
    assert window("~/kitty pictures", "kitty").label == "~/kitty pictures — kitty"
    assert window("cd kitty", "kitty").label == "cd kitty"


async def test_a_blocked_walk_costs_the_budget_and_gives_no_elements(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = threading.Event()
    # the fake walk blocks for up to 5 s, then lists its button: had the observation waited
    # for it instead of giving up at the budget, it would carry that button
    backend = FakeBackend([RawElement("button", "OK", (0, 0, 10, 10))], block=release)
    # the element list's budget alone: the injection guard's texts wait for a late walk
    # within a budget of their own (tests/unit/desktop/test_ocr.py)
    observer = DesktopObserver(
        inventory_budget_s=0.05,
        backend=backend,
        capture=FakeCapture(MonitorArea(1, 0, 0, 1920, 1080), SIZE),
        guard_texts=False,
    )
    try:
        with caplog.at_level(logging.WARNING, logger="desktop_agent.desktop.inventory"):
            blocked = await asyncio.wait_for(observer.observe(), 10)
            # the walk is still stuck: the next observation does not queue behind it, its
            # walk runs on a new thread (which the fake blocks as well)
            again = await asyncio.wait_for(observer.observe(), 10)
    finally:
        release.set()
        observer.close()

    assert blocked.elements == () and blocked.inventory_backend == "none"
    assert again.elements == () and again.inventory_backend == "none"
    assert [r.getMessage() for r in caplog.records] == [
        "inventory took longer than 50 ms; no elements this turn",
        "inventory thread abandoned and replaced: the previous walk is still blocked",
        "inventory took longer than 50 ms; no elements this turn",
    ]
    assert observer.inventory is not None and observer.inventory.abandoned == 1
    assert blocked.width == 1280


async def test_runner_gives_the_walk_a_deadline_on_its_clock() -> None:
    seen: list[WalkLimits] = []

    class Recording(FakeBackend):
        def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
            seen.append(limits)
            return [], "x11"

    runner = InventoryRunner(Recording(), clock=lambda: 100.0)
    try:
        raw, used = await runner.snapshot(0.1)
    finally:
        runner.close()

    assert (raw, used) == ([], "x11")
    assert seen[0].deadline == pytest.approx(100.1)
    assert not seen[0].expired()


async def test_an_inventory_fault_gives_no_elements_not_a_failed_observation() -> None:
    class Broken(FakeBackend):
        def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
            raise RuntimeError("D-Bus went away")

    observer = DesktopObserver(
        backend=Broken(), capture=FakeCapture(MonitorArea(1, 0, 0, 1920, 1080), SIZE)
    )
    try:
        observation = await observer.observe()
    finally:
        observer.close()

    assert observation.elements == ()
    assert observation.inventory_backend == "none"


def test_without_a_display_there_is_no_inventory_and_it_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)

    backend = choose_backend()

    assert isinstance(backend, NoInventory)
    assert backend.reason == "no X display: DISPLAY is not set"
    with pytest.raises(LookupError, match="DISPLAY is not set"):
        backend.invoke(None)


def test_atspi_is_not_used_without_a_session_bus_and_no_daemon_is_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.delenv("AT_SPI_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/nonexistent")

    usable, why = atspi_status()

    assert not usable
    assert why == "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)"


def test_atspi_is_not_used_when_the_bus_has_no_accessibility_launcher(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AT_SPI_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")

    usable, why = atspi_status()

    assert not usable
    assert why.startswith("the AT-SPI bus is not running (")
    assert why.endswith("start at-spi-bus-launcher (package at-spi2-core) in the desktop session")


async def test_observation_reports_the_backend_that_listed_the_elements() -> None:
    backend = FakeBackend([RawElement("window", "A", (0, 0, 100, 100))], name="x11")
    observer = DesktopObserver(
        backend=backend, capture=FakeCapture(MonitorArea(1, 0, 0, 1920, 1080), SIZE)
    )
    try:
        observation = await observer.observe()
    finally:
        observer.close()

    assert observation.inventory_backend == "x11"
    assert observation.mapping == ScreenMapping(1.5, 1.5, 0, 0)


def test_walk_limits_expire_on_their_clock() -> None:
    now = [0.0]
    limits = WalkLimits(deadline=1.0, clock=lambda: now[0])

    assert not limits.expired()
    now[0] = 1.0
    assert limits.expired()


async def test_observer_without_inventory_lists_nothing() -> None:
    observer = DesktopObserver(
        inventory=False, capture=FakeCapture(MonitorArea(1, 0, 0, 1920, 1080), SIZE)
    )
    try:
        observation = await observer.observe()
    finally:
        observer.close()
    assert observation.elements == () and observation.inventory_backend == "none"
    assert observer.inventory is None


async def test_the_walk_starts_once_the_grab_is_done() -> None:
    events: list[str] = []

    class Capture(FakeCapture):
        def grab(
            self, near: tuple[int, int, int, int] | None = None, choice: MonitorChoice | None = None
        ) -> Shot:
            events.append("grab")
            return super().grab(near, choice)

    class Backend(FakeBackend):
        def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
            events.append("walk")
            return [], "atspi"

    observer = DesktopObserver(
        backend=Backend(), capture=Capture(MonitorArea(1, 0, 0, 1920, 1080), SIZE)
    )
    try:
        await observer.observe()
    finally:
        observer.close()

    assert events == ["grab", "walk"]


def test_the_apps_own_windows_are_left_out_and_given_apart_where_uncovered() -> None:
    """Windows topmost first: an editor over part of the app's main window owns that part
    (a click there is the editor's); the rest of the main window is the app's own."""
    identity = ScreenMapping()
    raw = [
        RawElement("window", "notes — L3afpad", (0, 0, 400, 300), focused=True),
        RawElement("window", "Desktop Agent", (200, 100, 400, 400), own=True),
        RawElement("button", "Save", (10, 10, 50, 20)),
    ]
    elements, _ = to_elements(raw, identity, (1000, 1000))
    assert [e.name for e in elements] == ["notes — L3afpad", "Save"]
    own = own_window_elements(raw, identity, (1000, 1000))
    assert {e.box for e in own} == {(200, 300, 400, 200), (400, 100, 200, 200)}
    assert all(e.name == "Desktop Agent" and e.role == "window" for e in own)
    # the pieces cover exactly the uncovered part: 400*400 - 200*200
    assert sum(e.box[2] * e.box[3] for e in own) == 400 * 400 - 200 * 200


def test_a_thread_abandoned_while_starting_its_backend_leaves_the_next_its_own() -> None:
    # the focus probe gave up while AT-SPI's connect was slow (a loaded machine): the old
    # thread, once its start returned, marked the runner's backend started, and every later
    # call got a backend never started on its thread ("thread_init() was not called")
    starting = threading.Event()
    release = threading.Event()
    made: list[Starting] = []

    @dataclass
    class Starting(FakeBackend):
        started: bool = False
        closed: bool = False

        def thread_init(self) -> None:
            if not made or self is made[0]:
                starting.set()
                release.wait(10)
            self.started = True

        def close(self) -> None:
            self.closed = True

    def factory() -> Starting:
        made.append(Starting())
        return made[-1]

    runner = InventoryRunner(factory=factory)
    try:
        first = runner.submit(lambda backend: backend)
        assert starting.wait(10)
        runner.abandon_thread("a call took longer than 0.45 s")
        release.set()
        assert first.result(10) is made[0]  # the old thread's call had its own backend
        later = runner.submit(lambda backend: backend).result(10)
        assert later is made[1] and later.started
        assert runner.backend is made[1]
        # the old thread closed what it made once its call returned: no bus left open
        wait_until(lambda: made[0].closed, timeout=10, what="the abandoned backend closed")
        assert not made[1].closed
    finally:
        release.set()
        runner.close()
