"""The multi-monitor test desk itself: RandR (and so mss) sees each monitor where it was put."""

from __future__ import annotations

import mss
import pytest

from desktop_agent.core.models import MonitorArea
from desktop_agent.desktop.capture import ScreenCapture
from desktop_agent.eval.monitors_desk import THREE_MONITORS, MonitorsSession


def test_mss_lists_each_randr_monitor_where_xrandr_put_it(monitors_desk: MonitorsSession) -> None:
    with mss.MSS(display=monitors_desk.display.encode()) as screen:
        listed = [(m["left"], m["top"], m["width"], m["height"]) for m in screen.monitors[1:]]

    assert sorted(listed) == sorted(output.rect for output in THREE_MONITORS)


def test_the_capture_numbers_the_primary_1_and_notices_an_unplugged_monitor(
    monitors_desk: MonitorsSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    # only the capture's display (mss reads DISPLAY); not use_xsession, which refuses while
    # another test's pyautogui is bound to its own desk — this test sends no input
    monkeypatch.setenv("DISPLAY", monitors_desk.display)
    capture = ScreenCapture()
    try:
        before = capture.monitors()
        monitors_desk.unplug("DUMMY2")
        after = capture.monitors()
    finally:
        capture.close()

    assert before[1] == MonitorArea(1, 1280, 0, 1920, 1080, primary=True)
    assert [m.number for m in before] == [0, 1, 2, 3]
    assert sorted(m.rect for m in before[2:]) == [(0, 0, 1280, 1024), (3200, 300, 1024, 768)]
    # the layout is read again, not mss's cached first answer
    assert after[2:] == [MonitorArea(2, 0, 0, 1280, 1024)]
