"""The desktop executor registers a handler per spec and acts around it by the spec's traits."""

from __future__ import annotations

import threading

import pytest
from pydantic import BaseModel

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS, builtin_registry
from desktop_agent.core.models import Observation, ToolResult
from desktop_agent.core.ports import ToolContext
from desktop_agent.core.tools import SCREEN_TOOL
from desktop_agent.desktop.executor import DesktopExecutor
from tests.unit.core.test_tool_traits import POKE, PONDER, PokeArgs, PonderArgs
from tests.unit.desktop.fakes import FakeDriver, FakePaster

SHOWN = Observation(image=b"jpeg", mime="image/jpeg", width=1280, height=720)


def executor(sleeps: list[float]) -> DesktopExecutor:
    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return DesktopExecutor(
        driver=FakeDriver(), paster=FakePaster(), settle_s=0.25, sleep=sleep, key_interval_s=0
    )


def test_every_offered_tool_has_a_desktop_handler() -> None:
    desk = DesktopExecutor(driver=FakeDriver(), paster=FakePaster())
    try:
        missing = [
            spec.name
            for spec in builtin_registry().specs()
            if spec.name != SCREEN_TOOL and not desk.handles(spec.name)
        ]
        assert [spec.name for spec in BUILTIN_TOOLS if spec.offered]  # there are some
        assert missing == []
    finally:
        desk.close()


async def test_a_new_tool_runs_its_handler_and_settles_by_its_trait() -> None:
    sleeps: list[float] = []
    desk = executor(sleeps)
    seen: list[BaseModel] = []

    async def poke(args: BaseModel, context: ToolContext) -> ToolResult:
        seen.append(args)
        return ToolResult.success("poked")

    async def ponder(args: BaseModel, context: ToolContext) -> ToolResult:
        return ToolResult.success("pondered")

    desk.register(POKE, poke)
    desk.register(PONDER, ponder)
    context = ToolContext("run", SHOWN, threading.Event())
    try:
        poked = await desk.execute(POKE, PokeArgs(at_x=3, at_y=4), context)
        settled = list(sleeps)
        pondered = await desk.execute(PONDER, PonderArgs(), context)
    finally:
        desk.close()

    assert (poked.summary, seen) == ("poked", [PokeArgs(at_x=3, at_y=4)])
    assert settled == [0.25]  # a settling tool gives the app time to repaint
    assert pondered.summary == "pondered" and sleeps == [0.25]  # a passive one does not


def test_a_second_handler_for_one_tool_is_refused() -> None:
    desk = DesktopExecutor(driver=FakeDriver(), paster=FakePaster())
    try:

        async def again(args: BaseModel, context: ToolContext) -> ToolResult:
            return ToolResult.success("again")

        with pytest.raises(ValueError, match="a handler for 'click' already"):
            desk.register(builtin_registry().get("click"), again)
    finally:
        desk.close()
