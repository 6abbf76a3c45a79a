"""No input while a run is paused (the window's Pause, the tray, the API, the user taking over
the mouse or keyboard), including an action the model already decided: a pause that lands
while its row is stored, while the input thread gets ready, or while it types, sends nothing
more; the action's row says it was paused, and the turn after the resume decides afresh.

The real DesktopExecutor runs the tools here (over a recording driver), as the loop hands it
its ToolContext.
"""

from __future__ import annotations

import asyncio
import threading

from desktop_agent.core.events import RunFinished, StepFinished, TaskLoopEvent
from desktop_agent.core.models import Policy, RunStatus, StepKind, StepStatus
from tests.fakes import ScriptedPlanner, done, tool
from tests.unit.core.conftest import Consumer, TakeOver, make_harness, through
from tests.unit.desktop.fakes import FakeDriver, executor_with

ALLOWED = {"click": Policy.ALLOW, "type_text": Policy.ALLOW, "drag": Policy.ALLOW}


def completed(events: list[TaskLoopEvent]) -> bool:
    last = events[-1]
    return isinstance(last, RunFinished) and last.run.status is RunStatus.COMPLETED


def actions(events: list[TaskLoopEvent]) -> list[tuple[StepStatus, str | None]]:
    return [
        (e.step.status, e.step.error)
        for e in events
        if isinstance(e, StepFinished) and e.step.kind is StepKind.ACTION
    ]


async def test_a_pause_while_the_action_row_is_stored_sends_no_input() -> None:
    h = make_harness(policies=ALLOWED)
    driver = FakeDriver()
    through(h, executor_with(driver), "click")
    run = await h.create()
    save_step = h.repo.save_step

    async def save_and_pause(step: object) -> None:
        await save_step(step)  # type: ignore[arg-type]
        action = getattr(step, "kind", None) is StepKind.ACTION
        if action and getattr(step, "status", None) is StepStatus.RUNNING:
            h.runner.pause(run.id)  # the take-over, while the decided click is stored

    h.repo.save_step = save_and_pause  # type: ignore[method-assign]
    consumer = Consumer(
        h.runner.start(run, ScriptedPlanner([tool("click", x=3, y=4)], then=done()))
    )
    await consumer.wait_type("run_paused")
    await asyncio.sleep(0.05)  # the input thread, had it been given the click, has sent it

    assert driver.events == []
    h.runner.resume(run.id)
    events = await consumer.finished()
    assert driver.events == []  # the stale decision never ran, after the resume either
    assert actions(events)[0][0] is StepStatus.SKIPPED
    assert completed(events)


async def test_a_pause_while_the_input_thread_gets_ready_sends_no_input() -> None:
    h = make_harness(policies=ALLOWED)
    getting_ready, go_on = threading.Event(), threading.Event()

    class SlowToStart(FakeDriver):
        def ready(self) -> None:  # pyautogui's import and X connection, the first time
            getting_ready.set()
            go_on.wait(5)

    driver = SlowToStart()
    through(h, executor_with(driver), "click")
    run = await h.create()
    consumer = Consumer(
        h.runner.start(run, ScriptedPlanner([tool("click", x=3, y=4)], then=done()))
    )
    await asyncio.to_thread(getting_ready.wait, 5)
    h.runner.pause(run.id)
    go_on.set()
    await consumer.wait_type("run_paused")
    await asyncio.sleep(0.05)

    assert driver.events == []
    h.runner.resume(run.id)
    events = await consumer.finished()
    assert driver.events == []
    assert actions(events) == [(StepStatus.SKIPPED, actions(events)[0][1])]
    assert "paused" in (actions(events)[0][1] or "")


async def test_a_pause_while_text_is_typed_types_no_key_after_it() -> None:
    h = make_harness(policies=ALLOWED)
    take_over = TakeOver(h)  # the user takes over the keyboard

    def on_press(count: int) -> None:
        if count == 5:
            take_over()

    driver = FakeDriver(on_press=on_press)
    through(h, executor_with(driver), "type_text")
    run = await h.create()
    take_over.run_id = run.id
    text = "abcdefghijklmnopqrstuvwxyz"
    consumer = Consumer(
        h.runner.start(run, ScriptedPlanner([tool("type_text", text=text)], then=done()))
    )
    await consumer.wait_type("run_paused")

    assert driver.presses == list("abcde")
    h.runner.resume(run.id)
    events = await consumer.finished()
    assert driver.presses == list("abcde")  # nothing more, after the resume either
    [(status, error)] = actions(events)
    assert status is StepStatus.SKIPPED
    assert error is not None and "5 of 26" in error
    assert completed(events)


async def test_a_pause_during_a_drag_lets_the_button_go_and_moves_no_more() -> None:
    h = make_harness(policies=ALLOWED)
    pause = TakeOver(h, "request")

    class PausedAfterTheFirstMove(FakeDriver):
        def move(self, x: int, y: int) -> None:
            super().move(x, y)
            if len([e for e in self.events if e[0] == "move"]) == 2:
                pause()

    driver = PausedAfterTheFirstMove()
    through(h, executor_with(driver), "drag")
    run = await h.create(allowed_tools=("drag",))
    pause.run_id = run.id
    drag = tool("drag", x=10, y=10, to_x=300, to_y=300)
    consumer = Consumer(h.runner.start(run, ScriptedPlanner([drag], then=done())))
    await consumer.wait_type("run_paused")
    await asyncio.sleep(0.05)

    kinds = [event[0] for event in driver.events]
    assert kinds == ["move", "down", "move", "up"]
    h.runner.resume(run.id)
    events = await consumer.finished()
    assert [event[0] for event in driver.events] == kinds
    assert actions(events)[0][0] is StepStatus.SKIPPED
