"""The observe row's summary says what the look showed the model, window-relative controls too."""

from __future__ import annotations

from desktop_agent.core.models import Element, StepKind
from tests.fakes import FakeObserver, ScriptedPlanner, done, make_observation
from tests.unit.core.conftest import make_harness


async def test_a_look_of_only_window_relative_controls_says_them_in_its_summary() -> None:
    controls = tuple(Element(0, "button", f"Control {i}", (i * 10, 0, 9, 9)) for i in range(5))
    observation = make_observation().with_(window_relative=controls, relative_to="Editor")
    harness = make_harness(observer=FakeObserver(observation))
    run = await harness.create()
    await harness.collect(run, ScriptedPlanner([], then=done()))
    looks = [s for s in await harness.repo.list_steps(run.id) if s.kind is StepKind.OBSERVE]
    assert looks[0].summary == "screenshot 1280x720, 0 elements, 5 relative to the window"


async def test_a_look_without_window_relative_controls_keeps_its_summary() -> None:
    harness = make_harness()
    run = await harness.create()
    await harness.collect(run, ScriptedPlanner([], then=done()))
    looks = [s for s in await harness.repo.list_steps(run.id) if s.kind is StepKind.OBSERVE]
    assert looks[0].summary == "screenshot 1280x720, 0 elements"
