"""A double click whose first click brings up a window under the point: the second click is
not sent onto it (nobody judged a click there), counted by the X server. The window is the
test's own X client's, mapped right after the first click went out, as a dialog whose button
lies under the point would be; the clicks underneath land on tests/support's InputRecorder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from desktop_agent.core.errors import ToolError
from desktop_agent.core.models import Observation
from desktop_agent.desktop.executor import (
    CLICKS_ENDED,
    UNDER_POINT_CHANGED,
    DesktopExecutor,
)
from desktop_agent.desktop.input import Button, PyAutoGuiDriver
from tests.desktop.conftest import act
from tests.support.input_recorder import InputRecorder
from tests.support.xdisplay import XSession, wait_until

#: where the double click goes (the recorder covers the whole 1920x1080 screen)
POINT = (400, 300)
#: a screen shown as it is: the screenshot's pixels are the screen's
SCREEN = Observation(b"", "image/png", 1920, 1080)


class Dialog:
    """An override-redirect window of its own X connection around POINT, mapped on `show`,
    counting the button presses the server delivers to it."""

    def __init__(self, display_name: str) -> None:
        from Xlib import X, display

        self.display = display.Display(display_name)
        screen = self.display.screen()
        self.window = screen.root.create_window(
            POINT[0] - 150,
            POINT[1] - 50,
            300,
            100,
            0,
            screen.root_depth,
            background_pixel=screen.black_pixel,
            override_redirect=True,
            event_mask=X.ButtonPressMask,
        )
        self.display.sync()
        self.pressed = 0

    def show(self) -> None:
        from Xlib import X

        self.window.map()
        self.display.sync()
        wait_until(
            lambda: self.window.get_attributes().map_state == X.IsViewable,
            what="the dialog to map",
        )

    def presses(self) -> int:
        from Xlib import X

        self.display.sync()
        while self.display.pending_events():
            event: Any = self.display.next_event()
            self.pressed += event.type == X.ButtonPress
        return self.pressed

    def close(self) -> None:
        self.window.destroy()
        self.display.close()


class DialogOnFirstClick(PyAutoGuiDriver):
    """The desktop's driver, with `dialog` coming up once its first click went out."""

    def __init__(self, dialog: Dialog | None) -> None:
        super().__init__()
        self.dialog = dialog
        self.clicks = 0

    def click(self, x: int, y: int, button: Button, clicks: int) -> None:
        super().click(x, y, button, clicks)
        self.clicks += 1
        if self.clicks == 1 and self.dialog is not None:
            self.dialog.show()


@pytest.fixture
def recorder(xsession: XSession) -> Iterator[InputRecorder]:
    recording = InputRecorder(xsession.display)
    yield recording
    recording.close()


@pytest.fixture
def dialog(xsession: XSession) -> Iterator[Dialog]:
    window = Dialog(xsession.display)
    yield window
    window.close()


def button_presses(recorder: InputRecorder) -> int:
    recorder.mark()  # what the executor sent before it returned is before the mark
    return sum(event.kind == "button_press" for event in recorder.sync())


async def test_a_window_that_came_up_under_the_point_gets_no_second_click(
    recorder: InputRecorder, dialog: Dialog
) -> None:
    executor = DesktopExecutor(driver=DialogOnFirstClick(dialog), settle_s=0)
    try:
        with pytest.raises(ToolError) as raised:
            await act(executor, "click", SCREEN, x=POINT[0], y=POINT[1], clicks=2)
    finally:
        executor.close()

    assert str(raised.value) == CLICKS_ENDED.format(done=1, clicks=2, why=UNDER_POINT_CHANGED)
    assert button_presses(recorder) == 1
    assert dialog.presses() == 0
    assert recorder.buttons_held() == 0


async def test_a_double_click_where_nothing_came_up_is_two_clicks(
    recorder: InputRecorder,
) -> None:
    executor = DesktopExecutor(driver=DialogOnFirstClick(None), settle_s=0)
    try:
        result = await act(executor, "click", SCREEN, x=POINT[0], y=POINT[1], clicks=2)
    finally:
        executor.close()

    assert result.summary == f"clicked ({POINT[0]}, {POINT[1]}) twice"
    assert button_presses(recorder) == 2
