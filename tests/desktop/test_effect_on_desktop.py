"""The effect check on a real desktop: typing into l3afpad changes the screen; clicking the
same empty spot again and again does not, and the run ends stuck at the third time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.control import RunControl
from desktop_agent.core.events import RunFinished
from desktop_agent.core.loop import LoopDeps, run_task_loop
from desktop_agent.core.models import (
    Effect,
    RunStatus,
    StepKind,
    StopReason,
    TaskSpec,
)
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.ports import DecideRequest
from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.observer import DesktopObserver
from tests.desktop.conftest import INVENTORY_BUDGET_S, Editor
from tests.fakes import MemoryRepository, ScriptedGate, ScriptedPlanner, tool

#: GTK's default gtk-double-click-time
DOUBLE_CLICK_S = 0.4


@pytest.fixture
async def desktop() -> AsyncIterator[tuple[DesktopObserver, DesktopExecutor]]:
    observer = DesktopObserver(fmt="png", inventory_budget_s=INVENTORY_BUDGET_S)
    executor = DesktopExecutor(observer=observer)
    yield observer, executor
    executor.close()
    observer.close()


async def test_typing_changes_the_screen_and_a_click_that_does_nothing_ends_stuck(
    still_l3afpad: Editor, desktop: tuple[DesktopObserver, DesktopExecutor]
) -> None:
    # an editor without a blinking caret or a fading scroll indicator: an empty click then
    # changes nothing, whatever the machine's load puts between its two observations
    observer, executor = desktop
    spot: dict[str, int] = {}

    async def click_the_empty_page(request: DecideRequest) -> object:
        # a model thinks for seconds between clicks; without that pause, clicks on one spot
        # would be a double and a triple click (GTK: 400 ms), which select text
        await asyncio.sleep(DOUBLE_CLICK_S + 0.1)
        # below the text, in the page's white: the caret goes to the end, where it is
        text = next(e for e in request.observation.elements if e.role == "edit")
        spot.setdefault("x", text.box[0] + text.box[2] // 2)
        spot.setdefault("y", text.box[1] + text.box[3] * 3 // 4)
        return tool("click", x=spot["x"], y=spot["y"])

    planner = ScriptedPlanner(
        [tool("type_text", text="hello world"), *[click_the_empty_page] * 5],  # type: ignore[list-item]
    )
    repo = MemoryRepository()
    run = await repo.create_run(
        TaskSpec("type, then click", max_steps=10, allowed_tools=("type_text", "click"))
    )
    deps = LoopDeps(
        repo=repo,
        observer=observer,  # its own signature of each screenshot
        executor=executor,
        gate=ScriptedGate(),
        registry=builtin_registry(),
        breakers=BreakerBoard(),
        permissions=Permissions(persistent_grants=["type_text", "click"]),
        planner=planner,
    )
    events = [event async for event in run_task_loop(run, deps, RunControl())]
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.run.status, final.run.stop_reason) == (RunStatus.FAILED, StopReason.STUCK)
    actions = [s for s in await repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    effects = [(a.tool, a.effect) for a in actions]
    # the caret is already at the end, where the click puts it: the run ends at the third
    # click, each of which changed nothing
    assert effects == [("type_text", Effect.CHANGED), *[("click", Effect.NO_CHANGE)] * 3]
