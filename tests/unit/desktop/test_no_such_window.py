"""focus_window by a title no window has is the model's mistake, not the tool's: the
executor's error is a NoSuchTarget (the loop's breaker does not count it), naming the open
windows; a window manager that would not activate the window is the tool's failure."""

from __future__ import annotations

from typing import Any

import pytest

from desktop_agent.core.errors import NoSuchTarget, ToolError
from desktop_agent.desktop.inventory.base import NoSuchWindow
from desktop_agent.desktop.inventory.x11 import WindowInfo, activate_by_title
from tests.unit.desktop.fakes import FakeBackend, FakeDriver, executor_with
from tests.unit.desktop.test_executor import observed, run

EDITOR = WindowInfo(2, "notes.txt", "L3afpad", (0, 0, 600, 400), active=True)


class Windows:
    """X11Windows' reads activate_by_title makes: find (by title), windows, activate."""

    def __init__(self, windows: list[WindowInfo], *, activates: bool = True) -> None:
        self.listed, self.activates = windows, activates

    def find(self, title: str) -> WindowInfo | None:
        return next((w for w in self.listed if title.casefold() in w.title.casefold()), None)

    def windows(self) -> list[WindowInfo]:
        return list(self.listed)

    def activate(self, window: int) -> bool:
        return self.activates


def test_x11_names_the_open_windows_when_none_has_the_title() -> None:
    windows: Any = Windows([EDITOR])
    with pytest.raises(NoSuchWindow, match="^no window titled 'Paint'; open windows: \"notes.txt"):
        activate_by_title(windows, "Paint")
    failing: Any = Windows([EDITOR], activates=False)
    with pytest.raises(LookupError) as raised:
        activate_by_title(failing, "notes")
    assert not isinstance(raised.value, NoSuchWindow)  # the window manager's failure


async def test_focus_window_of_a_missing_title_is_not_the_tools_fault() -> None:
    observer, _ = await observed(FakeBackend())
    try:
        with pytest.raises(NoSuchTarget, match="no window titled 'missing'; open windows: none"):
            await run(
                executor_with(FakeDriver(), observer=observer), "focus_window", title="missing"
            )
    finally:
        observer.close()


async def test_another_lookup_failure_of_focus_window_stays_the_tools() -> None:
    class Refusing(FakeBackend):
        def activate_window(self, title: str) -> str:
            raise LookupError('the window manager did not activate "notes.txt"')

    observer, _ = await observed(Refusing())
    try:
        with pytest.raises(ToolError) as raised:
            await run(executor_with(FakeDriver(), observer=observer), "focus_window", title="notes")
    finally:
        observer.close()
    assert not isinstance(raised.value, NoSuchTarget)
