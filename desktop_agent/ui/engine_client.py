"""EngineClient: the window's bridge to the Host, which lives on the engine thread.

Calls cross to the engine (`Engine.call` for plain calls — they land in order with every
stop — and `Engine.run` for coroutines); the Host's one event stream comes back as the
`run_event` signal, queued to the GUI thread and handed on in slices. The Host owns every
run, the API, the hotkey, takeover and settings; this only crosses the thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from desktop_agent.core.errors import DesktopAgentError
from desktop_agent.core.events import TaskLoopEvent
from desktop_agent.core.models import ApprovalDecision, RunView, StepView
from desktop_agent.core.routine import Routine
from desktop_agent.host.engine import EngineClosed
from desktop_agent.host.host import Host, RunRequest
from desktop_agent.ui.text import one_line

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.core.model_servers import Discovery
    from desktop_agent.host.engine import Engine
    from desktop_agent.host.model_check import VisionVerdict
    from desktop_agent.settings import Settings

log = logging.getLogger(__name__)

#: a replay crosses to the GUI thread this many events at a time (its rows are in memory
#: already; every crossing costs the two threads a fight over the GIL)
REPLAY_BATCH = 2000
#: the longest the GUI thread hands on run events before it lets Qt paint and take input:
#: short, as one event's views (row, selection, step detail) take ~0.5-1 ms; 4 ms slices
#: put the median GUI gap at 8 ms in benchmarks/gui_stall.py, 1 ms ones at ~5 ms
SLICE_S = 0.001
#: the longest a turn waits for the GUI thread to catch up with the run's events
PACE_MAX_S = 0.05
_END = object()


class EngineClient(QObject):
    """The Host's calls from the GUI thread, its events as one signal.

    Signals:
        run_event(object): every event of the Host's one stream, in order: every run's, a
            start refused, stop-everything carried out, the stop hotkey's state, a takeover
            watch that cannot start.

    Attributes:
        engine: the thread the Host runs on.
        host: the engine side; only its fixed parts (data_dir, registry, check_model) are
            read from the GUI thread, everything else goes through the engine.
        settings: the settings in use (the GUI's copy; `apply_settings` changes both).
        api_port: the local API's port once served, else None.
    """

    run_event = Signal(object)
    # the engine thread emits this; connected to this object's slot, it is queued to the
    # GUI thread
    _events_waiting = Signal()

    def __init__(self, engine: Engine, agent: Agent, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.host = Host(agent)
        self.settings: Settings = agent.settings
        self.api_port: int | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._closed = False
        # the engine's events wait here for the GUI thread, which hands them on in slices
        self._inbox: deque[TaskLoopEvent] = deque()
        self._inbox_lock = threading.Lock()
        self._woken = False
        self._caught_up: asyncio.Event  # the engine's, made there
        self._events_waiting.connect(self._hand_on_events)
        engine.call(self._subscribe)

    @property
    def agent(self) -> Agent:
        return self.host.agent

    @property
    def data_dir(self) -> Path:
        return self.host.data_dir

    @property
    def check_model(self) -> bool:
        return self.host.agent.check_model

    @property
    def hotkey_problem(self) -> str:
        """Why the stop hotkey is not armed (one line), else ""."""
        return self.host.hotkey_problem

    # ── on the engine thread ─────────────────────────────────────────────────

    def _subscribe(self) -> None:
        self._caught_up = asyncio.Event()
        self._caught_up.set()
        self.host.agent.runner.services.pace = self._pace
        self._unsubscribe = self.host.subscribe(self._from_engine)

    def _from_engine(self, event: TaskLoopEvent) -> None:
        """An event of a run (engine thread): into the inbox, and wake the GUI thread once."""
        with self._inbox_lock:
            self._inbox.append(event)
            self._caught_up.clear()
            if self._woken:
                return
            self._woken = True
        self._events_waiting.emit()

    async def _pace(self) -> None:
        """Before a turn (engine thread): while the GUI thread has events waiting, let it
        catch up, for PACE_MAX_S at most. An engine that races ahead only makes the two
        threads fight over the GIL, and the window's paints slow down several times."""
        if self._caught_up.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._caught_up.wait(), PACE_MAX_S)

    def _set_caught_up(self) -> None:
        if not self._inbox:
            self._caught_up.set()

    # ── on the GUI thread ────────────────────────────────────────────────────

    @Slot()
    def _hand_on_events(self) -> None:
        """`run_event` for each waiting event, in order, for at most SLICE_S at a time: a burst
        (a fast run, many runs) never holds the GUI thread from painting and input."""
        deadline = time.perf_counter() + SLICE_S
        while True:
            with self._inbox_lock:
                if not self._inbox:
                    self._woken = False
                    # caught up once Qt has painted what these events changed (the paint is
                    # posted by now; a timer fires after the posted events of its turn)
                    QTimer.singleShot(1, self._after_paint)
                    return
                event = self._inbox.popleft()
            self.run_event.emit(event)
            if time.perf_counter() >= deadline:
                # the rest after Qt's own events: a timer (a 0 ms one is a posted call that
                # Qt would deliver in the same pass, before timers and paints)
                QTimer.singleShot(1, self._hand_on_events)
                return

    @Slot()
    def _after_paint(self) -> None:
        QTimer.singleShot(1, self._tell_caught_up)

    @Slot()
    def _tell_caught_up(self) -> None:
        with contextlib.suppress(EngineClosed):
            self.engine.call(self._set_caught_up)

    # ── runs ─────────────────────────────────────────────────────────────────

    def start(
        self,
        goal: str,
        *,
        max_steps: int | None = None,
        allowed_tools: tuple[str, ...] | None = None,
        ready: concurrent.futures.Future[None] | None = None,
    ) -> str:
        """Start a run now (admitted on the engine in order with every stop sent after this
        call); its id, made here. A refusal comes as `StartRefused` on `run_event`. `ready`:
        set it when the run may act (the window is out of the way)."""
        request = RunRequest(
            goal, max_steps=max_steps, allowed_tools=allowed_tools or None, ready=ready
        )
        self.engine.call(self.host.submit, request)
        return request.run_id

    def stop(self, run_id: str) -> None:
        self.engine.call(self.host.stop, run_id)

    def pause(self, run_id: str) -> None:
        self.engine.call(self.host.pause, run_id)

    def resume(self, run_id: str) -> None:
        self.engine.call(self.host.resume, run_id)

    def pause_all(self, pause: bool) -> None:
        self.engine.call(self.host.pause_all, pause)

    def stop_everything(self) -> None:
        """Stop every run here and in every other instance on the data dir (as the hotkey);
        `StoppedEverything` follows on `run_event`."""
        self.engine.call(self.host.stop_everything)

    def resolve_approval(self, approval_id: str, decision: ApprovalDecision) -> None:
        self.engine.call(self.host.answer, approval_id, decision)

    # ── routines (desktop_agent/routines/service.py) ─────────────────────────

    async def list_routines(self) -> list[Routine]:
        return await self.engine.run(self.agent.repo.list_routines())

    async def list_steps(self, run_id: str) -> list[StepView]:
        return await self.engine.run(self.agent.repo.list_steps(run_id))

    async def save_routine(
        self, run_id: str, name: str, params: dict[str, list[int]], grants: list[str]
    ) -> Routine:
        from desktop_agent.routines import service

        agent = self.agent
        return await self.engine.run(
            service.save_from_run(agent.repo, agent.registry, run_id, name, params, grants=grants)
        )

    async def set_routine_grants(self, name: str, grants: tuple[str, ...]) -> Routine:
        return await self.engine.run(self.agent.repo.update_routine(name, grants=grants))

    async def launch_routine(
        self,
        name: str,
        values: dict[str, str],
        *,
        before_run: Callable[[], Coroutine[Any, Any, None]] | None = None,
        stop: threading.Event | None = None,
    ) -> RunView:
        """Record and admit a routine run (as `launch`); the engine owns it."""
        from desktop_agent.routines import service

        stops_seen = self.agent.runner.stop_all_count
        hook = _from_engine_on_gui(before_run)

        async def go() -> RunView:
            handle = await service.launch(
                self.agent, name, values, stops_seen=stops_seen, before_run=hook
            )
            if stop is not None and stop.is_set():
                self.agent.runner.stop(handle.run_id)
            self.host.own(handle)
            return handle.run

        return await self.engine.run(go())

    async def list_runs(self, limit: int = 500) -> list[RunView]:
        return await self.engine.run(self.agent.repo.list_runs(limit=limit))

    async def replay(self, run_id: str) -> AsyncIterator[TaskLoopEvent]:
        """A stored run's events, read on the engine and handed over in batches."""
        gui_loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()

        def hand_over(item: Any) -> None:
            gui_loop.call_soon_threadsafe(queue.put_nowait, item)

        async def pump() -> None:
            batch: list[TaskLoopEvent] = []
            try:
                async for event in self.agent.replay(run_id):
                    batch.append(event)
                    if len(batch) >= REPLAY_BATCH:
                        hand_over(batch)
                        batch = []
                hand_over(batch)
                hand_over(_END)
            except Exception as error:  # noqa: BLE001 - raised again on the reader's side
                hand_over(batch)
                hand_over(error)

        pumping = self.engine.submit(pump())
        try:
            while (item := await queue.get()) is not _END:
                if isinstance(item, BaseException):
                    raise item
                for event in item:
                    yield event
        finally:
            pumping.cancel()

    # ── model and settings ───────────────────────────────────────────────────

    async def check_vision(self, settings: Settings) -> VisionVerdict:
        """Whether the model of `settings` can see (the Host's one model check, no chat
        request); ModelUnreachable when its server does not answer, ModelNotListed when it
        does not have the model (no verdict then)."""
        checked = await self.engine.run(self.host.check_model(settings))
        problem = checked.unreachable or checked.not_listed
        if problem is not None:
            raise problem
        assert checked.verdict is not None
        return checked.verdict

    async def find_model_servers(self) -> Discovery:
        """The model servers on this machine (127.0.0.1, the settings' probe ports; no key
        is sent), looked for on the engine."""
        return await self.engine.run(self.host.find_model_servers())

    async def test_connection(self, settings: Settings) -> str:
        """Reachability and vision of the model the settings dialog shows (no chat request;
        the dialog's URL may be unsaved: it gets the keyring's key only once saved)."""
        checked = await self.engine.run(self.host.check_model(settings, fresh=True))
        if checked.unreachable is not None:
            raise checked.unreachable
        verdict = checked.verdict
        assert verdict is not None
        sees = "can see screenshots" if verdict.can_see else "cannot see screenshots"
        return f"The server answers; {settings.model} {sees} ({verdict.detail})."

    async def apply_settings(self, settings: Settings) -> None:
        """Use `settings` from the next run on (policies and the approval timeout at once)."""
        await self.engine.run(self.host.apply_settings(settings))
        self.settings = settings

    # ── services (the Host's) ────────────────────────────────────────────────

    async def start_api(self) -> int:
        """Serve the local API (on the engine); its port. Raises DesktopAgentError/OSError."""
        self.api_port = await self.engine.run(self.host.serve_api(face="app"))
        log.info("app serves the local API on port %d", self.api_port)
        return self.api_port

    async def watch_user_input(self) -> None:
        """From now on the user's own input pauses every run (setting `pause_on_user_input`):
        such a pause comes as `RunPaused(reason="user")`."""
        await self.engine.run(self.host.watch_takeover())

    async def start_hotkey(self, combo: str) -> bool:
        """Grab the global stop hotkey (on the engine, which it stops directly); False when
        it cannot be (`hotkey_problem` says why). `StopHotkeyChanged` tells the views."""
        return await self.engine.run(self.host.grab_stop_hotkey(combo))

    async def stop_hotkey(self) -> None:
        if self.engine.running:
            await self.engine.run(self.host.release_stop_hotkey())

    async def close(self) -> None:
        """Close the Host (every run stopped and awaited, the hotkey, the API, the store and
        the desktop adapters), then end the engine's thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.engine.running:
            try:
                await self.engine.run(self._close_on_engine())
            except (DesktopAgentError, OSError, RuntimeError) as error:
                log.error("closing the engine's services: %s", one_line(error))
        await asyncio.to_thread(self.engine.close)

    async def _close_on_engine(self) -> None:
        await self.host.close()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None


def _from_engine_on_gui(
    gui_coroutine: Callable[[], Coroutine[Any, Any, None]] | None,
) -> Callable[[], Coroutine[Any, Any, None]] | None:
    """A coroutine function the engine awaits that runs `gui_coroutine` on the caller's (GUI)
    loop; call it on the GUI thread."""
    if gui_coroutine is None:
        return None
    gui_loop = asyncio.get_running_loop()

    async def hook() -> None:
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(gui_coroutine(), gui_loop))

    return hook
