"""A stop always wins, attacked where two things land in the same step of the loop: a person's
answer and a stop-all, a pause and a stop, a routine's hand-over and a stop from another
process. Real store, real loop, a loopback model server that counts what it is asked; fakes
only for the screen and the tools (ports)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.agent import Agent
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.errors import StopRequested
from desktop_agent.core.events import ApprovalRequested, RunPaused, TaskLoopEvent
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Effect,
    Element,
    ElementRef,
    MonitorArea,
    Observation,
    RunStatus,
    StopReason,
)
from desktop_agent.core.ports import ToolContext
from desktop_agent.core.routine import Routine, RoutineStep
from desktop_agent.desktop.launch import Launcher
from desktop_agent.desktop.observer import DesktopObserver
from desktop_agent.host.host import Host, RoutineRequest, RunRequest
from desktop_agent.launch import local_api
from desktop_agent.mcp.calls import CallOutcome, ElementMemory, run_one_call
from desktop_agent.mcp.gate import Asker, McpApprovalGate, SessionGrants
from desktop_agent.settings import Settings
from desktop_agent.store import SqliteRunRepository
from tests.fakes import FakeExecutor, FakeObserver, make_observation, real_observation
from tests.gui.fake_agent import until
from tests.support.model_server import ModelServer, Reply
from tests.unit.desktop.fakes import (
    FakeBackend,
    FakeCapture,
    FakeDriver,
    FakePaster,
    executor_with,
)

EDIT = Element(1, "text", "Body", (0, 40, 600, 400), focused=True)


class HeldAnswer:
    """A person asked through one channel, who answers when the test says (`answer`)."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []
        self.waiting = asyncio.Event()
        self._answer: asyncio.Future[ApprovalDecision] | None = None

    async def __call__(self, approval: ApprovalRequest) -> ApprovalDecision | None:
        self.asked.append(approval)
        self._answer = asyncio.get_running_loop().create_future()
        self.waiting.set()
        return await self._answer

    def answer(self, decision: ApprovalDecision) -> None:
        assert self._answer is not None
        self.waiting.clear()
        self._answer.set_result(decision)


# ── MCP: a session grant given in the step of a stop-all ─────────────────────


@pytest.fixture
async def mcp(tmp_path: Path) -> AsyncIterator[tuple[Host, McpApprovalGate, FakeExecutor]]:
    async def no_app(_: ApprovalRequest) -> None:
        return None

    # the client answers ordinary input calls only when the user let it (`mcp --client-approves`)
    gate = McpApprovalGate(no_app, client_approves=True)
    executor = FakeExecutor()
    agent = Agent.assemble(
        tmp_path,
        Settings(approval_timeout_s=30),
        await asyncio.to_thread(SqliteRunRepository.open, tmp_path),
        observer=FakeObserver(make_observation([EDIT])),
        executor=executor,
        gate=gate,
        check_model=False,
    )
    host = Host(agent)
    yield host, gate, executor
    await host.close()


async def test_allow_for_the_session_answered_in_the_step_of_a_stop_all_grants_nothing(
    mcp: tuple[Host, McpApprovalGate, FakeExecutor],
) -> None:
    """The client's "session" arrives as the stop-all lands (the hotkey, `stop-all`): the
    call is stopped, and the next call of the same session asks again — the stop-all
    revoked every grant, including one whose answer was on its way."""
    host, gate, executor = mcp
    client = HeldAnswer()
    permissions = host._agent.permissions
    asker = Asker(SessionGrants(lambda: permissions.revocations), client)
    memory = ElementMemory()

    def click() -> asyncio.Future[CallOutcome]:
        return asyncio.ensure_future(
            run_one_call(host, gate, "click", {"x": 5, "y": 5}, asker, memory)
        )

    call = click()
    await asyncio.wait_for(client.waiting.wait(), 5)

    client.answer(ApprovalDecision.RUN)  # the answer is in; its coroutine has not run yet
    host.stop_everything()
    outcome = await asyncio.wait_for(call, 5)

    assert outcome.run is not None
    assert (outcome.run.status, outcome.run.stop_reason) == (RunStatus.STOPPED,
                                                             StopReason.USER_STOP)  # fmt: skip
    assert executor.calls == []
    assert asker.grants.tools() == frozenset()
    after = click()
    await asyncio.wait_for(client.waiting.wait(), 5)  # asked again
    client.answer(ApprovalDecision.ONCE)
    assert (await asyncio.wait_for(after, 5)).run.status is RunStatus.COMPLETED  # type: ignore[union-attr]
    assert len(client.asked) == 2


# ── input: a stop while the input thread gets going ─────────────────────────


