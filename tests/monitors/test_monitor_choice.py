"""A run's own monitor choice (API, MCP, `run --monitor`) on three RandR monitors: the
observer shows that monitor for that run while its own setting holds for the others."""

from __future__ import annotations

import pytest

from desktop_agent.desktop.observer import DesktopObserver
from desktop_agent.eval.monitors_desk import MonitorsSession

#: the work (the active window, as the locator says) on the monitor left of the primary
LEFT = (0, 0, 1280, 1024)


async def test_a_runs_own_monitor_is_shown_and_the_observers_setting_holds_beside_it(
    monitors_desk: MonitorsSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    # only the capture's display (mss reads DISPLAY): this test sends no input
    monkeypatch.setenv("DISPLAY", monitors_desk.display)
    observer = DesktopObserver(
        monitor="auto", inventory=False, guard_texts=False, locate=lambda: (100, 100, 400, 300)
    )
    try:
        before = await observer.observe()
        third = await observer.showing(3).observe()
        everything = await observer.showing("all").observe()
        primary = await observer.showing("1").observe()
        after = await observer.observe()
    finally:
        observer.close()

    assert before.layout is not None and before.layout.shown.rect == LEFT
    assert third.layout is not None and third.layout.shown == third.layout.monitors[2]
    assert third.layout.shown.number == 3 and third.layout.shown.rect != LEFT
    shown = third.layout.shown
    assert third.mapping.to_screen(0, 0) == (shown.left, shown.top)
    assert everything.layout is not None and everything.layout.shown.number == 0
    # every monitor as one image: 4224 x 1080 desktop pixels, 1280 wide
    assert (everything.width, everything.height) == (1280, round(1280 * 1080 / 4224))
    assert primary.layout is not None and primary.layout.shown.rect == (1280, 0, 1920, 1080)
    assert after.layout is not None and after.layout.shown.rect == LEFT
