"""A pointer call aimed at a monitor that went away since the screen was seen is not sent,
and says so as a desktop that changed (errors.DesktopChanged): the step fails, but the
loop's breaker does not count it against the tool (tests/unit/core/test_loop_failures.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from desktop_agent.core.errors import DesktopChanged
from desktop_agent.core.models import MonitorArea, ScreenLayout
from tests.unit.desktop.fakes import FakeDriver, executor_with
from tests.unit.desktop.test_executor import context, observation, run

PRIMARY = MonitorArea(1, 0, 0, 1920, 1080, primary=True)
LEFT = MonitorArea(2, -1920, 0, 1920, 1080)


class Monitors:
    """The observer's `monitors_now` (DesktopObserver.monitors_now): the layout now."""

    def __init__(self, *monitors: MonitorArea) -> None:
        self.layout = ScreenLayout(shown=monitors[0], monitors=monitors)

    async def monitors_now(self) -> ScreenLayout:
        return self.layout


async def test_a_click_on_a_monitor_unplugged_since_the_look_is_a_desktop_change() -> None:
    driver = FakeDriver()
    executor = executor_with(driver, observer=Monitors(PRIMARY))  # type: ignore[arg-type]
    seen = replace(observation(), layout=ScreenLayout(shown=LEFT, monitors=(PRIMARY, LEFT)))

    with pytest.raises(DesktopChanged, match="is gone or moved since the screen was seen"):
        await run(executor, "click", context(seen), x=640, y=360)
    assert driver.events == []


async def test_a_click_on_a_monitor_still_there_is_sent() -> None:
    driver = FakeDriver()
    monitors: Any = Monitors(PRIMARY, LEFT)
    seen = replace(observation(), layout=ScreenLayout(shown=LEFT, monitors=(PRIMARY, LEFT)))

    await run(executor_with(driver, observer=monitors), "click", context(seen), x=640, y=360)
    assert driver.events == [("click", -960, 540, "left", 1)]
