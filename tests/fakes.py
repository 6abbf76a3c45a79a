"""Fakes of the core's ports, used by every test that does not need the real thing."""

from __future__ import annotations

import asyncio
import io
import itertools
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Artifact,
    Decision,
    Element,
    Grounding,
    Observation,
    Policy,
    RunStatus,
    RunView,
    StepView,
    StoreWrite,
    TaskSpec,
    ToolResult,
    utcnow,
)
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.ports import (
    DecideRequest,
    Focus,
    FocusProbe,
    Grounder,
    GroundRequest,
    PermissionGate,
    Planner,
    RunRepository,
    ScreenObserver,
    ToolContext,
    ToolExecutor,
)
from desktop_agent.core.routine import Routine, RoutineError
from desktop_agent.core.tools import ToolSpec

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.desktop.hotkey import HotkeyHandle, StateCallback
    from desktop_agent.settings import Settings


class MemoryRepository:
    """A RunRepository in memory."""

    def __init__(self) -> None:
        self.runs: dict[str, RunView] = {}
        self.steps: dict[str, dict[int, StepView]] = {}
        self.artifacts: dict[str, bytes] = {}
        self.grants: set[str] = set()
        self.routines: dict[str, Routine] = {}
        self._ids = itertools.count(1)

    async def create_run(self, spec: TaskSpec, *, run_id: str | None = None) -> RunView:
        run = RunView.queued(spec, run_id or f"run{next(self._ids)}", utcnow())
        self.runs[run.id] = run
        return run

    async def get_run(self, run_id: str) -> RunView | None:
        return self.runs.get(run_id)

    async def list_runs(
        self, *, limit: int = 100, status: RunStatus | None = None
    ) -> list[RunView]:
        runs = [r for r in self.runs.values() if status is None or r.status is status]
        return sorted(runs, key=lambda r: r.created_at, reverse=True)[:limit]

    async def save_run(self, run: RunView) -> None:
        self.runs[run.id] = run

    async def save_step(self, step: StepView) -> None:
        self.steps.setdefault(step.run_id, {})[step.seq] = step

    async def list_steps(self, run_id: str) -> list[StepView]:
        return [s for _, s in sorted(self.steps.get(run_id, {}).items())]

    async def save_artifact(self, run_id: str, name: str, data: bytes) -> str:
        path = self.artifact_path(run_id, name)
        self.artifacts[path] = data
        return path

    def artifact_path(self, run_id: str, name: str) -> str:
        return f"runs/{run_id}/{name}"

    async def write(self, writes: Sequence[StoreWrite]) -> None:
        """As the SQLite store's: the files first, then the rows in order."""
        writes = tuple(writes)
        for item in writes:
            if isinstance(item, Artifact):
                await self.save_artifact(item.run_id, item.name, item.data)
        for item in writes:
            if isinstance(item, StepView):
                await self.save_step(item)
            elif isinstance(item, RunView):
                await self.save_run(item)

    async def delete_run(self, run_id: str) -> bool:
        self.steps.pop(run_id, None)
        return self.runs.pop(run_id, None) is not None

    async def list_grants(self) -> set[str]:
        return set(self.grants)

    async def add_grant(self, tool: str) -> None:
        self.grants.add(tool)

    async def remove_grant(self, tool: str) -> None:
        self.grants.discard(tool)

    # routines, as store/routines.py keeps them (in memory)

    async def save_routine(self, routine: Routine, *, replace: bool = False) -> None:
        if routine.name in self.routines and not replace:
            raise RoutineError(f"a routine named {routine.name!r} exists already")
        self.routines[routine.name] = routine

    async def get_routine(self, name: str) -> Routine | None:
        return self.routines.get(name)

    async def list_routines(self) -> list[Routine]:
        return [self.routines[name] for name in sorted(self.routines)]

    async def delete_routine(self, name: str) -> bool:
        return self.routines.pop(name, None) is not None

    async def update_routine(self, name: str, **changes: Any) -> Routine:
        if name not in self.routines:
            raise RoutineError(f"no routine named {name!r}")
        self.routines[name] = self.routines[name].with_(**changes)
        return self.routines[name]


def make_observation(elements: Iterable[Element] = (), *, signature: bytes = b"") -> Observation:
    return Observation(
        image=b"\xff\xd8fake-jpeg",
        mime="image/jpeg",
        width=1280,
        height=720,
        elements=tuple(elements),
        thumbnail=b"thumb",
        signature=signature,
    )


def grey_signature(level: int, size: int = 64 * 36) -> bytes:
    """A flat grey signature (the observer's small grey image of the screen)."""
    return bytes([level]) * size


