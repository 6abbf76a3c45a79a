"""No input after a stop, counted by the X server: a window records every key and button event
it is sent, and the stop's moment is a mark in the same stream (tests/support/input_recorder.py).

The rule (DESIGN §7, "actions after a stop: 0, at most one keystroke of a typing action"): after
the mark, no press of any key or button, except the one atomic event the input thread had
already begun when the stop was set (a keystroke, one click); releases of what was pressed
before are allowed — and required: nothing is left held down.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import threading
from collections.abc import Iterator

import pytest
from Xlib import X

from desktop_agent.core.errors import StopRequested
from desktop_agent.core.models import Decision, Observation, Policy, RunStatus, RunView
from desktop_agent.desktop import clipboard as clipboard_module
from desktop_agent.desktop import executor as executor_module
from desktop_agent.desktop.clipboard import XclipPaster
from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.geometry import point_to_screen
from desktop_agent.desktop.observer import DesktopObserver
from tests.desktop.conftest import act
from tests.fakes import ScriptedPlanner, done, tool
from tests.support.input_recorder import InputRecorder, Recorded
from tests.support.xdisplay import XSession, wait_until
from tests.unit.core.conftest import Consumer, Harness, make_harness, through

PRESSES = ("key_press", "button_press")


@pytest.fixture
def recorder(xsession: XSession) -> Iterator[InputRecorder]:
    recording = InputRecorder(xsession.display)
    yield recording
    recording.close()


@pytest.fixture
async def screen() -> Observation:
    observer = DesktopObserver(fmt="png", inventory=False)
    try:
        return await observer.observe()
    finally:
        observer.close()


@pytest.fixture
def executor() -> Iterator[DesktopExecutor]:
    executor = DesktopExecutor(settle_s=0)
    yield executor
    executor.close()


def presses(events: list[Recorded]) -> list[Recorded]:
    return [event for event in events if event.kind in PRESSES]


async def stop_after(
    recorder: InputRecorder, kind: str, count: int, cancelled: threading.Event
) -> None:
    """Set the stop once the server delivered `count` events of `kind`, and mark it."""
    await asyncio.to_thread(recorder.wait_for, kind, count)
    cancelled.set()
    recorder.mark()


async def test_a_stop_between_the_clicks_of_a_triple_click_sends_no_click_after_it(
    recorder: InputRecorder, screen: Observation, executor: DesktopExecutor
) -> None:
    # the clicks' interval, long enough that the stop surely lands between the first two
    executor.click_interval_s = 2.0
    cancelled = threading.Event()
    clicking = asyncio.ensure_future(
        act(executor, "click", screen, cancelled, x=400, y=300, clicks=3)
    )
    await stop_after(recorder, "button_release", 1, cancelled)
    with contextlib.suppress(StopRequested):
        await clicking

    assert presses(recorder.after_mark()) == []
    assert [e.kind for e in recorder.sync() if e.kind in PRESSES] == ["button_press"]
    assert recorder.buttons_held() == 0


async def test_a_drag_stopped_by_the_fail_safe_corner_lets_the_button_go(
    recorder: InputRecorder,
    screen: Observation,
    executor: DesktopExecutor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the user's emergency stop: the pointer thrown into a screen corner while the agent drags
    monkeypatch.setattr(executor_module, "DRAG_STEP_S", 0.5)
    dragging = asyncio.ensure_future(
        act(executor, "drag", screen, threading.Event(), x=400, y=300, to_x=900, to_y=700)
    )
    await asyncio.to_thread(recorder.wait_for, "button_press", 1)
    recorder.display.screen().root.warp_pointer(0, 0)
    recorder.display.sync()
    with pytest.raises(StopRequested, match="fail-safe"):
        await dragging

    assert recorder.buttons_held() == 0
    assert [e.kind for e in recorder.sync() if e.kind.startswith("button")] == [
        "button_press",
        "button_release",
    ]


async def test_a_drag_stopped_half_way_lets_the_button_go_and_moves_no_more(
    recorder: InputRecorder,
    screen: Observation,
    executor: DesktopExecutor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(executor_module, "DRAG_STEP_S", 0.5)
    cancelled = threading.Event()
    dragging = asyncio.ensure_future(
        act(executor, "drag", screen, cancelled, x=400, y=300, to_x=900, to_y=700)
    )
    await stop_after(recorder, "button_press", 1, cancelled)
    with pytest.raises(StopRequested, match="stopped during drag"):
        await dragging
    where = recorder.display.screen().root.query_pointer()

    assert presses(recorder.after_mark()) == []
    assert recorder.buttons_held() == 0
    start = point_to_screen(400, 300, screen.mapping, (screen.width, screen.height))
    assert (where.root_x, where.root_y) == start  # not one step towards (900, 700)


async def test_a_long_type_text_stopped_midway_types_at_most_one_key_after_the_stop(
    recorder: InputRecorder, screen: Observation, executor: DesktopExecutor
) -> None:
    text = "abcdefghij" * 40
    cancelled = threading.Event()
    typing = asyncio.ensure_future(act(executor, "type_text", screen, cancelled, text=text))
    await stop_after(recorder, "key_press", 10, cancelled)
    with pytest.raises(StopRequested, match=f"of {len(text)} keys"):
        await typing

    assert len(presses(recorder.after_mark())) <= 1  # the keystroke under way, if any
    assert len(presses(recorder.sync())) < 20
    assert recorder.keys_held() == []


async def test_a_hotkey_leaves_no_key_held(
    recorder: InputRecorder, screen: Observation, executor: DesktopExecutor
) -> None:
    await act(executor, "hotkey", screen, keys=["ctrl", "shift", "a"])

    events = recorder.sync()
    assert [e.kind for e in events].count("key_press") == 3
    assert [e.kind for e in events].count("key_release") == 3
    assert recorder.keys_held() == []


async def test_a_stop_once_the_paste_owns_the_clipboard_sends_no_key_and_puts_it_back(
    recorder: InputRecorder,
    screen: Observation,
    executor: DesktopExecutor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    previous = "what the user had copied"
    await asyncio.to_thread(
        subprocess.run,
        ["xclip", "-selection", "clipboard", "-i"],
        input=previous.encode(),
        check=True,
    )
    cancelled = threading.Event()

    class StoppedOnceOwned(clipboard_module._TextOwner):
        """The stop lands right after the paste's text owns the clipboard, before ctrl+v."""

        def __init__(self, text: str) -> None:
            super().__init__(text)
            cancelled.set()

    monkeypatch.setattr(clipboard_module, "_TextOwner", StoppedOnceOwned)
    with pytest.raises(StopRequested, match="before the paste"):
        await act(executor, "type_text", screen, cancelled, text="café ✓")

    assert presses(recorder.sync()) == []
    assert await asyncio.to_thread(XclipPaster().read) == previous


