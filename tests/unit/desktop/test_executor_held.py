"""Input a tool holds (hold_key, mouse_down) is always let go: after its time, on a stop, at
the run's end (release_held); and cursor_position reads the pointer without input."""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

import pytest

from desktop_agent.core.errors import StopRequested, ToolError
from desktop_agent.core.models import Observation
from desktop_agent.desktop.executor import DesktopExecutor
from tests.unit.desktop.fakes import FakeDriver, executor_with
from tests.unit.desktop.test_executor import MAPPING, REGISTRY, context, observation, run


async def act(executor: DesktopExecutor, tool: str, **args: object) -> None:
    """`tool` run, the executor left open (`run` closes it)."""
    spec, validated = REGISTRY.validate(tool, args)
    assert (await executor.execute(spec, validated, context())).ok


async def test_hold_key_holds_each_key_for_its_time_then_lets_them_go_last_first() -> None:
    driver = FakeDriver()

    result = await run(executor_with(driver), "hold_key", keys=["ctrl", "shift"], seconds=0.05)

    assert result.ok and result.summary == "held ctrl+shift for 0.05 s"
    assert driver.events == [
        ("key_down", "ctrl"),
        ("key_down", "shift"),
        ("key_up", "shift"),
        ("key_up", "ctrl"),
    ]


async def test_a_stop_while_keys_are_held_lets_them_go_at_once() -> None:
    cancelled = threading.Event()

    def cancel_at_b(key: str) -> None:
        if key == "b":
            cancelled.set()

    driver = FakeDriver(on_key_down=cancel_at_b)
    started = time.monotonic()

    with pytest.raises(StopRequested, match=r"while holding a\+b \(let go\)"):
        await run(
            executor_with(driver), "hold_key", context(cancelled=cancelled), keys=["a", "b"],
            seconds=10,
        )  # fmt: skip

    assert time.monotonic() - started < 5  # not the 10 s it was asked to hold
    assert driver.events[-2:] == [("key_up", "b"), ("key_up", "a")]


async def test_a_stop_before_the_second_key_lets_the_first_go_and_presses_no_more() -> None:
    cancelled = threading.Event()
    driver = FakeDriver(on_key_down=lambda key: cancelled.set())

    with pytest.raises(StopRequested):
        await run(
            executor_with(driver), "hold_key", context(cancelled=cancelled),
            keys=["shift", "a", "b"], seconds=10,
        )  # fmt: skip

    assert driver.events == [("key_down", "shift"), ("key_up", "shift")]


async def test_a_held_button_stays_down_until_release_held_lets_it_go() -> None:
    driver = FakeDriver()
    executor = executor_with(driver)
    spec_args = {"x": 100, "y": 50}

    await act(executor, "mouse_down", **spec_args)
    pressed = list(driver.events)
    released = await executor.release_held()
    again = await executor.release_held()
    executor.close()

    # (100, 50) on the 1.5-scaled monitor left of the primary
    assert pressed == [("move", -1770, 75), ("down", -1770, 75, "left")]
    assert driver.events[-1] == ("up", -1770, 75, "left")
    assert released == "released the left button held at (-1770, 75)"
    assert again == ""


async def test_mouse_up_lets_go_where_it_is_asked_and_nothing_is_left_to_release() -> None:
    driver = FakeDriver()
    executor = executor_with(driver)

    await act(executor, "mouse_down", x=100, y=50)
    await act(executor, "mouse_up", x=200, y=50)

    assert driver.events[-2:] == [("move", -1620, 75), ("up", -1620, 75, "left")]
    assert await executor.release_held() == ""
    executor.close()


def test_closing_the_executor_lets_a_held_button_go() -> None:
    driver = FakeDriver()
    executor = executor_with(driver)
    spec, args = REGISTRY.validate("mouse_down", {"x": 100, "y": 50})
    asyncio.run(executor.execute(spec, args, context()))

    executor.close()

    assert driver.events[-1] == ("up", -1770, 75, "left")


async def test_a_mouse_down_stopped_before_the_press_presses_nothing() -> None:
    cancelled = threading.Event()
    driver = FakeDriver()
    original = driver.move

    def move_then_stop(x: int, y: int) -> None:
        original(x, y)
        cancelled.set()

    driver.move = move_then_stop  # type: ignore[method-assign]
    executor = executor_with(driver)

    with pytest.raises(StopRequested, match="before the button went down"):
        await run(executor, "mouse_down", context(cancelled=cancelled), x=100, y=50)

    assert [event[0] for event in driver.events] == ["move"]
    assert await executor.release_held() == ""


async def test_cursor_position_answers_in_screenshot_pixels_without_input() -> None:
    driver = FakeDriver()

    async def pointer_now(obs: Observation) -> tuple[int, int] | None:
        return (640, 360)

    observer = SimpleNamespace(pointer_now=pointer_now, inventory=None)
    executor = executor_with(driver, observer=observer)  # type: ignore[arg-type]

    result = await run(executor, "cursor_position")

    assert result.summary == "the pointer is at (640, 360)" and result.target == (640, 360)
    assert driver.events == []


async def test_cursor_position_that_cannot_be_read_is_a_clear_tool_error() -> None:
    async def pointer_now(obs: Observation) -> tuple[int, int] | None:
        return None

    observer = SimpleNamespace(pointer_now=pointer_now, inventory=None)
    executor = executor_with(FakeDriver(), observer=observer)  # type: ignore[arg-type]

    with pytest.raises(ToolError, match="the pointer cannot be read now"):
        await run(executor, "cursor_position", context(observation(mapping=MAPPING)))
