"""EngineClient: the GUI thread's one door to the Agent, which lives on the engine thread.

Calls cross to the engine (`Engine.submit` / `call`); the engine's events come back as Qt
signals, queued to the GUI thread. The engine owns every run it starts (a task there reads
the run's events to the end), so no run depends on the GUI thread to go on or to stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from desktop_agent.core.errors import DesktopAgentError, RefusedToStart
from desktop_agent.core.events import TaskLoopEvent
from desktop_agent.core.models import ApprovalDecision, RunView, StepView
from desktop_agent.core.permissions import DEFAULT_POLICY
from desktop_agent.core.routine import Routine
from desktop_agent.host.engine import EngineClosed
from desktop_agent.ui.text import one_line

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.core.model_servers import Discovery
    from desktop_agent.core.runner import RunHandle
    from desktop_agent.host.engine import Engine
    from desktop_agent.planner import VisionVerdict
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
    """The Agent's services as calls from the GUI thread, its events as signals.

    Signals:
        run_event(object): every TaskLoopEvent of every run of this process, in order.
        start_refused(str, str): a run (id) was refused before it started, and why
            (the model does not answer or cannot see, ...); it was forgotten.
        stopped_everything(int, int): Stop all (hotkey, tray, window) was carried out:
            runs stopped here, runs stopped in other instances on the data dir.
        user_took_over(object): the user's own mouse or keyboard input paused these runs
            (a tuple of ids); they resume when the user says so.
        takeover_unavailable(str): the user's input cannot be watched (why, one line).
        hotkey_state(bool, str): whether the stop hotkey is armed, and why not (one line);
            after each start_hotkey, and when a started one stops being armed.

    Attributes:
        engine: the thread the Agent runs on.
        agent: the services; only its fixed parts (data_dir, registry, check_model) are
            read from the GUI thread, everything else goes through the engine.
        settings: the settings in use (the GUI's copy; `apply_settings` changes both).
        api_port: the local API's port once served, else None.
        hotkey_problem: why the stop hotkey is not on (one line), else "".
    """

    run_event = Signal(object)
    start_refused = Signal(str, str)
    stopped_everything = Signal(int, int)
    user_took_over = Signal(object)
    takeover_unavailable = Signal(str)
    hotkey_state = Signal(bool, str)
    # The engine thread emits these; connected to this object's own signals, they are
    # queued to its (the GUI) thread, where the public signals' slots then run.
    _events_waiting = Signal()
    _refused_from_engine = Signal(str, str)
    _stopped_from_engine = Signal(int, int)
    _took_over_from_engine = Signal(object)
    _unwatched_from_engine = Signal(str)
    _hotkey_from_engine = Signal(bool, str)

    def __init__(self, engine: Engine, agent: Agent, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.agent = agent
        self.settings: Settings = agent.settings
        self.api_port: int | None = None
        self.hotkey_problem = ""
        self._api: Any = None
        self._hotkey: Any = None
        self._owned: set[asyncio.Task[None]] = set()  # engine-side: the runs' readers
        self._unsubscribe: list[Callable[[], None]] = []
        self._closed = False
        # the engine's events wait here for the GUI thread, which hands them on in slices
        self._inbox: deque[TaskLoopEvent] = deque()
        self._inbox_lock = threading.Lock()
        self._woken = False
        self._caught_up: asyncio.Event  # the engine's, made there
        self._events_waiting.connect(self._hand_on_events)
        self._takeover_on = False  # watch_user_input was called (the app's services)
        self._heard: Any = None  # the UserTakeover this listens to
        self._refused_from_engine.connect(self.start_refused)
        self._stopped_from_engine.connect(self.stopped_everything)
        self._took_over_from_engine.connect(self.user_took_over)
        self._unwatched_from_engine.connect(self.takeover_unavailable)
        self._hotkey_from_engine.connect(self.hotkey_state)
        engine.call(self._subscribe)

    @property
    def data_dir(self) -> Path:
        return self.agent.data_dir

    @property
    def check_model(self) -> bool:
        return self.agent.check_model

    # ── on the engine thread ─────────────────────────────────────────────────

    def _subscribe(self) -> None:
        self._caught_up = asyncio.Event()
        self._caught_up.set()
        self.agent.runner.services.pace = self._pace
        self._unsubscribe = [
            self.agent.runner.subscribe(self._from_engine),
        ]

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

    def _own(self, handle: RunHandle) -> None:
        task = asyncio.get_running_loop().create_task(self._read_to_end(handle))
        self._owned.add(task)
        task.add_done_callback(self._owned.discard)

    async def _read_to_end(self, handle: RunHandle) -> None:
        """The run's owner: reads its events to the end (the views hear them as signals)."""
        try:
            async for _ in handle.events:
                pass
        except RefusedToStart as error:
            self._refused_from_engine.emit(handle.run_id, one_line(error))
        except Exception as error:  # noqa: BLE001 - said in one line; the app goes on
            log.exception("run %s failed to start", handle.run_id)
            self._refused_from_engine.emit(handle.run_id, one_line(error))

    def _stop_everything(self) -> int:
        """Stop every run here, then tell the other instances on the data dir (a task)."""
        here = self.agent.stop_all()
        task = asyncio.get_running_loop().create_task(self._stop_other_instances(here))
        self._owned.add(task)
        task.add_done_callback(self._owned.discard)
        return here

    async def _stop_other_instances(self, here: int) -> None:
        from desktop_agent.api.instances import stop_all_instances

        try:
            elsewhere = await stop_all_instances(self.agent.data_dir, exclude_pid=os.getpid())
        except Exception:  # noqa: BLE001 - this instance's runs are stopped either way
            log.exception("telling the other instances to stop failed")
            elsewhere = 0
        self._stopped_from_engine.emit(here, elsewhere)

    # the UserTakeover's listener (called on the engine's loop)
    def took_over(self, run_ids: tuple[str, ...]) -> None:
        self._took_over_from_engine.emit(run_ids)

    def unavailable(self, why: str) -> None:
        self._unwatched_from_engine.emit(why)

    async def _follow_settings_takeover(self) -> None:
        """Watch the user's input while the setting `pause_on_user_input` is on."""
        agent = self.agent
        if agent.settings.pause_on_user_input:
            takeover = agent.watch_user_input()  # the one it has, or a new one
            if takeover is not None and takeover is not self._heard:
                self._heard = takeover
                takeover.add_listener(self)
        elif agent.takeover is not None:
            takeover, agent.takeover = agent.takeover, None
            await takeover.close()

    def on_hotkey(self) -> None:
        """The global stop hotkey, delivered on the engine's loop: no GUI thread involved."""
        log.info("stop hotkey pressed")
        self._stop_everything()

    # ── on the GUI thread ────────────────────────────────────────────────────

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

    def _after_paint(self) -> None:
        QTimer.singleShot(1, self._tell_caught_up)

    def _tell_caught_up(self) -> None:
        with contextlib.suppress(EngineClosed):
            self.engine.call(self._set_caught_up)

    # ── runs ─────────────────────────────────────────────────────────────────

    async def launch(
        self,
        goal: str,
        *,
        max_steps: int | None = None,
        allowed_tools: tuple[str, ...] | None = None,
        before_run: Callable[[], Coroutine[Any, Any, None]] | None = None,
        stop: threading.Event | None = None,
    ) -> RunView:
        """Record and admit a run (a stop reaches it from now on); the engine owns it.

        The model is checked inside the run: a refusal comes as `start_refused`. The
        coroutine `before_run` is run on the caller's (GUI) loop just before the first turn.
        `stop`: the caller's Stop while the run is on its way in (set on any thread); seen on
        the engine right after admission, the run ends before its model is even checked.
        """
        # the stops asked until now, read on the GUI thread when the user asks for the run:
        # a stop-all that reaches the engine before this launch does still stops it
        stops_seen = self.agent.runner.stop_all_count
        hook = _from_engine_on_gui(before_run)

        async def go() -> RunView:
            handle = await self.agent.launch(
                goal,
                max_steps=max_steps,
                allowed_tools=allowed_tools,
                before_run=hook,
                stops_seen=stops_seen,
            )
            if stop is not None and stop.is_set():
                self.agent.runner.stop(handle.run_id)  # before its events (and checks) begin
            self._own(handle)
            return handle.run

        return await self.engine.run(go())

    def stop(self, run_id: str) -> None:
        self.engine.call(self.agent.runner.stop, run_id)

    def pause(self, run_id: str) -> None:
        self.engine.call(self.agent.runner.pause, run_id)

    def resume(self, run_id: str) -> None:
        self.engine.call(self.agent.runner.resume, run_id)

    def pause_all(self, pause: bool) -> None:
        def toggle() -> None:
            runner = self.agent.runner
            for run_id in runner.active_ids:
                (runner.pause if pause else runner.resume)(run_id)

        self.engine.call(toggle)

    def stop_everything(self) -> None:
        """Stop every run here and in every other instance on the data dir (as the hotkey)."""
        self.engine.call(self._stop_everything)

    def resolve_approval(self, approval_id: str, decision: ApprovalDecision) -> None:
        self.engine.call(self.agent.approvals.resolve, approval_id, decision)

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
            self._own(handle)
            return handle.run

        return await self.engine.run(go())

    async def load_run(self, run_id: str) -> RunView | None:
        """The stored view of a run (a live run's totals as of its last finished turn)."""
        return await self.engine.run(self.agent.repo.get_run(run_id))

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
        """Whether the model of `settings` can see (no chat request), checked on the engine;
        ModelUnreachable when its server does not answer, ModelNotListed when it does not
        have the model (no verdict then)."""
        from desktop_agent.host.model_check import check_model

        checked = await self.engine.run(check_model(settings))
        problem = checked.unreachable or checked.not_listed
        if problem is not None:
            raise problem
        assert checked.verdict is not None
        return checked.verdict

    async def find_model_servers(self) -> Discovery:
        """The model servers on this machine (127.0.0.1, the settings' probe ports; no key
        is sent), looked for on the engine."""
        from desktop_agent.planner.discovery import discover

        return await self.engine.run(discover(tuple(self.settings.probe_ports)))

    async def test_connection(self, settings: Settings) -> str:
        """Reachability and vision of the model the settings dialog shows (no chat request;
        the dialog's URL may be unsaved: it gets the keyring's key only once saved)."""
        from desktop_agent.host.model_check import check_model

        checked = await self.engine.run(check_model(settings, fresh=True))
        if checked.unreachable is not None:
            raise checked.unreachable
        verdict = checked.verdict
        assert verdict is not None
        sees = "can see screenshots" if verdict.can_see else "cannot see screenshots"
        return f"The server answers; {settings.model} {sees} ({verdict.detail})."

    async def apply_settings(self, settings: Settings) -> None:
        """Use `settings` from the next run on (policies and the approval timeout at once)."""

        async def go() -> None:
            agent = self.agent
            agent.settings = settings
            for spec in agent.registry.specs():
                policy = settings.policies.get(spec.name, DEFAULT_POLICY[spec.risk])
                agent.permissions.set_policy(spec.name, policy)
            services = agent.runner.services
            services.approval_timeout_s = settings.approval_timeout_s
            services.sensitive_targets = tuple(settings.sensitive_targets)
            services.budget = settings.budget()
            if self._takeover_on:
                await self._follow_settings_takeover()

        await self.engine.run(go())
        self.settings = settings

    # ── services ─────────────────────────────────────────────────────────────

    async def start_api(self) -> int:
        """Serve the local API (on the engine); its port. Raises DesktopAgentError/OSError."""
        from desktop_agent.api.server import ApiServer

        async def go() -> int:
            server = ApiServer(self.agent, face="app")
            port = await server.start()
            self._api = server
            return port

        self.api_port = await self.engine.run(go())
        log.info("app serves the local API on port %d", self.api_port)
        return self.api_port

    async def watch_user_input(self) -> None:
        """From now on the user's own input pauses every run (setting `pause_on_user_input`):
        the watch starts on the engine with a run and stops when none is left; the
        `user_took_over` and `takeover_unavailable` signals tell the views."""
        self._takeover_on = True
        await self.engine.run(self._follow_settings_takeover())

    async def start_hotkey(self, combo: str) -> bool:
        """Grab the global stop hotkey; it stops runs on the engine's loop directly.

        False (and `hotkey_problem` says why) when it cannot be grabbed.
        """
        from desktop_agent.desktop.hotkey import HotkeyUnavailable, start_global_hotkey

        await self.stop_hotkey()
        # what the hotkey runs on the engine is imported now, not on the first press
        await asyncio.to_thread(importlib.import_module, "desktop_agent.api.instances")
        try:
            # opening an X connection and grabbing keys are round trips: not on the GUI thread
            self._hotkey = await asyncio.to_thread(
                functools.partial(
                    start_global_hotkey,
                    combo,
                    self.on_hotkey,
                    self.engine.loop,
                    on_change=self._on_hotkey_state,
                )
            )
        except HotkeyUnavailable as error:
            self.hotkey_problem = one_line(error)
            log.warning("stop hotkey %s unavailable: %s", combo, error)
            self.hotkey_state.emit(False, self.hotkey_problem)
            return False
        self.hotkey_problem = ""
        self.hotkey_state.emit(True, "")
        return True

    def _on_hotkey_state(self, armed: bool, why: str) -> None:
        """On the engine: the hotkey's listener ended by itself (or came back)."""
        self.hotkey_problem = "" if armed else one_line(why)
        self._hotkey_from_engine.emit(armed, self.hotkey_problem)

    async def stop_hotkey(self) -> None:
        hotkey, self._hotkey = self._hotkey, None
        if hotkey is not None:
            await asyncio.to_thread(hotkey.stop)  # joins the listener thread (up to 2 s)

    async def close(self) -> None:
        """Stop every run (stored stopped / user_stop), then close the API, the hotkey, the
        Agent (store, desktop adapters) and end the engine's thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self.stop_hotkey()
        if self.engine.running:
            try:
                await self.engine.run(self._close_on_engine())
            except (DesktopAgentError, OSError, RuntimeError) as error:
                log.error("closing the engine's services: %s", one_line(error))
        await asyncio.to_thread(self.engine.close)

    async def _close_on_engine(self) -> None:
        self.agent.stop_all()
        if self._owned:
            await asyncio.gather(*self._owned, return_exceptions=True)
        if self._api is not None:
            await self._api.close()
            self._api = None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        await self.agent.close()


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
