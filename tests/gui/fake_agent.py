"""An Agent over the fakes for GUI tests and benchmarks, and helpers to drive a qasync loop."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from desktop_agent.agent import Agent
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.models import Element, Observation, Policy
from desktop_agent.core.permissions import Permissions
from desktop_agent.settings import Settings
from tests.fakes import FakeExecutor, FakeObserver, MemoryRepository, Script, ScriptedPlanner

T = TypeVar("T")

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


# ── the engine thread ────────────────────────────────────────────────────────


def make_client(agent: Agent) -> Any:
    """An EngineClient over `agent`, on an engine thread of its own (close it with
    `client.close()`, which ends the thread)."""
    from desktop_agent.host.engine import Engine
    from desktop_agent.host.host import Host
    from desktop_agent.ui.engine_client import EngineClient

    return EngineClient(Engine().start(), Host(agent))


def bind_window(window: Any, agent: Agent) -> Any:
    """Bind `window` to `agent` through an engine, as the app does; the client."""
    from desktop_agent.ui.runs_state import RunsState

    client = make_client(agent)
    runs = RunsState()
    client.run_event.connect(runs.apply)
    window.bind(client, runs)
    return client


class CrossEvent:
    """An asyncio.Event that a test on the GUI thread may set while the engine's loop waits
    on it (asyncio's own Event must be set on the loop that waits)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def wait(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self._event.wait()

    def set(self) -> None:
        loop = self._loop
        if loop is None:
            self._event.set()
        else:
            loop.call_soon_threadsafe(self._event.set)


# ── driving a qasync loop from a synchronous test ───────────────────────────


def open_loop(qapp: Any) -> asyncio.AbstractEventLoop:
    import qasync

    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    return loop


def _dropped(*_args: Any, **_kwargs: Any) -> None:
    return None


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
    asyncio.set_event_loop(None)
    # a thread that finishes one of this loop's futures after it closed (an engine thread at the
    # end of a test: asyncio.wrap_future's callback) posts through qasync's call_soon signal,
    # whose slot calls loop.call_soon on the timer deleted below ("Internal C++ object
    # (_SimpleTimer) already deleted", caught in Qt's loop during a later teardown): a closed
    # loop drops such a callback, posted or still to come
    loop.call_soon = _dropped  # type: ignore[method-assign,assignment]
    # qasync keeps a Qt timer per pending callback, cancelled ones too, until it fires:
    # delete the loop's timer object now, on this thread, rather than whenever it is collected
    import shiboken6

    timer = getattr(loop, "_timer", None)
    if timer is not None and shiboken6.isValid(timer):
        shiboken6.delete(timer)


def drive(loop: asyncio.AbstractEventLoop, work: Awaitable[T], timeout: float = 10.0) -> T:
    """Run `work` on the qasync loop (Qt events flow meanwhile) and return its result."""
    return loop.run_until_complete(asyncio.wait_for(work, timeout))


async def until(condition: Callable[[], Any], timeout: float = 5.0, what: str = "") -> Any:  # noqa: ASYNC109
    """Wait (letting Qt and asyncio run) until `condition()` is truthy; that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what or condition}")
        await asyncio.sleep(0.005)