class FakeObserver:
    """Returns observations; `fail_next(n)` makes the next n observations raise."""

    def __init__(self, observation: Observation | None = None) -> None:
        self.observation = observation or make_observation()
        self.calls = 0
        self._failures = 0
        self.gate: asyncio.Event | None = None

    def fail_next(self, n: int) -> None:
        self._failures = n

    async def observe(self) -> Observation:
        self.calls += 1
        if self.gate is not None:
            await self.gate.wait()
        if self._failures:
            self._failures -= 1
            raise RuntimeError("capture failed")
        return self.observation


Script = Decision | Exception | Callable[[DecideRequest], Awaitable[Decision]]


def tool(name: str, reason: str = "", **args: Any) -> Decision:
    return Decision(
        action="tool",
        tool=name,
        args=args,
        reason=reason or f"use {name}",
        raw=f'{{"action":"tool","tool":"{name}"}}',
    )


def done(message: str = "done") -> Decision:
    return Decision(action="done", message=message, reason="goal reached", raw='{"action":"done"}')


def fail(reason: str = "cannot") -> Decision:
    return Decision(action="fail", reason=reason, raw='{"action":"fail"}')


class ScriptedPlanner:
    """Answers from a script: a Decision, an exception to raise, or a coroutine function."""

    def __init__(
        self,
        script: Iterable[Script],
        *,
        then: Decision | None = None,
        grounder: Grounder | None = None,
    ) -> None:
        self.script = list(script)
        self.then = then
        self.requests: list[DecideRequest] = []
        #: the grounding the run gets with this planner (as OpenAIPlanner.grounder)
        self.grounder = grounder

    async def decide(self, request: DecideRequest) -> Decision:
        self.requests.append(request)
        if not self.script:
            if self.then is not None:
                return self.then
            raise PlannerError("script exhausted")
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        if isinstance(item, Decision):
            return item
        return await item(request)

    def assert_complete(self) -> None:
        assert not self.script, f"{len(self.script)} scripted answers left"


GroundScript = Grounding | Exception | Callable[[GroundRequest], Awaitable[Grounding]]


class ScriptedGrounder:
    """A Grounder answering from a script: a Grounding, an exception, or a coroutine function."""

    def __init__(self, script: Iterable[GroundScript]) -> None:
        self.script = list(script)
        self.requests: list[GroundRequest] = []

    async def ground(self, request: GroundRequest) -> Grounding:
        self.requests.append(request)
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        if isinstance(item, Grounding):
            return item
        return await item(request)


@dataclass
class FakeExecutor:
    """Runs tools from a table of handlers; records every call that began."""

    handlers: dict[str, Callable[[BaseModel, ToolContext], Awaitable[ToolResult]]] = field(
        default_factory=dict
    )
    calls: list[tuple[str, BaseModel]] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)

    async def execute(self, spec: ToolSpec, args: BaseModel, context: ToolContext) -> ToolResult:
        self.calls.append((spec.name, args))
        handler = self.handlers.get(spec.name)
        result = await handler(args, context) if handler else ToolResult.success(f"{spec.name} ok")
        self.finished.append(spec.name)
        return result


class ScriptedGate:
    """A PermissionGate answering from a script; None in the script means never answer, a
    future means answer when the test resolves it."""

    def __init__(
        self,
        answers: Iterable[ApprovalDecision | None | asyncio.Future[ApprovalDecision]] = (),
    ) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(approval)
        answer = self.answers.pop(0) if self.answers else ApprovalDecision.ONCE
        if answer is None:
            await asyncio.Event().wait()
        if isinstance(answer, asyncio.Future):
            return await answer
        assert answer is not None
        return answer


class ManualClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FakeFocusProbe:
    """A FocusProbe answering `role` at `place` (None: a desktop that does not say where the
    focus is); with `hang` set it never answers (a hung AT-SPI call). A test moves the focus
    by overriding `focused_role` (the role, asked once per `focused`) or `place_now`."""

    def __init__(
        self, role: str | None = None, *, hang: bool = False, place: str | None = None
    ) -> None:
        self.role = role
        self.hang = hang
        self.place = place
        self.calls = 0

    async def focused(self) -> Focus:
        role = await self.focused_role()
        return Focus(role, self.place_now())

    async def focused_role(self) -> str | None:
        self.calls += 1
        if self.hang:
            await asyncio.Event().wait()
        return self.role

    def place_now(self) -> str | None:
        return self.place


