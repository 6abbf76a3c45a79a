"""The clicks of a double or triple click land on what was judged or not at all: a click that
brings up a window under the point (a dialog whose button lies there) or takes the window
there away ends the clicks after it, the step failed with one line saying how far they got."""

from __future__ import annotations

import threading

import pytest

from desktop_agent.core.errors import DesktopChanged, ToolError
from desktop_agent.desktop.executor import (
    CLICKS_ENDED,
    UNDER_POINT_UNREAD,
    DesktopExecutor,
    window_at_point_of,
)
from desktop_agent.desktop.input import Button, PyAutoGuiDriver
from desktop_agent.desktop.inventory.x11 import X11WindowAtPoint
from tests.unit.desktop.fakes import FakeDriver, executor_with
from tests.unit.desktop.test_executor import run


class Desk:
    """The top-level window at each point, as X11WindowAtPoint names it; `answers` False: a
    read that fails (a broken X connection)."""

    def __init__(self) -> None:
        self.window = "x11:4194311"  # the file manager under the point
        self.answers = True
        self.reads: list[tuple[int, int]] = []
        #: the threads that read it and closed it
        self.readers: set[str] = set()
        self.closer = ""
        self.closed = threading.Event()

    def __call__(self, x: int, y: int) -> str | None:
        self.reads.append((x, y))
        self.readers.add(threading.current_thread().name)
        return self.window if self.answers else None

    def close(self) -> None:
        self.closer = threading.current_thread().name
        self.closed.set()


class ClickBringsUpADialog(FakeDriver):
    """Click number `at` makes `change` happen on the desk (a dialog maps under the point)."""

    def __init__(self, desk: Desk, at: int, change: str = "dialog") -> None:
        super().__init__()
        self.desk, self.at, self.change = desk, at, change

    def click(self, x: int, y: int, button: Button, clicks: int) -> None:
        super().click(x, y, button, clicks)
        if len(self.events) == self.at:
            if self.change == "dialog":
                self.desk.window = "x11:6291459"
            else:
                self.desk.answers = False


def on(driver: FakeDriver, desk: Desk) -> DesktopExecutor:
    executor = executor_with(driver)
    executor.window_at = desk
    return executor


async def test_a_dialog_that_came_up_under_the_point_gets_no_second_click() -> None:
    desk = Desk()
    driver = ClickBringsUpADialog(desk, at=1)
    # the desktop's doing, not a broken click: the loop's breaker does not count it
    with pytest.raises(DesktopChanged) as raised:
        await run(on(driver, desk), "click", x=640, y=360, clicks=2)
    assert len(driver.events) == 1
    assert str(raised.value) == (
        "after 1 of 2 clicks the window under the point changed (a window came up or went away"
        " there), so no more were sent (the next could land on what nobody judged)"
    )


async def test_a_triple_click_stops_where_the_window_under_it_changed() -> None:
    desk = Desk()
    driver = ClickBringsUpADialog(desk, at=2)
    with pytest.raises(ToolError, match="^after 2 of 3 clicks the window under the point changed"):
        await run(on(driver, desk), "click", x=640, y=360, clicks=3)
    assert len(driver.events) == 2


async def test_an_ordinary_double_click_reads_the_point_once_before_and_once_between() -> None:
    desk = Desk()
    driver = FakeDriver()
    result = await run(on(driver, desk), "click", x=640, y=360, clicks=2)
    assert result.summary == "clicked (640, 360) twice"
    assert driver.events == [("click", -960, 540, "left", 1)] * 2
    # at the screen point the driver clicks, not the screenshot's
    assert desk.reads == [(-960, 540)] * 2


async def test_the_read_is_closed_with_the_executor_on_the_thread_that_reads_it() -> None:
    # its X connection is never closed under a read of the input thread, nor on the caller's
    desk = Desk()
    await run(on(FakeDriver(), desk), "click", x=640, y=360, clicks=2)  # run() closes it
    assert desk.closed.wait(5)
    assert desk.readers == {desk.closer}
    assert desk.closer != threading.current_thread().name


async def test_a_single_click_reads_nothing() -> None:
    desk = Desk()
    await run(on(FakeDriver(), desk), "click", x=640, y=360)
    assert desk.reads == []


async def test_a_read_that_fails_between_the_clicks_stops_them() -> None:
    desk = Desk()
    driver = ClickBringsUpADialog(desk, at=1, change="read fails")
    with pytest.raises(ToolError) as raised:
        await run(on(driver, desk), "click", x=640, y=360, clicks=2)
    assert len(driver.events) == 1
    assert str(raised.value) == CLICKS_ENDED.format(done=1, clicks=2, why=UNDER_POINT_UNREAD)
    # a read that fails may be ours (a broken X connection): the breaker counts it
    assert not isinstance(raised.value, DesktopChanged)


async def test_a_desk_that_cannot_tell_the_window_at_the_point_clicks_unchecked() -> None:
    # no read before the first click (no X display): nothing to compare, as on Windows or
    # Wayland (docs/architecture.md, "Between the clicks of a double click")
    desk = Desk()
    desk.answers = False
    driver = FakeDriver()
    await run(on(driver, desk), "click", x=640, y=360, clicks=3)
    assert len(driver.events) == 3
    assert len(desk.reads) == 1


def test_pyautogui_on_an_x_display_reads_the_x11_window_and_other_drivers_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert isinstance(window_at_point_of(PyAutoGuiDriver()), X11WindowAtPoint)
    assert window_at_point_of(FakeDriver()) is None
    # on Windows, user32's read: tests/unit/desktop/test_win_window_at_point.py


def test_the_x11_read_without_a_display_tells_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    read = X11WindowAtPoint()
    assert read(10, 10) is None
    read.close()


async def test_an_executor_closed_twice_raises_nothing_the_second_time() -> None:
    desk = Desk()
    executor = on(FakeDriver(), desk)
    await run(executor, "click", x=640, y=360, clicks=2)  # run() closes it
    executor.close()
    assert desk.closed.wait(5)