@dataclass
class SlowToStartDriver(FakeDriver):
    """The input driver as PyAutoGuiDriver is the first time: its first input imports pyautogui
    and opens its X connection (0.1-0.3 s; desktop/input.py `_gui`, reached from `ready` and
    from every input call). That start is held here until the test lets it go."""

    starting: threading.Event = field(default_factory=threading.Event)
    go: threading.Event = field(default_factory=threading.Event)
    started: bool = False

    def ready(self) -> None:
        if not self.started:
            self.starting.set()
            self.go.wait(10)
            self.started = True

    def safe_point(self, x: int, y: int) -> tuple[int, int]:
        self.ready()
        return super().safe_point(x, y)

    def press(self, key: str) -> None:
        self.ready()
        super().press(key)

    def hotkey(self, keys: list[str]) -> None:
        self.ready()
        super().hotkey(keys)

    def scroll(self, amount: int, x: int | None, y: int | None) -> None:
        self.ready()
        super().scroll(amount, x, y)


async def stop_while_held(
    executor: Any,
    pool: concurrent.futures.Executor,
    tool: str,
    args: dict[str, Any],
    screen: Observation,
    held: threading.Event,
    go: threading.Event,
) -> None:
    """Run `tool` on `executor`, stop it as a run's stop does once the thread it runs on is
    `held` (the flag first, then the await is cancelled), see the call end cancelled, then
    let the thread go on and wait until its work has ended."""
    spec, validated = builtin_registry().validate(tool, args)
    cancelled = threading.Event()
    acting = asyncio.ensure_future(
        executor.execute(spec, validated, ToolContext("run", screen, cancelled))
    )
    try:
        assert await asyncio.to_thread(held.wait, 10)
        cancelled.set()  # RunControl.stop: the flag first, then the await is cancelled
        acting.cancel()
        with pytest.raises((asyncio.CancelledError, StopRequested)):
            await acting
    finally:
        go.set()
        await asyncio.to_thread(pool.shutdown, wait=True)  # the thread's work has ended


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("click", {"x": 10, "y": 10}),
        ("move_mouse", {"x": 10, "y": 10}),
        ("drag", {"x": 10, "y": 10, "to_x": 50, "to_y": 50}),
        ("scroll", {"amount": -3}),
        ("hotkey", {"keys": ["ctrl", "s"]}),
        ("type_text", {"text": "hi"}),
    ],
)
async def test_a_stop_while_the_input_driver_starts_is_not_followed_by_the_input(
    tool: str, args: dict[str, Any]
) -> None:
    """The stop lands while the input thread is still getting the driver ready (the run's
    first input): the tool is cancelled, and once the driver is ready no event goes out."""
    driver = SlowToStartDriver()
    executor = executor_with(driver)
    screen = Observation(b"jpeg", "image/jpeg", 100, 100)
    try:  # executor._input: the input thread the call runs on
        await stop_while_held(
            executor, executor._input, tool, args, screen, driver.starting, driver.go
        )
    finally:
        executor.close()
    assert driver.events == []


@dataclass
class HeldPaster(FakePaster):
    """A clipboard paster whose clipboard work before the paste key (XclipPaster.paste reads
    the old text and sets the new one with xclip, tens of ms) is held until `go`."""

    setting: threading.Event = field(default_factory=threading.Event)
    go: threading.Event = field(default_factory=threading.Event)
    restored: bool = False

    def paste(self, text: str, press_paste: Callable[[], None]) -> None:
        self.setting.set()
        self.go.wait(10)
        try:
            super().paste(text, press_paste)
        finally:
            self.restored = True  # the paster puts the old clipboard back either way


async def test_a_stop_while_the_clipboard_is_set_for_a_paste_sends_no_paste_key() -> None:
    driver = FakeDriver()
    paster = HeldPaster()
    executor = executor_with(driver, paster=paster)
    screen = Observation(b"jpeg", "image/jpeg", 100, 100)
    try:
        await stop_while_held(
            executor,
            executor._input,
            "type_text",
            {"text": "héllo"},
            screen,
            paster.setting,
            paster.go,
        )
    finally:
        executor.close()
    assert driver.events == []
    assert paster.restored


@dataclass
class SlowToStartBackend(FakeBackend):
    """An accessibility backend as AT-SPI's is on a fresh inventory thread: its `thread_init`
    connects to the bus (desktop/inventory/__init__.py `InventoryRunner._ensure`, at a
    thread's first call, also after a hung walk's thread was replaced). Held here until the
    test lets it go."""

    starting: threading.Event = field(default_factory=threading.Event)
    go: threading.Event = field(default_factory=threading.Event)

    def thread_init(self) -> None:
        super().thread_init()
        self.starting.set()
        self.go.wait(10)


