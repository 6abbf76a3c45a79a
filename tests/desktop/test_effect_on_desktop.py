"""The effect check on a real desktop: typing into l3afpad changes the screen; clicking the
same empty spot again and again does not, and the run ends stuck at the third time; an
editor that draws what was typed late (a loaded machine) is seen changed, not unchanged."""

from __future__ import annotations

import asyncio
import os
import signal

from pydantic import BaseModel

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
    ToolResult,
)
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.ports import DecideRequest, ToolContext
from desktop_agent.core.tools import ToolSpec
from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.observer import DesktopObserver
from tests.desktop.conftest import Editor
from tests.fakes import MemoryRepository, ScriptedGate, ScriptedPlanner, done, tool

#: GTK's default gtk-double-click-time
DOUBLE_CLICK_S = 0.4
#: how long after the action the frozen editor goes on (and draws what it was sent): later
#: than the effect check's first look (the executor's 0.1 s settle, then one capture)
LATE_S = 0.7


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


class ActingOnAFrozenApp:
    """The desktop executor acting while the app is stopped (SIGSTOP): the input waits in
    its X queue and nothing is drawn until it goes on (SIGCONT) `LATE_S` after the action:
    an app that a loaded machine lets draw late."""

    def __init__(self, executor: DesktopExecutor, pid: int) -> None:
        self.executor = executor
        self.pid = pid

    async def execute(self, spec: ToolSpec, args: BaseModel, context: ToolContext) -> ToolResult:
        os.kill(self.pid, signal.SIGSTOP)
        try:
            return await self.executor.execute(spec, args, context)
        finally:
            asyncio.get_running_loop().call_later(LATE_S, self.go_on)

    def go_on(self) -> None:
        os.kill(self.pid, signal.SIGCONT)


async def test_typing_the_editor_draws_late_is_seen_as_a_change(still_l3afpad: Editor) -> None:
    # the screenshot alone: the element list of a stopped app would wait on its D-Bus replies
    observer = DesktopObserver(fmt="png", inventory=False)
    executor = DesktopExecutor(observer=observer)
    frozen = ActingOnAFrozenApp(executor, still_l3afpad.process.pid)
    repo = MemoryRepository()
    run = await repo.create_run(TaskSpec("type", max_steps=3, allowed_tools=("type_text",)))
    deps = LoopDeps(
        repo=repo,
        observer=observer,
        executor=frozen,
        gate=ScriptedGate(),
        registry=builtin_registry(),
        breakers=BreakerBoard(),
        permissions=Permissions(persistent_grants=["type_text"]),
        planner=ScriptedPlanner([tool("type_text", text="hello world")], then=done()),
    )
    try:
        events = [event async for event in run_task_loop(run, deps, RunControl())]
    finally:
        frozen.go_on()
        executor.close()
        observer.close()

    final = events[-1]
    assert isinstance(final, RunFinished) and final.run.status is RunStatus.COMPLETED
    action = next(s for s in await repo.list_steps(run.id) if s.kind is StepKind.ACTION)
    assert (action.effect, action.summary) == (Effect.CHANGED, "typed 11 characters")
