"""UserTakeover's rules over a real runner (fake ports): what pauses a run, what does not."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop_agent.agent import Agent
from desktop_agent.core.events import ApprovalRequested, RunPaused, TaskLoopEvent
from desktop_agent.core.models import ApprovalDecision, Policy, RunStatus, ToolResult
from desktop_agent.desktop.takeover import InjectionWindows, TakeoverUnavailable
from desktop_agent.host.starts import RunRequest, admit
from desktop_agent.takeover import UserTakeover
from tests.fakes import ALLOW_ALL, ScriptedPlanner, done, final_run, make_agent, tool
from tests.gui.fake_agent import until


class FakeWatch:
    backend = "fake"

    def __init__(self, report: Callable[[], None]) -> None:
        self.report = report
        self.stopped = False
        self.flushes = 0
        #: the user's input that the next flush reads (made during the agent's action)
        self.unread_input = False

    def flush(self, timeout: float = 2.0) -> bool:
        # on a worker thread, as the X11 watch's flush: what it reads is reported first
        self.flushes += 1
        if self.unread_input:
            self.unread_input = False
            self.report()
        return True

    def user_idle_s(self) -> float:
        return float("inf")

    def stop(self) -> None:
        self.stopped = True


class Watches:
    """The watch factory: records each watch started, or refuses with `refuse`."""

    def __init__(self, refuse: str = "") -> None:
        self.started: list[FakeWatch] = []
        self.refuse = refuse
        self.calls = 0

    def __call__(self, report: Callable[[], None], injections: InjectionWindows) -> FakeWatch:
        self.calls += 1
        if self.refuse:
            raise TakeoverUnavailable(self.refuse)
        watch = FakeWatch(report)
        self.started.append(watch)
        return watch


class Listener:
    def __init__(self) -> None:
        self.paused: list[tuple[str, ...]] = []
        self.problems: list[str] = []

    def took_over(self, run_ids: tuple[str, ...]) -> None:
        self.paused.append(run_ids)

    def unavailable(self, why: str) -> None:
        self.problems.append(why)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Thinking:
    """A model answer that waits until the test lets it go."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.answer = asyncio.Event()

    async def __call__(self, request: Any) -> Any:
        self.asked.set()
        await self.answer.wait()
        return tool("wait", seconds=0)


def setup(
    agent: Agent, watches: Watches, clock: Clock
) -> tuple[UserTakeover, Listener, list[TaskLoopEvent]]:
    takeover = UserTakeover(agent.runner, agent.injections, start_watch=watches, clock=clock)
    listener = Listener()
    takeover.add_listener(listener)
    takeover.attach()
    events: list[TaskLoopEvent] = []
    agent.runner.subscribe(events.append)
    return takeover, listener, events


async def start(agent: Agent, *script: Any) -> asyncio.Task[Any]:
    agent.planner_factory = lambda run: ScriptedPlanner(list(script))
    handle = admit(agent, RunRequest("do it"))
    return asyncio.get_running_loop().create_task(final_run(handle))


async def test_the_users_input_pauses_the_run_once_and_after_a_resume_only_once_they_let_go(
    tmp_path: Path,
) -> None:
    agent = make_agent(tmp_path)
    watches, clock = Watches(), Clock()
    takeover, listener, events = setup(agent, watches, clock)
    first, second = Thinking(), Thinking()
    run = await start(agent, first, second, done())
    await first.asked.wait()
    assert len(watches.started) == 1  # the watch started with the run
    (run_id,) = agent.runner.active_ids

    # the report comes on the watch's own thread
    thread = threading.Thread(target=watches.started[0].report)
    thread.start()
    thread.join()
    await until(lambda: takeover.paused_by_user, what="the pause")
    assert listener.paused == [(run_id,)]
    first.answer.set()
    await until(lambda: any(isinstance(e, RunPaused) for e in events), what="run_paused")

    clock.now += 0.2
    takeover.user_input()  # more of the same gesture while paused: nothing new
    assert listener.paused == [(run_id,)]

    agent.runner.resume(run_id)  # the click on Resume, then the hand still on the mouse
    await second.asked.wait()
    clock.now += 0.3
    takeover.user_input()
    clock.now += 0.9
    takeover.user_input()
    assert listener.paused == [(run_id,)]
    assert agent.runner.is_active(run_id) and not takeover.paused_by_user

    clock.now += 1.0  # the user let go for a second, then takes the mouse again
    takeover.user_input()
    assert listener.paused == [(run_id,), (run_id,)]
    second.answer.set()
    await until(lambda: sum(isinstance(e, RunPaused) for e in events) == 2, what="the second pause")
    agent.runner.resume(run_id)
    final = await run
    assert final.status is RunStatus.COMPLETED
    await until(lambda: watches.started[0].stopped, what="the watch to stop with the last run")
    assert not takeover.watching
    await agent.close()


