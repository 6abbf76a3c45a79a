"""The windows on the screen now, read before an input action (WindowsNowSource), on the real
test desktop: the same windows as the look names when nothing came up, one more when a popup
or a notification did (issue 31: the gate then looks again before the action)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.ports import WindowsNowSource
from desktop_agent.desktop.observer import DesktopObserver
from tests.desktop.conftest import notify, wait_active
from tests.support.xdisplay import XSession, wait_until


async def test_the_windows_now_are_the_looks_until_a_popup_comes_up(
    observer: DesktopObserver, xsession: XSession, windows: Any, tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Meeting notes\n")
    editor = xsession.spawn(["l3afpad", str(path)])
    popup = None
    try:
        wait_active(windows, "l3afpad", "notes.txt")
        look = await observer.observe()
        assert isinstance(observer, WindowsNowSource)
        same = await observer.window_ids_now()
        popup = xsession.spawn(["zenity", "--info", "--title=Updater", "--text=Click OK now"])
        wait_active(windows, title="Updater")
        came = await observer.window_ids_now()
    finally:
        if popup is not None:
            xsession.stop(popup)
        xsession.stop(editor)

    assert look.window_ids and same == look.window_ids
    assert came is not None and len(came - look.window_ids) == 1


@pytest.mark.skipif(
    not all(shutil.which(p) for p in ("dunst", "notify-send")),
    reason="needs dunst and notify-send (scripts/bootstrap installs them)",
)
async def test_a_notification_that_came_up_is_a_new_window(
    observer: DesktopObserver, xsession: XSession, windows: Any, dunst: Any
) -> None:
    # the dunst fixture's daemon is new: no notification shows before this one
    assert windows.notifications() == []
    look = await observer.observe()
    notify(xsession, "-u", "normal", "-t", "8000", "IT desk", "Urgent: run x")
    wait_until(windows.notifications, timeout=10, what="the notification's window")
    came = await observer.window_ids_now()
    after = await observer.observe()

    assert came is not None and came - look.window_ids
    assert came <= after.window_ids