@pytest.mark.parametrize(
    ("tool", "args"),
    [("focus_window", {"title": "Editor"}), ("invoke", {"element": 2})],
)
async def test_a_stop_while_the_accessibility_backend_starts_is_not_followed_by_its_action(
    tool: str, args: dict[str, Any]
) -> None:
    backend = SlowToStartBackend()
    observer = DesktopObserver(
        backend=backend, capture=FakeCapture(MonitorArea(1, 0, 0, 1920, 1080), (1280, 720))
    )
    assert observer.inventory is not None
    pool = observer.inventory._thread.pool  # the inventory thread the call runs on
    executor = executor_with(FakeDriver(), observer=observer)
    button = Element(2, "push button", "Delete", (10, 10, 60, 24))
    screen = Observation(b"jpeg", "image/jpeg", 1280, 720, elements=(button,))
    observer.native = lambda observation, element_id: ("atspi", "delete-node")  # type: ignore[method-assign]
    try:
        await stop_while_held(executor, pool, tool, args, screen, backend.starting, backend.go)
    finally:
        observer.close()
        executor.close()
    assert backend.actions == []


def test_a_launch_whose_run_was_stopped_while_it_waited_for_a_thread_starts_nothing(
    tmp_path: Path,
) -> None:
    """launch_app runs in a worker thread (asyncio.to_thread): a stop that lands before that
    thread gets to it must not start the program."""
    made = tmp_path / "started"
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(StopRequested):
        Launcher().launch(f"touch {made}", cancelled)
    assert not made.exists()
    Launcher().launch(f"touch {made}", threading.Event())  # not stopped: it ran, and ended
    assert made.exists()


# ── the real model client on loopback: pause, approvals, a routine's hand-over ─

CLICK = {"action": "tool", "tool": "click", "args": {"x": 10, "y": 10}, "reason": "the button"}


class Desk:
    """A Host over a real store and the real model client, talking to a loopback model server
    that counts what it is asked; the screen and the tools are fakes (ports)."""

    def __init__(self, host: Host, server: ModelServer, executor: FakeExecutor) -> None:
        self.host = host
        self.server = server
        self.executor = executor
        self.events: list[TaskLoopEvent] = []
        self._heard = asyncio.Event()
        host.subscribe(self._on_event)

    def _on_event(self, event: TaskLoopEvent) -> None:
        self.events.append(event)
        self._heard.set()

    async def heard(self, kind: type[TaskLoopEvent]) -> Any:
        while True:
            for event in self.events:
                if isinstance(event, kind):
                    return event
            self._heard.clear()
            await asyncio.wait_for(self._heard.wait(), 10)

    def asked(self) -> tuple[int, int]:
        """(chat completions, tool calls begun) so far."""
        return len(self.server.requests), len(self.executor.calls)


@pytest.fixture
async def desk(tmp_path: Path) -> AsyncIterator[Desk]:
    async with ModelServer(then=Reply(CLICK)) as server:
        executor = FakeExecutor()
        settings = Settings(
            base_url=server.base_url,
            model="qwen2.5vl",
            vision="yes",
            approval_timeout_s=30,
        )
        agent = Agent.assemble(
            tmp_path,
            settings,
            await asyncio.to_thread(SqliteRunRepository.open, tmp_path),
            observer=FakeObserver(real_observation([EDIT])),
            executor=executor,
            check_model=True,
        )
        host = Host(agent, local_api=local_api)
        yield Desk(host, server, executor)
        await host.close()


@pytest.mark.parametrize("then", ["resume", "resume_first"])
async def test_pause_then_stop_then_resume_asks_the_model_nothing_more_and_acts_no_more(
    desk: Desk, then: str
) -> None:
    """A paused run that is stopped stays stopped, whether the resume comes after the stop or
    in the same step just before it."""
    host = desk.host
    hosted = host.start(RunRequest("click the button"))
    host.pause(hosted.run_id)  # honoured at the top of the first turn
    await desk.heard(RunPaused)
    before = desk.asked()

    if then == "resume":
        host.stop(hosted.run_id)
        host.resume(hosted.run_id)
    else:
        host.resume(hosted.run_id)
        host.stop(hosted.run_id)
    final = await asyncio.wait_for(hosted.final(), 10)

    assert final is not None
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert desk.asked() == before == (0, 0)


@pytest.mark.parametrize("answer", [ApprovalDecision.ONCE, ApprovalDecision.RUN])
async def test_an_allow_clicked_after_stop_all_acts_not_and_grants_nothing(
    desk: Desk, answer: ApprovalDecision
) -> None:
    """The window sends stop-all, then the still-open dialog's Allow lands (the same order on
    the engine, `Engine.call`): the tool does not run, the run ends stopped."""
    host = desk.host
    hosted = host.start(RunRequest("click the button"))
    asked = (await desk.heard(ApprovalRequested)).approval
    assert desk.asked() == (1, 0)

    host.stop_everything()
    host.answer(asked.id, answer)  # the dialog's Allow, after the stop-all
    final = await asyncio.wait_for(hosted.final(), 10)

    assert final is not None
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert desk.asked() == (1, 0)
    assert host._agent.permissions.task_grants(hosted.run_id) == frozenset()