async def test_input_while_an_approval_is_asked_is_the_answer_not_a_takeover(
    tmp_path: Path,
) -> None:
    agent = make_agent(tmp_path, policies={**ALLOW_ALL, "wait": Policy.ASK})
    watches, clock = Watches(), Clock()
    takeover, listener, events = setup(agent, watches, clock)
    run = await start(agent, tool("wait", seconds=0), done())
    await until(lambda: agent.approvals.pending, what="the approval")
    assert any(isinstance(e, ApprovalRequested) for e in events)

    takeover.user_input()  # the user clicks Allow in the dialog
    assert not takeover.paused_by_user
    agent.approvals.resolve(agent.approvals.pending[0].id, ApprovalDecision.ONCE)
    clock.now += 0.1
    takeover.user_input()  # the same hand, right after the answer
    assert listener.paused == []
    final = await run
    assert final.status is RunStatus.COMPLETED
    await agent.close()


async def test_a_watch_that_cannot_start_is_said_once_and_the_runs_go_on(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    watches, clock = Watches(refuse="the X server has no XInput extension"), Clock()
    takeover, listener, _ = setup(agent, watches, clock)
    for _ in range(2):
        final = await (await start(agent, done()))
        assert final.status is RunStatus.COMPLETED
    assert listener.problems == ["the X server has no XInput extension"]
    assert watches.calls == 1
    late = Listener()
    takeover.add_listener(late)  # a view that comes later hears it too
    assert late.problems == ["the X server has no XInput extension"]
    await agent.close()


async def test_the_agent_watches_only_when_the_setting_says_so(tmp_path: Path) -> None:
    from desktop_agent.settings import Settings

    off = make_agent(tmp_path / "off", settings=Settings(pause_on_user_input=False))
    assert off.watch_user_input() is None
    on = make_agent(tmp_path / "on")
    assert isinstance(on.watch_user_input(), UserTakeover)
    await off.close()
    await on.close()


def test_the_agent_finds_the_injection_windows_of_its_executors_driver() -> None:
    from desktop_agent.agent import injections_of
    from desktop_agent.desktop.executor import DesktopExecutor
    from desktop_agent.desktop.input import PyAutoGuiDriver

    windows = InjectionWindows()
    executor = DesktopExecutor(driver=PyAutoGuiDriver(windows))
    assert injections_of(executor) is windows


async def test_input_made_during_an_action_pauses_the_run_before_its_next_turn(
    tmp_path: Path,
) -> None:
    agent = make_agent(tmp_path)
    watches, clock = Watches(), Clock()
    takeover, listener, events = setup(agent, watches, clock)
    planner = ScriptedPlanner([tool("click", x=5, y=5), tool("wait", seconds=0)], then=done())
    agent.planner_factory = lambda run: planner

    async def click(_args: Any, _context: Any) -> Any:
        # the user grabs the mouse while the agent clicks; the watch has not read it yet
        watches.started[0].unread_input = True
        return ToolResult.success("clicked")

    agent.runner.services.executor.handlers["click"] = click  # type: ignore[attr-defined]
    handle = admit(agent, RunRequest("click, then wait"))
    reader = asyncio.get_running_loop().create_task(final_run(handle))
    await until(lambda: any(isinstance(e, RunPaused) for e in events), what="run_paused")

    (run_id,) = agent.runner.active_ids
    assert listener.paused == [(run_id,)]
    assert len(planner.requests) == 1, "the model is not asked again while the user has it"
    assert watches.started[0].flushes == 1  # once, after the click
    agent.runner.resume(run_id)
    final = await reader
    assert final.status is RunStatus.COMPLETED and len(planner.requests) == 3
    await takeover.close()
    assert agent.runner.services.after_action is None
    await agent.close()
