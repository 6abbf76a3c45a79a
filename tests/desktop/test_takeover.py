"""The takeover watch on a real X server: xdotool is the user, the real driver is the agent."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from desktop_agent.core.models import Observation
from desktop_agent.desktop import DesktopExecutor
from desktop_agent.desktop.input import PyAutoGuiDriver
from desktop_agent.desktop.inventory.x11 import X11Windows
from desktop_agent.desktop.takeover import (
    InjectionWindows,
    TakeoverUnavailable,
    TakeoverWatch,
    start_takeover_watch,
)
from tests.desktop.conftest import Editor, act, client_rect, wait_active
from tests.support.xdisplay import XSession, start_xsession, wait_until


@dataclass
class Reports:
    """What the watch called back, and on which threads."""

    threads: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self) -> None:
        with self.lock:
            self.threads.append(threading.current_thread().name)

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.threads)


@dataclass
class Agent:
    executor: DesktopExecutor
    observation: Observation
    injections: InjectionWindows


@pytest.fixture
def agent(xsession: XSession, l3afpad: Editor) -> Iterator[Agent]:
    """The real executor and driver, aimed at l3afpad's text area (identity mapping)."""
    injections = InjectionWindows()
    executor = DesktopExecutor(driver=PyAutoGuiDriver(injections))
    observation = Observation(b"", "image/png", xsession.width, xsession.height)
    yield Agent(executor, observation, injections)
    executor.close()


def watching(injections: InjectionWindows, reports: Reports) -> TakeoverWatch:
    return start_takeover_watch(reports, injections)


async def user(xsession: XSession, *command: str) -> None:
    """The user acting, through XTEST like a remote-control program."""
    process = await asyncio.create_subprocess_exec("xdotool", *command, env=xsession.child_env())
    assert await process.wait() == 0


def text_area_point(xsession: XSession, editor: Editor) -> tuple[int, int]:
    left, top, width, height = client_rect(xsession.display, editor.window.id)
    return left + width // 2, top + height // 2


async def agent_actions(agent: Agent, point: tuple[int, int]) -> None:
    """Several of each: clicks, pointer moves, typing, a pasted text, hotkeys, scrolls."""
    x, y = point
    for step in range(3):
        await act(agent.executor, "click", agent.observation, x=x + step * 7, y=y)
        await act(agent.executor, "move_mouse", agent.observation, x=x - step * 5, y=y + 9)
        await act(agent.executor, "type_text", agent.observation, text=f"word{step} ", enter=True)
        await act(agent.executor, "hotkey", agent.observation, keys=["ctrl", "a"])
        await act(agent.executor, "scroll", agent.observation, amount=-2)
    await act(agent.executor, "click", agent.observation, x=x, y=y, clicks=2)
    await act(agent.executor, "type_text", agent.observation, text="café ✓")  # the paste path


async def test_the_agents_own_input_through_the_real_driver_is_never_the_user(
    xsession: XSession, l3afpad: Editor, agent: Agent
) -> None:
    reports = Reports()
    # a control that does not know the agent's windows: it must see the same input
    blind = Reports()
    watch = watching(agent.injections, reports)
    control = watching(InjectionWindows(), blind)
    try:
        await agent_actions(agent, text_area_point(xsession, l3afpad))
        assert await asyncio.to_thread(watch.flush)
        assert await asyncio.to_thread(control.flush)
    finally:
        watch.stop()
        control.stop()

    assert blind.count > 0  # the agent's events did reach the watch...
    assert reports.count == 0  # ...and were all recognised as the agent's


@pytest.mark.parametrize(
    "gesture",
    [
        ("mousemove_relative", "--", "4", "3"),
        ("click", "1"),
        ("key", "x"),
        ("click", "4"),  # a scroll wheel step
    ],
    ids=["moves the mouse", "clicks", "types", "scrolls"],
)
async def test_the_user_acting_between_the_agents_actions_is_reported_every_time(
    xsession: XSession, l3afpad: Editor, agent: Agent, gesture: tuple[str, ...]
) -> None:
    reports = Reports()
    x, y = text_area_point(xsession, l3afpad)
    watch = watching(agent.injections, reports)
    assert watch.user_idle_s() == float("inf")
    try:
        for step in range(3):
            before = reports.count
            await act(agent.executor, "click", agent.observation, x=x + step, y=y)
            await act(agent.executor, "type_text", agent.observation, text="ab")
            assert await asyncio.to_thread(watch.flush)
            assert reports.count == before, f"the agent's step {step} was taken for the user"

            await user(xsession, *gesture)
            assert await asyncio.to_thread(watch.flush)
            assert reports.count > before, f"the user's {gesture} after step {step} was missed"
        assert watch.user_idle_s() < float("inf")
    finally:
        watch.stop()

    assert set(reports.threads) == {"takeover watch"}  # called from the watch's own thread