class LosingHotkey:
    """A stop hotkey whose listener ends by itself after it was grabbed (the X server went
    away): `start` as desktop.hotkey.start_global_hotkey, `lose` tells its on_change (if it
    has one) on the loop, as the real listener's `_Arming.lost` does (desktop/hotkey.py)."""

    def __init__(self) -> None:
        self.on_change: StateCallback | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.armed = True

    def start(
        self,
        combo: str,
        callback: Callable[[], None],
        loop: asyncio.AbstractEventLoop,
        *,
        on_change: StateCallback | None = None,
    ) -> HotkeyHandle:
        self.on_change, self.loop = on_change, loop
        return self

    def lose(self, why: str) -> None:
        assert self.loop is not None, "lose() before start()"
        self.armed = False
        if self.on_change is not None:
            self.loop.call_soon_threadsafe(self.on_change, False, why)

    def stop(self) -> None:
        self.armed = False


# ── an Agent over the fakes (GUI, host, API and MCP tests; benchmarks) ─────────


#: every offered tool allowed without asking, unless a test asks for approvals
ALLOW_ALL = {spec.name: Policy.ALLOW for spec in builtin_registry().specs()}


class FileRepository(MemoryRepository):
    """A MemoryRepository that also writes artifacts under the data dir, off the loop."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir

    async def save_artifact(self, run_id: str, name: str, data: bytes) -> str:
        path = await super().save_artifact(run_id, name, data)
        target = self.data_dir / path
        await asyncio.to_thread(_write, target, data)
        return path

    def close(self) -> None:
        pass


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def jpeg(width: int, height: int, color: tuple[int, int, int] = (40, 90, 160)) -> bytes:
    """A real JPEG of one colour with a white box in it (Pillow, no Qt needed)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), color)
    ImageDraw.Draw(image).rectangle(
        (width // 3, height // 3, width // 2, height // 2), fill=(255, 255, 255)
    )
    out = io.BytesIO()
    image.save(out, "JPEG", quality=70)
    return out.getvalue()


def real_observation(elements: Iterable[Element] = ()) -> Observation:
    return Observation(
        image=jpeg(640, 360),
        mime="image/jpeg",
        width=640,
        height=360,
        elements=tuple(elements),
        thumbnail=jpeg(160, 90),
    )


async def final_run(handle: Any) -> Any:
    """Read a RunHandle's events to the end; the final run view (None: no run_finished)."""
    from desktop_agent.core.events import RunFinished

    final = None
    async for event in handle.events:
        if isinstance(event, RunFinished):
            final = event.run
    return final


def make_agent(
    data_dir: Path,
    *,
    policies: Mapping[str, Policy] | None = None,
    script: Iterable[Script] = (),
    settings: Settings | None = None,
) -> Agent:
    """An Agent over the fakes; `agent.planner_factory` answers from `script` by default."""
    # the store, settings and planners: imported here, not by the core's tests
    from desktop_agent.agent import Agent
    from desktop_agent.settings import Settings

    answers = list(script)
    return Agent.assemble(
        data_dir,
        settings or Settings(approval_timeout_s=30.0),
        FileRepository(data_dir),  # type: ignore[arg-type]
        observer=FakeObserver(real_observation()),
        executor=FakeExecutor(),
        permissions=Permissions(ALLOW_ALL if policies is None else policies),
        planner_factory=lambda run: ScriptedPlanner(list(answers)),
        check_model=False,
    )


# ── each fake has the shape of what it stands for ─────────────────────────────
# Never run: mypy reads it (tests/unit/test_fakes_typed.py), so a fake whose method drifts
# from its port fails there, not in whichever test first calls that method.
if TYPE_CHECKING:

    class _StartsHotkey(Protocol):
        def __call__(
            self,
            combo: str,
            callback: Callable[[], None],
            loop: asyncio.AbstractEventLoop,
            *,
            on_change: StateCallback | None = None,
        ) -> HotkeyHandle: ...

    from desktop_agent.desktop.hotkey import start_global_hotkey

    _repository: RunRepository = MemoryRepository()
    _file_repository: RunRepository = FileRepository(Path())
    _observer: ScreenObserver = FakeObserver()
    _planner: Planner = ScriptedPlanner(())
    _grounder: Grounder = ScriptedGrounder(())
    _executor: ToolExecutor = FakeExecutor()
    _gate: PermissionGate = ScriptedGate()
    _focus: FocusProbe = FakeFocusProbe()
    _clock: Callable[[], float] = ManualClock()
    _hotkey: HotkeyHandle = LosingHotkey()
    _start_real: _StartsHotkey = start_global_hotkey
    _start_fake: _StartsHotkey = LosingHotkey().start