def mismatching_routine() -> Routine:
    """One click on a button that is not on the screen: after its patience the routine hands
    over to the agent, whose model is checked first."""
    gone = ElementRef(how="element", role="push button", name="Export", window="Report",
                      box=(220, 120, 90, 30))  # fmt: skip
    step = RoutineStep("click", {"element": 9}, gone, Effect.UNKNOWN)
    return Routine("export", "export the report", (step,), grants=("click",))


async def test_a_stop_all_from_another_process_during_the_routines_handover_asks_no_model(
    desk: Desk,
) -> None:
    """The routine hands over to the agent; while the agent's model is checked (GET /v1/models
    held by the server), `desktop-agent stop-all` from another process reaches this instance
    through its API: the run ends stopped, no chat completion is asked, nothing more acts."""
    from desktop_agent.instances.registry import stop_all_instances

    host = desk.host
    desk.server.hang_checks = True
    await host._agent.repo.save_routine(mismatching_routine())
    await host.serve_api(face="run")
    hosted = host.start(RoutineRequest("export"))
    while desk.server.models_requests == 0:  # the routine's waits, then the hand-over's check
        assert not hosted._final.done(), await hosted.final()
        await asyncio.sleep(0.005)
    before = desk.asked()
    assert host._agent.permissions.task_grants(hosted.run_id) == frozenset({"click"})

    stopped = await stop_all_instances(host.data_dir)  # what the command does, from here
    final = await asyncio.wait_for(hosted.final(), 10)

    assert stopped == 1
    assert final is not None
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert desk.asked() == before and before[0] == 0
    assert host._agent.permissions.task_grants(hosted.run_id) == frozenset()
    assert all(call[0] == "wait" for call in desk.executor.calls)


# ── stop-all from another process while this one starts ──────────────────────


async def test_a_stop_all_before_this_instances_api_is_up_stops_its_waiting_run(
    desk: Desk,
) -> None:
    """`run` admits its run, then serves its API and grabs the hotkey, and the run acts once
    they are up (its `ready`). A `desktop-agent stop-all` in between finds no instance file
    to tell; it leaves its mark, and the instance, once registered, sees it and stops the
    run: no chat completion, no input."""
    from desktop_agent.instances.registry import stop_all_instances

    host = desk.host
    ready: concurrent.futures.Future[None] = concurrent.futures.Future()
    hosted = host.start(RunRequest("click the button", ready=ready))
    await until(lambda: desk.server.models_requests, what="its model check (then `ready`)")

    assert await stop_all_instances(host.data_dir) == 0  # nobody registered to tell
    await host.serve_api(face="run")
    ready.set_result(None)  # the API and the hotkey are up: the run may act
    final = await asyncio.wait_for(hosted.final(), 10)

    assert final is not None
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert desk.asked() == (0, 0)


async def test_a_stop_all_before_another_run_was_asked_for_does_not_stop_it(desk: Desk) -> None:
    """The mark is read when the host opens: a stop-all that came before stops nothing later."""
    from desktop_agent.instances.registry import stop_all_instances

    host = desk.host
    await stop_all_instances(host.data_dir)
    fresh = Host(host._agent, local_api=local_api)  # the process that opens after the stop-all
    await fresh.serve_api(face="run")
    hosted = fresh.start(RunRequest("click the button"))
    await desk.heard(ApprovalRequested)  # it went on to its click
    assert desk.asked() == (1, 0)
    fresh.stop(hosted.run_id)
    await asyncio.wait_for(hosted.final(), 10)
    await fresh.close()


def test_the_stop_all_command_leaves_its_mark_before_it_reads_the_registry(tmp_path: Path) -> None:
    """Both paths of `desktop-agent stop-all` (the lean one at the entry point, the full
    command) mark the data dir, with no instance to tell."""
    from desktop_agent.instances.stop_all import read_stop_mark

    marks = [read_stop_mark(str(tmp_path))]
    tmp_path.chmod(0o700)
    for mode in (0o700, 0o755):  # the lean path declines a data dir others may read
        tmp_path.chmod(mode)
        env = {**os.environ, "DESKTOP_AGENT_HOME": str(tmp_path)}
        done = subprocess.run(
            [sys.executable, "-m", "desktop_agent", "stop-all"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        marks.append(read_stop_mark(str(tmp_path)))
        assert (done.returncode, done.stdout) == (0, "stopped 0 run(s)\n"), done.stderr
    assert marks[0] == "" and marks[1] and marks[2] and marks[1] != marks[2]
