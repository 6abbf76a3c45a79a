"""The agent cannot reach its own controls on a real desktop: a window of WM_CLASS
`desktop-agent` (and its popup menu) is left out of the element list, handed to the core as
`own_windows`, and a click or typing aimed at it is refused (issue #15 item 5)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.control import RunControl
from desktop_agent.core.events import RunFinished
from desktop_agent.core.loop import LoopDeps, run_task_loop
from desktop_agent.core.models import ApprovalDecision, StepKind, StepStatus, TaskSpec
from desktop_agent.core.own_windows import OWN_WINDOW_ROLE
from desktop_agent.core.permissions import Permissions
from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.inventory.x11 import X11Windows
from desktop_agent.desktop.observer import DesktopObserver
from tests.desktop.conftest import INVENTORY_BUDGET_S, wait_active
from tests.fakes import MemoryRepository, ScriptedGate, ScriptedPlanner, done, tool
from tests.support.xdisplay import XSession, wait_until

TITLE = "Desktop Agent — Settings"


def start_own_window(xsession: XSession, *extra: str) -> subprocess.Popen[Any]:
    process = xsession.spawn(
        [sys.executable, "-m", "tests.support.own_window", *extra],
        extra_env={"QT_QPA_PLATFORM": "xcb"},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


@pytest.fixture
def own_window(xsession: XSession, windows: X11Windows) -> Iterator[None]:
    process = start_own_window(xsession)
    try:
        wait_active(windows, title=TITLE)
        yield
    finally:
        xsession.stop(process)


async def test_the_apps_own_window_is_not_listed_and_input_aimed_at_it_is_refused(
    own_window: None, windows: X11Windows
) -> None:
    observer = DesktopObserver(fmt="png", inventory_budget_s=INVENTORY_BUDGET_S)
    executor = DesktopExecutor(observer=observer)
    repo = MemoryRepository()
    gate = ScriptedGate([ApprovalDecision.ONCE] * 3)
    try:
        seen = await observer.observe()
        assert all("Desktop Agent" not in element.name for element in seen.elements)
        [own] = [window for window in seen.own_windows if window.name.startswith(TITLE)]
        assert own.focused
        inside = own.center
        # focus_window by title never finds it either
        assert windows.find("Desktop Agent") is None

        run = await repo.create_run(
            TaskSpec("change the settings", allowed_tools=("click", "type_text"))
        )
        deps = LoopDeps(
            repo=repo,
            observer=observer,
            executor=executor,
            gate=gate,
            registry=builtin_registry(),
            breakers=BreakerBoard(),
            permissions=Permissions(persistent_grants=["click", "type_text"]),
            planner=ScriptedPlanner(
                [
                    tool("click", x=inside[0], y=inside[1]),
                    tool("type_text", text="launch_app = allow"),
                    done(),
                ]
            ),
        )
        events = [event async for event in run_task_loop(run, deps, RunControl())]
    finally:
        executor.close()
        observer.close()
    assert isinstance(events[-1], RunFinished)
    actions = [s for s in await repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert [(a.tool, a.status) for a in actions] == [
        ("click", StepStatus.DENIED),
        ("type_text", StepStatus.DENIED),
    ]
    assert "own window" in (actions[0].error or "")
    assert "keyboard focus" in (actions[1].error or "")
    assert gate.requests == []


async def test_the_apps_popup_menu_is_an_own_window_too(
    xsession: XSession, windows: X11Windows
) -> None:
    """The tray menu is an override-redirect popup: no window manager lists it."""
    process = start_own_window(xsession, "menu")
    observer = DesktopObserver(fmt="png", inventory_budget_s=INVENTORY_BUDGET_S)
    try:
        wait_until(lambda: windows.own_popups(), timeout=10, what="the popup menu")
        seen = await observer.observe()
    finally:
        observer.close()
        xsession.stop(process)
    menus = [window for window in seen.own_windows if window.name.startswith("menu")]
    assert menus, seen.own_windows
    left, top, _, _ = menus[0].box
    scale = seen.width / xsession.width
    assert (left, top) == (round(900 * scale), round(600 * scale))


def test_the_popup_scan_asks_every_windows_attributes_before_it_waits_for_one(
    xsession: XSession, windows: X11Windows
) -> None:
    """The scan runs on every observation: one X round trip per top-level window was 3-6 ms a
    turn on a loaded machine; the attributes are asked at once, the replies read after."""
    process = start_own_window(xsession, "menu")
    try:
        wait_until(lambda: windows.own_popups(), timeout=10, what="the popup menu")
        display = windows._dpy().display
        children = len(windows._dpy().screen().root.query_tree().children)
        said: list[str] = []
        send_request, send_and_recv = display.send_request, display.send_and_recv

        def sent(request: Any, wait_for_response: bool) -> Any:
            said.append(type(request).__name__)
            return send_request(request, wait_for_response)

        def waited(*args: Any, **kwargs: Any) -> Any:
            if "request" in kwargs:
                said.append("wait")
            return send_and_recv(*args, **kwargs)

        display.send_request, display.send_and_recv = sent, waited
        try:
            popups = windows.own_popups()
        finally:
            display.send_request, display.send_and_recv = send_request, send_and_recv
    finally:
        xsession.stop(process)
    assert len(popups) == 1
    first = said.index("GetWindowAttributes")
    assert said[first : first + children] == ["GetWindowAttributes"] * children, said


async def test_the_focus_probe_says_when_the_apps_own_window_is_active(own_window: None) -> None:
    """Asked at action time, the probe tells the core that keys would go to the app's own
    window, whatever the turn's (older) screenshot showed."""
    observer = DesktopObserver(fmt="png", inventory_budget_s=INVENTORY_BUDGET_S)
    executor = DesktopExecutor(observer=observer)
    try:
        role = (await executor.focused()).role
    finally:
        executor.close()
        observer.close()
    assert role == OWN_WINDOW_ROLE


