"""A hung input or accessibility call fails its step; its thread is replaced (issue #10 item 8)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.errors import ToolError
from desktop_agent.core.models import Element, MonitorArea, Observation, ToolResult
from desktop_agent.core.ports import Focus, ToolContext
from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.focus import DesktopFocusProbe
from desktop_agent.desktop.input import Button
from desktop_agent.desktop.inventory import InventoryRunner, RawElement
from desktop_agent.desktop.observer import DesktopObserver
from tests.unit.desktop.fakes import FakeBackend, FakeCapture, FakeDriver, FakePaster

REGISTRY = builtin_registry()
OBSERVATION = Observation(
    image=b"jpeg",
    mime="image/jpeg",
    width=1280,
    height=720,
    elements=(Element(1, "button", "OK", (10, 10, 20, 20)),),
)


class HangingDriver(FakeDriver):
    """A driver whose first click blocks (a stuck XTEST / SendInput call) until released."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.threads: list[int] = []

    def click(self, x: int, y: int, button: Button, clicks: int) -> None:
        self.threads.append(threading.get_ident())
        if len(self.threads) == 1:
            self.release.wait(10)
            return
        super().click(x, y, button, clicks)


async def act(executor: DesktopExecutor, tool: str, **args: Any) -> ToolResult:
    spec, validated = REGISTRY.validate(tool, args)
    return await executor.execute(
        spec, validated, ToolContext("run", OBSERVATION, threading.Event())
    )


async def test_a_hung_input_call_fails_and_the_next_call_runs_on_a_new_thread() -> None:
    driver = HangingDriver()
    executor = DesktopExecutor(driver=driver, paster=FakePaster(), call_timeout_s=0.05)
    try:
        with pytest.raises(ToolError, match="did not finish in 0.05 s"):
            await act(executor, "click", x=5, y=5)
        # the next call is not queued behind the hung one
        result = await act(executor, "click", x=6, y=6)
    finally:
        driver.release.set()
        executor.close()
    assert result.ok
    assert driver.events == [("click", 6, 6, "left", 1)]
    assert executor.abandoned_input_threads == 1
    assert len(set(driver.threads)) == 2


class HangingBackend(FakeBackend):
    """An accessibility backend whose first invoke blocks until released."""

    def __init__(self) -> None:
        super().__init__([RawElement("button", "OK", (10, 10, 20, 20), native="ok")])
        self.release = threading.Event()
        self.invokes = 0

    def invoke(self, native: Any) -> str:
        self.invokes += 1
        if self.invokes == 1:
            self.release.wait(10)
        return super().invoke(native)


async def test_a_hung_accessibility_call_fails_and_the_inventory_thread_is_replaced() -> None:
    backend = HangingBackend()
    observer = DesktopObserver(
        backend=backend, capture=FakeCapture(MonitorArea(1, 0, 0, 1920, 1080), (1920, 1080))
    )
    executor = DesktopExecutor(
        observer=observer,
        driver=FakeDriver(),
        paster=FakePaster(),
        call_timeout_s=0.05,
    )
    try:
        observation = await observer.observe()
        spec, args = REGISTRY.validate("invoke", {"element": 1})
        context = ToolContext("run", observation, threading.Event())
        with pytest.raises(ToolError, match="accessibility call did not finish"):
            await executor.execute(spec, args, context)
        # what the hung thread listed is not used again: the model observes again
        with pytest.raises(ToolError, match="hung and was replaced; observe again"):
            await executor.execute(spec, args, context)
        again = ToolContext("run", await observer.observe(), threading.Event())
        result = await executor.execute(spec, args, again)
    finally:
        backend.release.set()
        executor.close()
        observer.close()
    assert result.ok
    assert backend.actions == [("invoke", "ok")]
    assert observer.inventory is not None and observer.inventory.abandoned == 1
    assert len(backend.threads) == 2  # the backend was set up again on the new thread


async def test_the_focus_probe_answers_none_when_the_inventory_thread_is_stuck() -> None:
    release = threading.Event()
    runner = InventoryRunner(FakeBackend())
    runner.submit(lambda _backend: release.wait(10))  # something else hangs the thread
    try:
        assert await DesktopFocusProbe(runner, timeout_s=0.05).focused() == Focus()
        assert runner.abandoned == 1
    finally:
        release.set()
        runner.close()


async def test_the_focus_probe_of_a_window_list_backend_knows_no_role() -> None:
    runner = InventoryRunner(FakeBackend(name="x11"))
    try:
        assert (await DesktopFocusProbe(runner).focused()).role is None
    finally:
        runner.close()


async def test_input_tools_give_the_app_time_to_repaint_before_they_count_as_done() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    executor = DesktopExecutor(
        driver=FakeDriver(),
        paster=FakePaster(),
        settle_s=0.1,
        sleep=sleep,
    )
    try:
        await act(executor, "click", x=5, y=5)
        await act(executor, "hotkey", keys=["ctrl", "s"])
        assert slept == [0.1, 0.1]
        await act(executor, "wait", seconds=0)  # waiting is not input: no settle after it
        assert slept == [0.1, 0.1]
    finally:
        executor.close()


class StuckAfterThreeKeys(FakeDriver):
    """Its fourth key press hangs (a stuck XTEST call) until `release`."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def press(self, key: str) -> None:
        if len(self.presses) == 3:
            self.release.wait(10)
        super().press(key)


async def test_a_typing_call_given_up_by_its_deadline_types_no_key_after_it() -> None:
    """The step failed and the run went on (or ended): the abandoned thread, once its stuck
    key comes back, must not type the rest of the text into whatever has the focus then."""
    driver = StuckAfterThreeKeys()
    executor = DesktopExecutor(driver=driver, paster=FakePaster(), call_timeout_s=0.05)
    abandoned = executor._input
    try:
        with pytest.raises(ToolError, match="did not finish in 0.05 s"):
            await act(executor, "type_text", text="abcdefghijklmnopqrstuvwxyz")
        driver.release.set()
        abandoned.shutdown(wait=True)  # the abandoned thread has come back and ended
    finally:
        executor.close()

    assert driver.presses == list("abcd")  # the stuck key went out when it came back; no more


async def test_an_accessibility_action_given_up_behind_a_hung_call_is_never_done() -> None:
    """The action waited behind a hung walk past its deadline: the step failed and the run
    went on. When the walk comes back, the action queued behind it must not be done then (it
    holds: the deadline cancels the asyncio wrapper, which cancels the queued future)."""
    backend = FakeBackend([RawElement("button", "OK", (10, 10, 20, 20), native="ok")])
    observer = DesktopObserver(
        backend=backend, capture=FakeCapture(MonitorArea(1, 0, 0, 1920, 1080), (1920, 1080))
    )
    executor = DesktopExecutor(driver=FakeDriver(), paster=FakePaster(), call_timeout_s=0.05)
    executor.observer = observer
    walk_returns = threading.Event()
    try:
        observation = await observer.observe()
        inventory = observer.inventory
        assert inventory is not None
        old_thread = inventory._thread.pool
        inventory.submit(lambda _backend: walk_returns.wait(10))  # a walk that hangs
        spec, args = REGISTRY.validate("invoke", {"element": 1})
        context = ToolContext("run", observation, threading.Event())
        with pytest.raises(ToolError, match="accessibility call did not finish"):
            await executor.execute(spec, args, context)
        walk_returns.set()
        await asyncio.to_thread(old_thread.shutdown, True)  # it has run what was queued on it
    finally:
        walk_returns.set()
        executor.close()
        observer.close()
    assert backend.actions == []