async def test_a_stop_during_a_long_scroll_turns_the_wheel_no_more(
    recorder: InputRecorder, screen: Observation, executor: DesktopExecutor
) -> None:
    cancelled = threading.Event()
    scrolling = asyncio.ensure_future(
        act(executor, "scroll", screen, cancelled, amount=-100, x=400, y=300)
    )
    await stop_after(recorder, "button_press", 3, cancelled)
    with contextlib.suppress(StopRequested):
        await scrolling

    assert len(presses(recorder.after_mark())) <= 1  # the notch under way, if any
    assert len(presses(recorder.sync())) < 100
    assert recorder.buttons_held() == 0


async def run_typing(
    recorder: InputRecorder, executor: DesktopExecutor, act_on_run: str
) -> tuple[list[Recorded], Harness, RunView]:
    """A run whose model types a long text (the real executor, on the test desktop); once the
    server has 10 of its keys, the runner is asked to `act_on_run` ("stop" or "pause") and
    the moment is marked. The events after the mark, once the run has ended or paused."""
    h = make_harness(policies={"type_text": Policy.ALLOW})
    through(h, executor, "type_text")
    run = await h.create()
    planner = ScriptedPlanner([tool("type_text", text="abcdefghij" * 40)], then=done())
    consumer = Consumer(h.runner.start(run, planner))
    await asyncio.to_thread(recorder.wait_for, "key_press", 10)
    getattr(h.runner, act_on_run)(run.id)
    recorder.mark()
    await consumer.wait_type("run_finished" if act_on_run == "stop" else "run_paused")
    # the input thread is abandoned by a stop (executor._input is then a new one): the
    # keystroke under way may still be letting its key go; wait for that, bounded, so a key
    # left held for good still fails below
    await asyncio.to_thread(executor._input.submit(lambda: None).result, 5)
    with contextlib.suppress(TimeoutError):
        await asyncio.to_thread(
            wait_until, lambda: not recorder.keys_held(), timeout=5, what="every key let go"
        )
    if act_on_run == "pause":
        h.runner.resume(run.id)
        await consumer.finished()
    return recorder.after_mark(), h, run


