"""The tools that hold input (hold_key, mouse_down / mouse_up) and cursor_position: judged by
the gate as the presses they are, and whatever is held let go when the run ends or pauses."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from desktop_agent.core.call_risk import assess_call
from desktop_agent.core.models import Decision, Element, Observation, Policy, RunStatus
from desktop_agent.core.own_windows import own_window_refusal
from desktop_agent.core.targets import element_ref
from tests.fakes import FakeExecutor, ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import Blocker, Consumer, Harness, make_harness

DESK = make_observation(
    [
        Element(1, "window", "notes.txt — L3afpad", (0, 0, 600, 600), focused=True),
        Element(2, "window", "alice@box: ~ — XTerm", (600, 0, 600, 600)),
        Element(3, "button", "Delete", (10, 10, 50, 20)),
    ]
)
TERMINAL = make_observation(
    [Element(1, "window", "alice@box: ~/src — XTerm", (0, 0, 800, 600), focused=True)]
)


@pytest.mark.parametrize(
    ("keys", "observation"),
    [
        (["win"], DESK),
        (["ctrl", "alt", "t"], DESK),
        (["alt", "f2"], DESK),
        (["ctrl", "v"], DESK),
        (["enter"], TERMINAL),
        (["ctrl", "s"], DESK),
        (["shift"], DESK),
    ],
)
def test_a_held_key_is_judged_as_the_hotkey_it_holds(
    keys: list[str], observation: Observation
) -> None:
    held = assess_call("hold_key", {"keys": keys, "seconds": 2}, observation, None)
    pressed = assess_call("hotkey", {"keys": keys}, observation, None)

    assert held == pressed


def test_holding_a_launcher_key_asks_every_time() -> None:
    risk = assess_call("hold_key", {"keys": ["win"], "seconds": 1}, DESK)

    assert "system key" in risk.always_ask


def test_a_button_pressed_on_a_sensitive_target_asks() -> None:
    assert "Delete" in assess_call("mouse_down", {"x": 20, "y": 15}, DESK).always_ask
    assert assess_call("mouse_down", {"x": 100, "y": 100}, DESK).always_ask == ""


def test_a_button_let_go_over_a_terminal_or_a_sensitive_target_asks() -> None:
    assert "terminal" in assess_call("mouse_up", {"x": 700, "y": 100}, DESK).always_ask
    assert "Delete" in assess_call("mouse_up", {"x": 20, "y": 15}, DESK).always_ask
    assert assess_call("mouse_up", {"x": 100, "y": 100}, DESK).always_ask == ""
    # where the windows are not known, a release may drop into a terminal: asked
    assert "not known" in assess_call("mouse_up", {"x": 1, "y": 1}, make_observation()).always_ask


def test_a_button_pressed_or_let_go_on_the_apps_own_window_is_refused() -> None:
    own = DESK.with_(own_windows=(Element(9, "window", "Desktop Agent", (300, 300, 100, 100)),))

    for name in ("mouse_down", "mouse_up"):
        assert "own window" in own_window_refusal(name, {"x": 350, "y": 350}, own)
        assert own_window_refusal(name, {"x": 100, "y": 100}, own) == ""


def test_a_held_key_into_the_apps_own_focused_window_is_refused() -> None:
    assert "keyboard focus" in own_window_refusal(
        "hold_key", {"keys": ["a"], "seconds": 1}, DESK, "desktop-agent"
    )


def test_what_the_new_tools_act_on_is_stored_for_routines() -> None:
    down = element_ref("mouse_down", {"x": 20, "y": 15}, DESK)
    held = element_ref("hold_key", {"keys": ["a"], "seconds": 1}, DESK)

    assert down is not None and down.name == "Delete"
    assert held is not None and held.window == "notes.txt — L3afpad"
    assert element_ref("cursor_position", {}, DESK) is None


class HoldingExecutor(FakeExecutor):
    """A FakeExecutor that is a HeldInput: counts the releases asked of it."""

    def __init__(self) -> None:
        super().__init__()
        self.releases: list[str] = []

    async def release_held(self) -> str:
        self.releases.append(self.calls[-1][0] if self.calls else "")
        return "released"


ALLOWED = ("mouse_down", "mouse_up", "move_mouse", "wait")


def holding_harness() -> tuple[Harness, HoldingExecutor]:
    h = make_harness(policies=dict.fromkeys(ALLOWED, Policy.ALLOW))
    executor = HoldingExecutor()
    h.runner.services.executor = executor
    return h, executor


async def test_a_button_held_by_the_model_is_let_go_when_the_run_is_stopped() -> None:
    h, executor = holding_harness()
    run = await h.create(allowed_tools=ALLOWED)
    thinking = Blocker()

    async def think(_request: object) -> Decision:
        await thinking.block()
        return done()

    planner = ScriptedPlanner([tool("mouse_down", x=10, y=10), think])
    consumer = Consumer(h.runner.start(run, planner))
    await asyncio.wait_for(thinking.entered.wait(), 5)
    assert executor.releases == []  # held while the model thinks
    h.runner.stop(run.id)
    await consumer.finished()

    assert h.stored(run.id).status is RunStatus.STOPPED
    assert executor.releases == ["mouse_down"]


async def test_a_button_held_when_the_model_says_done_is_let_go() -> None:
    h, executor = holding_harness()
    run = await h.create(allowed_tools=ALLOWED)

    planner = ScriptedPlanner([tool("mouse_down", x=10, y=10)], then=done())
    await h.collect(run, planner)

    assert executor.releases == ["mouse_down"]


async def test_a_held_button_is_let_go_before_a_pause_hands_the_desktop_over() -> None:
    h, executor = holding_harness()
    run = await h.create(allowed_tools=ALLOWED)
    counter = itertools.count()

    async def pause_then_wait(_request: object) -> Decision:
        next(counter)
        h.runner.pause(run.id, "user")
        return tool("wait", seconds=0)

    planner = ScriptedPlanner([tool("mouse_down", x=10, y=10), pause_then_wait], then=done())
    consumer = Consumer(h.runner.start(run, planner))
    await consumer.wait_type("run_paused")
    released_while_paused = list(executor.releases)
    h.runner.resume(run.id)
    await consumer.finished()

    assert released_while_paused == ["mouse_down"]


async def test_an_observer_that_captures_regions_lends_them_to_the_planners_zoom() -> None:
    from desktop_agent.core.ports import DecideRequest
    from tests.fakes import FakeObserver

    class RegionObserver(FakeObserver):
        def __init__(self) -> None:
            super().__init__()
            self.asked: list[tuple[Observation, tuple[int, int, int, int]]] = []

        async def region(self, observation: Observation, box: tuple[int, int, int, int]) -> bytes:
            self.asked.append((observation, box))
            return b"crop"

    seen: list[tuple[bytes, Observation]] = []

    async def zoom(request: DecideRequest) -> Decision:
        assert request.region is not None
        seen.append((await request.region((5, 6, 70, 80)), request.observation))
        return done()

    h = make_harness()
    observer = RegionObserver()
    h.runner.services.observer = observer
    run = await h.create()

    await h.collect(run, ScriptedPlanner([zoom]))

    # the turn's own observation, the box as the planner gave it, the crop handed back
    assert [box for _, box in observer.asked] == [(5, 6, 70, 80)]
    assert seen == [(b"crop", observer.asked[0][0])]