def keyboard_grabbed(display_name: str) -> bool:
    """Whether some client holds an active keyboard grab (a grab attempt says so)."""
    from Xlib import X, display

    connection = display.Display(display_name)
    try:
        status = connection.screen().root.grab_keyboard(
            False, X.GrabModeAsync, X.GrabModeAsync, X.CurrentTime
        )
        if status == X.GrabSuccess:
            connection.ungrab_keyboard(X.CurrentTime)
            connection.sync()
        return bool(status == X.AlreadyGrabbed)
    finally:
        connection.close()


async def test_the_user_is_seen_while_a_menu_the_agent_opened_grabs_the_input(
    xsession: XSession, l3afpad: Editor, agent: Agent, windows: X11Windows
) -> None:
    reports = Reports()
    watch = watching(agent.injections, reports)
    try:
        await act(agent.executor, "hotkey", agent.observation, keys=["f10"])  # opens "File"
        for _ in range(100):
            if keyboard_grabbed(xsession.display):
                break
            await asyncio.sleep(0.02)
        else:
            pytest.fail("the menu never grabbed the keyboard")
        assert await asyncio.to_thread(watch.flush)
        assert reports.count == 0

        await user(xsession, "key", "Escape")
        assert await asyncio.to_thread(watch.flush)
        assert reports.count > 0
    finally:
        watch.stop()
    wait_active(windows, "l3afpad")


def watch_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "takeover watch"]


async def test_stopping_the_watch_ends_its_thread_and_the_agent_input_goes_on(
    xsession: XSession, l3afpad: Editor, agent: Agent
) -> None:
    before = watch_threads()
    reports = Reports()
    watch = watching(agent.injections, reports)
    assert len(watch_threads()) == len(before) + 1

    watch.stop()
    watch.stop()  # twice is harmless

    assert watch_threads() == before
    assert not watch.flush()
    # the driver's windows no longer talk to the closed watch's connections
    x, y = text_area_point(xsession, l3afpad)
    result = await act(agent.executor, "click", agent.observation, x=x, y=y)
    assert result.ok


def test_without_a_display_the_watch_is_unavailable_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISPLAY")
    monkeypatch.setenv("XDG_SESSION_TYPE", "x11")  # not the Wayland reason (next test)
    with pytest.raises(TakeoverUnavailable, match="^no X display .*DISPLAY is not set$"):
        start_takeover_watch(lambda: None, InjectionWindows())

    # (a malformed name: python-xlib leaks the socket of a refused connection)
    monkeypatch.setenv("DISPLAY", "no-such-display")
    with pytest.raises(
        TakeoverUnavailable, match="^cannot open X display no-such-display: "
    ) as raised:
        start_takeover_watch(lambda: None, InjectionWindows())
    assert "\n" not in str(raised.value)


def test_on_wayland_without_xwayland_the_watch_says_wayland_is_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("DESKTOP_AGENT_DESKTOP", raising=False)
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")

    with pytest.raises(TakeoverUnavailable) as raised:
        start_takeover_watch(lambda: None, InjectionWindows())

    assert str(raised.value) == (
        "a Wayland session lets no program watch the person's input; stop a run with the "
        "desktop shortcut, the tray or the window"
    )


def test_the_x_server_going_away_ends_the_watch_and_leaves_the_agents_input_working(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    before = watch_threads()
    doomed = start_xsession(640, 480, atspi=False)
    try:
        monkeypatch.setenv("DISPLAY", doomed.display)
        injections = InjectionWindows()
        watch = start_takeover_watch(lambda: None, injections)
    finally:
        doomed.close()  # Xvfb ends: both of the watch's connections drop

    wait_until(lambda: watch_threads() == before, what="the watch thread to end")
    with injections.injecting():  # the fence is gone: the driver's windows go on
        pass
    assert not watch.flush()
    watch.stop()
    assert "takeover watch ended" in caplog.text