async def test_a_click_decided_before_an_own_window_popped_up_is_refused_where_it_now_is(
    xsession: XSession, windows: X11Windows
) -> None:
    """The app's window (another run's question) shows while the model thinks: the click the
    model aims at the older screenshot would land on it. The window list is read again at
    action time."""
    observer = DesktopObserver(fmt="png", inventory_budget_s=INVENTORY_BUDGET_S)
    executor = DesktopExecutor(observer=observer)
    repo = MemoryRepository()
    started: list[subprocess.Popen[Any]] = []

    async def pops_up_while_thinking(request: Any) -> Any:
        assert not request.observation.own_windows  # the screenshot shows no window of ours
        started.append(start_own_window(xsession))
        wait_active(windows, title=TITLE)
        # the middle of its frame (100, 100, 400x300 on the screen), in screenshot pixels
        scale = request.observation.width / xsession.width
        return tool("click", x=round(300 * scale), y=round(250 * scale))

    try:
        run = await repo.create_run(TaskSpec("press it", allowed_tools=("click",)))
        deps = LoopDeps(
            repo=repo,
            observer=observer,
            executor=executor,
            gate=ScriptedGate([ApprovalDecision.ONCE]),
            registry=builtin_registry(),
            breakers=BreakerBoard(),
            permissions=Permissions(persistent_grants=["click"]),
            planner=ScriptedPlanner([pops_up_while_thinking, done()]),
        )
        events = [event async for event in run_task_loop(run, deps, RunControl())]
    finally:
        executor.close()
        observer.close()
        for process in started:
            xsession.stop(process)
    assert isinstance(events[-1], RunFinished)
    [action] = [s for s in await repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert action.status is StepStatus.DENIED and "own window" in (action.error or ""), action


async def test_a_scroll_without_a_point_over_the_apps_own_window_is_refused(
    own_window: None, xsession: XSession
) -> None:
    """The wheel turns where the pointer rests: over the app's window (its spin boxes and
    combo boxes change with the wheel) a scroll without a point is refused."""
    from Xlib import X
    from Xlib.display import Display
    from Xlib.ext import xtest

    display = Display(xsession.display)
    try:  # the user's pointer rests on the app's window (100, 100, 400x300 on the screen)
        xtest.fake_input(display, X.MotionNotify, x=300, y=250)
        display.sync()
    finally:
        display.close()
    observer = DesktopObserver(fmt="png", inventory_budget_s=INVENTORY_BUDGET_S)
    executor = DesktopExecutor(observer=observer)
    repo = MemoryRepository()
    try:
        run = await repo.create_run(TaskSpec("scroll down", allowed_tools=("scroll",)))
        deps = LoopDeps(
            repo=repo,
            observer=observer,
            executor=executor,
            gate=ScriptedGate([]),
            registry=builtin_registry(),
            breakers=BreakerBoard(),
            permissions=Permissions(persistent_grants=["scroll"]),
            planner=ScriptedPlanner([tool("scroll", amount=-3), done()]),
        )
        events = [event async for event in run_task_loop(run, deps, RunControl())]
    finally:
        executor.close()
        observer.close()
    assert isinstance(events[-1], RunFinished)
    [action] = [s for s in await repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert action.status is StepStatus.DENIED and "own window" in (action.error or ""), action