async def test_a_run_stopped_while_it_types_sends_no_key_after_the_stop(
    recorder: InputRecorder, executor: DesktopExecutor
) -> None:
    after, h, run = await run_typing(recorder, executor, "stop")

    assert len(presses(after)) <= 1  # the keystroke under way, if any
    assert h.stored(run.id).status is RunStatus.STOPPED
    assert recorder.keys_held() == []


async def test_a_run_paused_while_it_types_sends_no_key_while_paused_nor_after_the_resume(
    recorder: InputRecorder, executor: DesktopExecutor
) -> None:
    after, h, run = await run_typing(recorder, executor, "pause")

    assert len(presses(after)) <= 1
    assert h.stored(run.id).status is RunStatus.COMPLETED
    assert recorder.keys_held() == []


async def test_a_hold_key_stopped_while_held_lets_every_key_go_at_once(
    recorder: InputRecorder, screen: Observation, executor: DesktopExecutor
) -> None:
    cancelled = threading.Event()
    holding = asyncio.ensure_future(
        act(executor, "hold_key", screen, cancelled, keys=["shift", "a"], seconds=10)
    )
    await stop_after(recorder, "key_press", 2, cancelled)
    with pytest.raises(StopRequested, match=r"while holding shift\+a \(let go\)"):
        await asyncio.wait_for(holding, 5)  # not the 10 s it was asked to hold

    assert presses(recorder.after_mark()) == []
    assert recorder.keys_held() == []


async def test_a_button_the_model_held_is_let_go_when_the_run_is_stopped(
    recorder: InputRecorder, executor: DesktopExecutor
) -> None:
    h = make_harness(policies={"mouse_down": Policy.ALLOW})
    h.runner.services.executor = executor  # the real one: a HeldInput the loop lets go of
    run = await h.create(allowed_tools=("mouse_down",))
    thinking = asyncio.Event()

    async def think(_request: object) -> Decision:
        thinking.set()
        await asyncio.Event().wait()  # the model thinks until the stop
        return done()

    consumer = Consumer(
        h.runner.start(run, ScriptedPlanner([tool("mouse_down", x=400, y=300), think]))
    )
    await asyncio.wait_for(thinking.wait(), 10)
    held = recorder.buttons_held()
    h.runner.stop(run.id)
    await consumer.finished()

    assert held == X.Button1Mask  # the left button stayed down while the model thought
    assert recorder.buttons_held() == 0
    assert h.stored(run.id).status is RunStatus.STOPPED


async def test_a_drag_with_shift_held_stopped_half_way_lets_the_key_and_the_button_go(
    recorder: InputRecorder,
    screen: Observation,
    executor: DesktopExecutor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # OpenAI's drag with keys held: the key went down first, so it must come up last
    monkeypatch.setattr(executor_module, "DRAG_STEP_S", 0.5)
    cancelled = threading.Event()
    dragging = asyncio.ensure_future(
        act(
            executor, "drag", screen, cancelled,
            x=400, y=300, to_x=900, to_y=700, via=[[600, 300]], hold=["shift"],
        )
    )  # fmt: skip
    await stop_after(recorder, "button_press", 1, cancelled)
    with pytest.raises(StopRequested, match="stopped during drag"):
        await dragging

    assert presses(recorder.after_mark()) == []
    assert recorder.buttons_held() == 0
    assert recorder.keys_held() == []
    kinds = [e.kind for e in recorder.sync() if e.kind != "mark"]
    assert kinds == ["key_press", "button_press", "button_release", "key_release"]
