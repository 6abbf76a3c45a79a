"""Whole runs on three RandR monitors with default settings (monitor = auto): the model sees
the monitor of the active window, its clicks land there, a moved window is followed, and a
monitor unplugged mid-run fails the next step without a click landing anywhere."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

from desktop_agent.eval.monitors_desk import MonitorsSession
from tests.e2e.conftest import Cli, json_lines, last_user_text
from tests.monitors.target import TITLE, TargetWindow
from tests.support.model_server import Reply
from tests.support.xdisplay import READY_TIMEOUT_S, wait_until

#: the monitors of THREE_MONITORS by their number in the app (1 = the primary)
LEFT_MONITOR = (0, 0, 1280, 1024)  # DUMMY1, monitor 2 or 3
RIGHT_MONITOR = (3200, 300, 1024, 768)  # DUMMY2

_TARGET_LINE = re.compile(r'^\[(\d+)\] window "' + TITLE + r'[^"]*" @ ', re.M)
_SHOWN = re.compile(r"The image shows monitor (\d+), (\d+)x(\d+) at (-?\d+),(-?\d+)")


def shown_monitor(body: dict[str, Any]) -> tuple[int, int, int, int] | None:
    """The rect of the monitor the prompt says the image shows."""
    found = _SHOWN.search(last_user_text(body))
    if found is None:
        return None
    _, width, height, left, top = map(int, found.groups())
    return left, top, width, height


def target_id(body: dict[str, Any]) -> int | None:
    """The id of the target window in the element list of the image (not elsewhere)."""
    text = last_user_text(body)
    shown = text.split("Windows and elements on the other monitors")[0]
    found = _TARGET_LINE.search(shown)
    return int(found.group(1)) if found else None


def click(element: int) -> Reply:
    return Reply({"action": "tool", "tool": "click", "args": {"element": element}, "reason": "-"})


WAIT = Reply({"action": "tool", "tool": "wait", "args": {"seconds": 0.1}, "reason": "-"})
DONE = Reply({"action": "done", "message": "clicked", "reason": "-"})


def inside(point: tuple[int, int], rect: tuple[int, int, int, int]) -> bool:
    x, y = point
    left, top, width, height = rect
    return left <= x < left + width and top <= y < top + height


def test_a_window_on_another_monitor_is_clicked_and_followed_when_it_moves(
    cli: Cli, model: Any, monitors_desk: MonitorsSession, target: TargetWindow
) -> None:
    target.place(100, 100)  # on the monitor left of the primary
    seen: list[tuple[int, int, int, int] | None] = []

    sent = [0]
    moved: list[int] = []

    def respond(body: dict[str, Any]) -> Reply:
        seen.append(shown_monitor(body))
        element = target_id(body)
        # the last turn's click has reached the window (or the test fails here)
        wait_until(lambda: len(target.pressed()) >= sent[0], timeout=READY_TIMEOUT_S,
                   what="the click")  # fmt: skip
        clicks = len(target.pressed())
        if clicks == 1 and not moved:
            target.place(3300, 400)  # between two turns, to the right-hand monitor
            moved.append(len(seen))
            return WAIT
        if clicks < 2 and element is not None:
            sent[0] += 1
            return click(element)
        return DONE if clicks == 2 else WAIT

    server = model(respond=respond)
    process = cli.start_run("click the target window twice", server, "--approve", "all")
    out, err = process.communicate(timeout=120)

    assert process.returncode == 0, err
    final = json_lines(out)[-1]
    assert final["run"]["status"] == "completed"
    first, second = target.pressed()
    assert inside(first, LEFT_MONITOR) and inside(second, RIGHT_MONITOR)
    assert seen[moved[0] - 1] == LEFT_MONITOR  # the turn the window was moved in
    assert seen[moved[0]] == RIGHT_MONITOR  # the next turn follows it


def test_an_unplugged_monitor_fails_the_next_step_and_nothing_is_clicked(
    cli: Cli, model: Any, monitors_desk: MonitorsSession, target: TargetWindow
) -> None:
    target.place(3300, 400)  # on the right-hand monitor (DUMMY2)
    answered: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        element = target_id(body)
        if answered:
            return DONE
        if element is None:
            return WAIT  # the element list is not there yet (the first walk can be late)
        monitors_desk.unplug("DUMMY2")  # after the screen was seen, before the click
        answered.append("click")
        return click(element)

    server = model(respond=respond)
    process = cli.start_run("click the target window", server, "--approve", "all")
    out, err = process.communicate(timeout=120)

    assert process.returncode == 0, err
    actions = [
        e["step"]
        for e in json_lines(out)
        if e["type"] == "step_finished" and e["step"]["kind"] == "action"
    ]
    acted = [(a["tool"], a["status"]) for a in actions if a["tool"] != "wait"]
    assert acted == [("click", "failed")]
    actions = [a for a in actions if a["tool"] == "click"]
    assert "is gone or moved since the screen was seen" in actions[0]["error"]
    assert "1024x768 at 3200,300" in actions[0]["error"]
    assert target.pressed() == []


async def test_a_zoom_crops_within_the_monitor_the_image_shows(
    monitors_desk: MonitorsSession, target: TargetWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from PIL import Image, ImageStat

    from desktop_agent.desktop.observer import DesktopObserver

    # only the capture's display (mss and the locator read DISPLAY): no input is sent
    monkeypatch.setenv("DISPLAY", monitors_desk.display)
    target.place(3300, 400)  # white, on the right-hand monitor, which is black elsewhere
    observer = DesktopObserver(inventory=False, guard_texts=False)
    try:
        observation = await observer.observe()  # auto: the active window's monitor
        assert observation.layout is not None
        assert observation.layout.shown.rect == RIGHT_MONITOR

        async def brightness(x: int, y: int) -> float:
            left, top = observation.mapping.to_image(x, y)
            crop = await observer.region(observation, (left, top, 10, 10))
            return float(ImageStat.Stat(Image.open(io.BytesIO(crop)).convert("L")).mean[0])

        # the X server paints the window's background once it is mapped and moved: wait for it
        deadline = time.monotonic() + READY_TIMEOUT_S
        while (inside_window := await brightness(3450, 500)) <= 200:
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        beside_it = await brightness(3220, 320)  # the same monitor, off the window
    finally:
        observer.close()
    assert inside_window > 200 and beside_it < 60


async def test_a_point_on_the_apps_own_window_on_another_monitor_is_refused(
    monitors_desk: MonitorsSession, target: TargetWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop_agent.core.own_windows import own_window_refusal
    from desktop_agent.desktop.inventory.x11 import X11Inventory
    from desktop_agent.desktop.observer import DesktopObserver

    monkeypatch.setenv("DISPLAY", monitors_desk.display)
    # the target window made one of the app's own (its WM_CLASS), on the left-hand monitor
    target.window.set_wm_class("desktop-agent", "desktop-agent")
    target.display.sync()
    target.place(100, 100)
    # the work is on that monitor (the pointer's, as "auto" reads it beside an own window)
    observer = DesktopObserver(
        inventory_budget_s=2.0, guard_texts=False, backend=X11Inventory(),
        locate=lambda: (600, 500, 1, 1),
    )  # fmt: skip
    try:
        observation = await observer.observe()
        now = await observer.own_windows_now(observation)
    finally:
        observer.close()
    assert observation.layout is not None and observation.layout.shown.rect == LEFT_MONITOR
    x, y = observation.mapping.to_image(300, 250)  # inside the own window
    why = own_window_refusal("click", {"x": x, "y": y}, observation)
    assert why.startswith(f"the point ({x}, {y}) is on the app's own window")
    assert now is not None and now == observation.own_windows
    away = observation.mapping.to_image(1000, 900)  # the same monitor, off the window
    assert own_window_refusal("click", {"x": away[0], "y": away[1]}, observation) == ""
