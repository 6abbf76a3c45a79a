"""The effect threshold on a real editor: what l3afpad shows when it changes and when not."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator

import pytest
from PIL import Image, ImageChops

from desktop_agent.core.effect import CHANGE_THRESHOLD, screen_change, visibly_changed
from desktop_agent.core.models import Observation
from desktop_agent.desktop import DesktopExecutor, DesktopObserver
from desktop_agent.desktop.inventory.x11 import X11Windows
from tests.desktop.conftest import Editor, act, wait_active
from tests.support.xdisplay import XSession


@pytest.fixture
async def desktop() -> AsyncIterator[tuple[DesktopObserver, DesktopExecutor]]:
    observer = DesktopObserver(fmt="png", inventory=False)
    executor = DesktopExecutor(observer=observer)
    yield observer, executor
    executor.close()
    observer.close()


def pixels_differ(a: Observation, b: Observation) -> bool:
    first = Image.open(io.BytesIO(a.image)).convert("RGB")
    second = Image.open(io.BytesIO(b.image)).convert("RGB")
    return ImageChops.difference(first, second).getbbox() is not None


PIXELS_CHANGE_WITHIN_S = 5.0


async def observe_until_pixels_change(
    observer: DesktopObserver, before: Observation
) -> list[Observation]:
    """Observations until one shows other pixels than `before` (that one last)."""
    seen: list[Observation] = []
    timeout = PIXELS_CHANGE_WITHIN_S
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen.append(await observer.observe())
        if pixels_differ(before, seen[-1]):
            return seen
        await asyncio.sleep(0.05)
    raise AssertionError(f"the screen did not change within {timeout:.0f} s")


async def observe_settled(observer: DesktopObserver, before: Observation) -> Observation:
    """The first observation after the screen changed from `before` and then held still for
    one observation: the application has drawn everything it was sent."""
    last = (await observe_until_pixels_change(observer, before))[-1]
    for _ in range(100):
        await asyncio.sleep(0.05)
        current = await observer.observe()
        if not pixels_differ(last, current):
            return current
        last = current
    raise AssertionError("the screen never held still")


async def observe_until_visibly_changed(
    observer: DesktopObserver, before: Observation, what: str
) -> float:
    for _ in range(100):
        after = await observer.observe()
        if visibly_changed(before.signature, after.signature):
            return screen_change(before.signature, after.signature)
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what} never crossed the threshold")


async def test_a_caret_blink_and_a_clock_tick_stay_below_the_threshold_a_word_and_a_menu_cross(
    xsession: XSession,
    l3afpad: Editor,
    windows: X11Windows,
    desktop: tuple[DesktopObserver, DesktopExecutor],
) -> None:
    observer, executor = desktop
    observation = await observer.observe()
    # (the editor has the focus; after a click into the text, or with the pointer resting
    # on it, GTK's caret stops blinking)
    await act(executor, "type_text", observation, text="The quick brown fox jumps at 12:59")
    await act(executor, "move_mouse", observation, x=20, y=20)

    # the caret blinks (GTK, about every 0.6 s) and the overlay scroll bar fades
    settled = await observe_settled(observer, observation)
    idle = await observe_until_pixels_change(observer, settled)
    for before, after in zip([settled, *idle], idle, strict=False):
        assert screen_change(before.signature, after.signature) < CHANGE_THRESHOLD

    # a clock tick: 12:59 becomes 13:00 in the same place
    before = await observer.observe()
    for _ in range(4):
        await act(executor, "hotkey", before, keys=["backspace"])
    await act(executor, "type_text", before, text="3:00")
    ticked = await observe_settled(observer, before)
    assert screen_change(before.signature, ticked.signature) < CHANGE_THRESHOLD

    # a typed word
    before = await observer.observe()
    await act(executor, "type_text", before, text=" hello")
    assert await observe_until_visibly_changed(observer, before, "a typed word") > 0

    # an opened menu
    before = await observer.observe()
    await act(executor, "hotkey", before, keys=["f10"])
    assert await observe_until_visibly_changed(observer, before, "an opened menu") > 0.005
    await act(executor, "hotkey", before, keys=["esc"])
    wait_active(windows, "l3afpad")
