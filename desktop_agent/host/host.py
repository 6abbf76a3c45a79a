"""Host: the engine side of one process, shared by every face (the window, `run`, `serve`, …).

A face gets a Host with `Host.serving` (or `Host.open`, then `close`), turns on what it
serves with `turn_on` (the one start-up order: takeover watch, signals, its first run, the
local API, the stop hotkey), starts runs with `start` (one call, no await: the handle and
its run id exist before any work, so every stop after it reaches the run), follows them with
`subscribe` (every event of every run, and the host's own: a start refused,
stop-everything), and ends with `close`. The Host owns what is the same for
every face: the runs (it reads each run's events to the end), the local API server, the
global stop hotkey, stop-everything (this instance and the others on the data dir), the
signal handlers, the takeover watch and the settings.

Everything here runs on one asyncio loop — the CLI's main loop, the app's engine thread —
and must be called on it. From another thread, cross with `Engine.call` (plain calls:
start, stop, pause, …; they land in order) or `Engine.run` (coroutines).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib
import logging
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from desktop_agent.core.control import RunControl
from desktop_agent.core.errors import ConfigError, DesktopAgentError
from desktop_agent.core.events import (
    RunFinished,
    StartRefused,
    StopHotkeyChanged,
    StoppedEverything,
    TakeoverUnavailable,
    TaskLoopEvent,
    UserTookOver,
)
from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, RunView
from desktop_agent.core.permissions import DEFAULT_POLICY
from desktop_agent.core.text import one_line
from desktop_agent.host.records import Records
from desktop_agent.host.starts import (
    QueuedRun,
    RoutineRequest,
    RunRequest,
    StartRequest,
    admit,
    new_run_id,
    store_queued,
)
from desktop_agent.instances.stop_all import mark_stop_all, one_mark_later, read_stop_mark

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.core.model_servers import Discovery
    from desktop_agent.core.permissions import Permissions
    from desktop_agent.core.ports import PermissionGate, Planner
    from desktop_agent.core.runner import RunHandle
    from desktop_agent.core.tools import ToolRegistry, ToolSpec
    from desktop_agent.host.calibration import ScreenCalibration
    from desktop_agent.host.person import AskHuman
    from desktop_agent.host.requests import Ready
    from desktop_agent.model_check import ModelCheck, VisionVerdict
    from desktop_agent.settings import Settings

__all__ = [
    "ApiServing",
    "Face",
    "Host",
    "HostedRun",
    "LocalApi",
    "QueuedRun",
    "RoutineRequest",
    "RunRequest",
    "Served",
    "new_run_id",
]

log = logging.getLogger(__name__)

Listener = Callable[[TaskLoopEvent], None]
T = TypeVar("T")
#: how often the stop-all mark is looked at while no stop-all can find this instance (a stat)
STOP_MARK_POLL_S = 0.05


class ApiServing(Protocol):
    """A local API server made for a Host (api/server.py `ApiServer`)."""

    async def start(self, port: int = 0) -> int:
        """Serve on 127.0.0.1:`port` (0: any) and register this instance; the port."""
        ...

    async def close(self) -> None: ...


class LocalApi(Protocol):
    """Makes the local API's server for a Host: the port through which a face hands the API
    in (the top floor's `desktop_agent.launch.local_api`), so the host imports nothing of
    the faces above it. It may import on a worker thread: the host's loop goes on."""

    async def __call__(self, host: Host, *, controls_only: bool, face: str) -> ApiServing: ...


@dataclass(frozen=True, slots=True)
class Face:
    """What a face turns on around its work; `Host.turn_on` turns it on in the one order."""

    #: what its instance file says (instances/registry.py): app, run, serve, mcp, doctor
    name: str
    #: the local API: "full" (the app, serve), "controls" (stop, pause, resume, approvals:
    #: a face whose own runs follow their own approvals), "" none
    api: Literal["full", "controls", ""] = "controls"
    port: int = 0
    #: a local API that cannot be served is told in `Served.api_problem`, the face goes on
    #: (the window, a calibration); else the error is raised
    api_optional: bool = False
    hotkey: bool = True
    takeover: bool = True
    #: SIGINT and SIGTERM (Ctrl+C) stop every run here, then call `on_signal`; main thread only
    signals: bool = True
    on_signal: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
class Served:
    """What `Host.turn_on` turned on: the face's first run, and what could not be had."""

    run: HostedRun | None = None
    #: why the local API is not served (one line; `Face.api_optional`), else ""
    api_problem: str = ""
    #: whether the stop hotkey is on (`Host.hotkey_problem` says why not)
    hotkey_armed: bool = False


class HostedRun:
    """A run the host has admitted: stoppable from its first instant; the host owns it.

    Attributes:
        run_id: the request's (its view comes with `run_started`).
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._queue: asyncio.Queue[TaskLoopEvent] = asyncio.Queue()
        self._final: asyncio.Future[RunView | None] = asyncio.get_running_loop().create_future()

    async def events(self) -> AsyncIterator[TaskLoopEvent]:
        """This run's events from its start (buffered: reading late loses none), ending
        with `run_finished` or `start_refused`. One reader per run."""
        while True:
            event = await self._queue.get()
            yield event
            if isinstance(event, RunFinished | StartRefused):
                return

    async def final(self) -> RunView | None:
        """The run's final view once it ended; None when its start was refused."""
        return await asyncio.shield(self._final)

    def _put(self, event: TaskLoopEvent) -> None:
        self._queue.put_nowait(event)
        if isinstance(event, RunFinished | StartRefused) and not self._final.done():
            self._final.set_result(event.run if isinstance(event, RunFinished) else None)


class Host:
    """One process's engine side; see the module docstring.

    A face on another thread may read `settings` (replaced whole, never changed in place),
    `data_dir`, `tools`, `checks_model`, `api_port`, `hotkey_problem` and `stops` from its
    own thread; everything else it asks on the host's loop.

    The Agent behind it is its own (the faces go through the Host: docs/architecture.md).

    Attributes:
        records: the history and the routines, as a face reads and edits them.
        api_port: the local API's port once `serve_api` ran, else None.
        hotkey_problem: why the stop hotkey is not on (one line), else "".
    """

    def __init__(
        self, agent: Agent, *, stop_mark: str | None = None, local_api: LocalApi | None = None
    ) -> None:
        """`local_api`: what makes the local API's server (`serve_api`; a face's `Face.api`);
        without it this host serves none."""
        self._agent = agent
        self._local_api = local_api
        self.records = Records(agent)
        self.api_port: int | None = None
        self.hotkey_problem = ""
        self._listeners: list[Listener] = []
        self._owned: set[asyncio.Task[Any]] = set()
        self._closers: list[Callable[[], Any]] = []
        self._closed = False
        self._hotkey: Any = None
        self._watching = False
        self._heard: Any = None  # the UserTakeover this listens to
        self._unsubscribe = agent.runner.subscribe(self._tell)
        # where the stop-alls' marks stood when this face was asked for what it starts (`run`:
        # its process's entry), else as this host opened: a stop-all marked since, before its
        # API is up (and findable), stops its runs (start, serve_api)
        self._stop_mark = read_stop_mark(str(agent.data_dir)) if stop_mark is None else stop_mark
        self._mark_watch: asyncio.Task[None] | None = None

    @classmethod
    async def open(
        cls,
        data_dir: Path,
        settings: Settings,
        *,
        gate: PermissionGate | None = None,
        stop_mark: str | None = None,
        local_api: LocalApi | None = None,
        ask_person: AskHuman | None = None,
    ) -> Host:
        """Open the store (recovering crashed runs) and build the services, on this loop.

        `stop_mark`: where the stop-all marks stood (instances/stop_all.read_stop_mark) when the
        face was asked for the run it starts — `run` and `routine run` at their process's
        entry (desktop_agent/__main__.py); by default, now. A stop-all marked since then,
        before this host's API is registered (when it could not find this instance), stops
        the runs started here. `local_api`: the local API's maker, from the face that serves
        it (`Face.api`; the top floor's `desktop_agent.launch.local_api`). `ask_person`: who
        answers a question only a person answers where the face has no dialog of its own
        (`serve`: host/person.py PersonOnlyGate); the API's broker answers the rest."""
        from desktop_agent.agent import Agent

        approvals = None
        if ask_person is not None and gate is None:
            from desktop_agent.core.permissions import ApprovalBroker
            from desktop_agent.host.person import PersonOnlyGate

            approvals = ApprovalBroker()
            gate = PersonOnlyGate(approvals, ask_person)
        agent = await Agent.open(data_dir, settings, gate=gate, approvals=approvals)
        return cls(agent, stop_mark=stop_mark, local_api=local_api)

    @classmethod
    @contextlib.asynccontextmanager
    async def serving(
        cls,
        data_dir: Path,
        settings: Settings,
        *,
        gate: PermissionGate | None = None,
        stop_mark: str | None = None,
        local_api: LocalApi | None = None,
        ask_person: AskHuman | None = None,
    ) -> AsyncIterator[Host]:
        """A face's Host from its opening to its closing, whatever ends the face's work (an
        error, a signal, the client gone): `close` stops every run and waits for them, then
        closes what was turned on, then the services. The face turns on what it serves with
        `turn_on`, once it has subscribed and read what it asks before its run."""
        host = await cls.open(
            data_dir,
            settings,
            gate=gate,
            stop_mark=stop_mark,
            local_api=local_api,
            ask_person=ask_person,
        )
        try:
            yield host
        finally:
            await host.close()

    @property
    def settings(self) -> Settings:
        return self._agent.settings

    @property
    def data_dir(self) -> Path:
        return self._agent.data_dir

    @property
    def tools(self) -> tuple[ToolSpec, ...]:
        """The tools a run may be offered (fixed for the process)."""
        return self._agent.registry.specs()

    @property
    def registry(self) -> ToolRegistry:
        """The tools and their argument models (fixed for the process)."""
        return self._agent.registry

    @property
    def permissions(self) -> Permissions:
        """The policies and the grants every run's gate reads (a face's own grants follow
        their revocations)."""
        return self._agent.permissions

    @property
    def checks_model(self) -> bool:
        """Whether the model is checked before a run (off only for tests' fakes)."""
        return self._agent.check_model

    # ── runs ─────────────────────────────────────────────────────────────────

    def start(self, request: StartRequest, *, planner: Planner | None = None) -> HostedRun:
        """Admit a run now and own it: stop, pause, stop-everything reach it from this
        instant. No await: what takes time happens inside the run (host/starts.py: the
        store read of a routine or a queued run, the model check, the planner, the face's
        `ready`); a stop during any of it ends the run stopped / user_stop, no model
        request, no input. A refusal comes as `StartRefused` and nothing is stored.

        `planner`: a run whose planner is at hand — an MCP client's own call (mcp/calls.py),
        where no model is asked and none is checked.

        Raises AlreadyRunning, and for a goal RefusedToStart (empty, an unknown tool), at once.
        """
        handle = admit(self._agent, request, planner=planner)
        hosted = HostedRun(handle.run_id)
        self._spawn(self._own(hosted, handle.events))
        if self.api_port is None:
            # no stop-all can find this instance yet: one that marked meanwhile stops the run
            # now, before its model check; and the mark is watched while it cannot be found
            self._catch_up_on_stop_all()
            self._watch_stop_mark()
        return hosted

    def submit(self, request: StartRequest) -> None:
        """`start` for a face on another thread (sent with `Engine.call`, so it lands in
        order with every stop sent after it): a request refused at once (an empty goal, an
        unknown tool) comes as `StartRefused` like any refusal."""
        try:
            self.start(request)
        except DesktopAgentError as error:
            self._tell(StartRefused(request.run_id, one_line(error)))
        except Exception as error:  # noqa: BLE001 - said in one line; the face stays usable
            log.exception("starting a run failed")
            self._tell(StartRefused(request.run_id, one_line(error)))

    async def _own(self, hosted: HostedRun, events: AsyncIterator[TaskLoopEvent]) -> None:
        """The run's owner: reads its events to the end (subscribers hear them as they come)."""
        try:
            async for event in events:
                hosted._put(event)
        except DesktopAgentError as error:  # refused: no such routine, no model, …
            found = getattr(error, "found", None)  # model servers found on this machine
            self._refused(hosted, one_line(error), found.advice() if found is not None else "")
        except Exception as error:  # noqa: BLE001 - said in one line; the host goes on
            log.exception("run %s failed to start", hosted.run_id)
            self._refused(hosted, one_line(error) or type(error).__name__)

    def _refused(self, hosted: HostedRun, reason: str, advice: str = "") -> None:
        refused = StartRefused(hosted.run_id, reason, advice)
        self._tell(refused)
        hosted._put(refused)

    def admit(self, request: StartRequest) -> RunHandle:
        """A run whose events the face streams and owns (the API's SSE: a client that goes
        away ends it), admitted in this step as `start`'s are; not told to the subscribers'
        `HostedRun`s. RefusedToStart / AlreadyRunning as `start`."""
        return admit(self._agent, request)

    async def store_queued(self, request: RunRequest) -> RunView:
        """The request stored as a queued run (the API's POST); nothing starts."""
        return await store_queued(self._agent, request)

    def stop(self, run_id: str) -> bool:
        """Stop one run; whether it was active."""
        return self._agent.runner.stop(run_id)

    def stop_here(self) -> int:
        """Stop this process's runs only: no mark, no other instance (what another
        instance's stop-all asks of this one); how many."""
        return self._agent.stop_all()

    def hold_calibration(self, calibration: ScreenCalibration) -> None:
        """From now until it closes, every stop-all of this process (stop_everything: the
        window's and the tray's Stop all, the stop hotkey; the local API's stop-all, so
        another process's; a signal) and `stop_held_work` stop `calibration`: its model
        request is cancelled as a run's is, and none follows. It is not a run: a stop-all's
        count ("stopped N run(s)", `StoppedEverything.here`) leaves it out. While no stop-all
        can find this instance (its API not served), the stop-all mark is watched for it, as
        for a run and a model check."""
        calibration.held_until_closed(self._agent.runner.hold(calibration.control))
        if self.api_port is None:
            self._catch_up_on_stop_all()  # one that marked before: stops it now
            self._watch_stop_mark()

    def stop_held_work(self) -> int:
        """Stop every calibration and model check going on (the window's Stop); how many
        there were."""
        return self._agent.runner.stop_held()

    @property
    def stops(self) -> int:
        """How many stops have reached the work held here (every stop-all, the window's Stop):
        read from any thread when a face asks for a model check and handed to it as
        `asked_at`, so that a stop landing before the check begins on this loop stops it too."""
        return self._agent.runner.stops

    async def _held(self, work: Coroutine[Any, Any, T], asked_at: int | None) -> T:
        """`work`, a request to a model server outside a run, held as a calibration is: every
        stop of this process (each stop-all, so the API's and another process's, the hotkey,
        the window's Stop; a stop-all marked while this instance could not be found) gives up
        the request in flight and raises StopRequested; none follows. A stop after
        `asked_at` (a count of `stops`) and before now stops it before it sends anything."""
        runner = self._agent.runner
        if self.api_port is None:
            self._catch_up_on_stop_all()  # a stop-all that could not find this instance
        control = RunControl()
        if asked_at is not None and asked_at != runner.stops:
            control.stop()  # stopped between the ask and now: guard sends nothing
        release = runner.hold(control)
        if self.api_port is None:
            self._watch_stop_mark()
        try:
            return await control.guard(work)
        finally:
            release()

    def pause(self, run_id: str) -> bool:
        return self._agent.runner.pause(run_id)

    def resume(self, run_id: str) -> bool:
        return self._agent.runner.resume(run_id)

    def pause_all(self, pause: bool) -> None:
        """Pause (or resume) every active run (the tray's Pause)."""
        runner = self._agent.runner
        for run_id in runner.active_ids:
            (runner.pause if pause else runner.resume)(run_id)

    def answer(self, approval_id: str, decision: ApprovalDecision) -> bool:
        """Answer a pending approval (whoever answers first wins)."""
        return self._agent.approvals.resolve(approval_id, decision)

    @property
    def pending_approvals(self) -> list[ApprovalRequest]:
        return self._agent.approvals.pending

    def asked_for_another_process(self, approval_id: str) -> bool:
        """Whether `approval_id` is another process's question (`ask_here`): only this
        process's person may allow it."""
        return self._agent.asked_for_another_process(approval_id)

    async def ask_here(self, approval: ApprovalRequest) -> ApprovalDecision:
        """Another process's question, asked of this process's person (Agent.ask_here)."""
        return await self._agent.ask_here(approval)

    def stop_everything(self) -> int:
        """Stop every run here at once, then tell the other instances on the data dir;
        `StoppedEverything(here, elsewhere)` follows once they answered. Runs stopped here."""
        self._mark_own_stop_all()
        here = self._agent.stop_all()
        self._spawn(self._stop_other_instances(here))
        return here

    async def _stop_other_instances(self, here: int) -> None:
        from desktop_agent.instances.registry import stop_all_instances

        try:
            elsewhere = await stop_all_instances(
                self.data_dir, exclude_pid=os.getpid(), marked=True
            )
        except Exception:  # noqa: BLE001 - this instance's runs are stopped either way
            log.exception("telling the other instances to stop failed")
            elsewhere = 0
        self._tell(StoppedEverything(here, elsewhere))

    def _mark_own_stop_all(self) -> None:
        """Mark this stop-all for the instances still starting (instances/stop_all.py
        STOP_MARK_FILE), in this step: its mark is not one this host must catch up on (it
        stops every run here itself), unless another stop-all marked too."""
        data_dir = str(self.data_dir)
        before = read_stop_mark(data_dir)
        mark_stop_all(data_dir)
        after = read_stop_mark(data_dir)
        if self._stop_mark == before and one_mark_later(before, after):
            self._stop_mark = after

    # ── events ───────────────────────────────────────────────────────────────

    def pace_runs(self, pace: Callable[[], Awaitable[None]] | None) -> None:
        """What every run awaits before a turn (the window: until it has painted the
        events before it, at most briefly; `RunnerServices.pace`); None: nothing."""
        self._agent.runner.services.pace = pace

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Hear every event of every run and the host's own, in order, on the host's loop.
        The listener must not block (hand the event on). Returns the unsubscribe call."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _tell(self, event: TaskLoopEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    # ── services a face turns on ─────────────────────────────────────────────

    async def turn_on(
        self, face: Face, *, start: Callable[[Ready], StartRequest] | None = None
    ) -> Served:
        """What `face` serves, in the one start-up order of every face (`run`, `routine run`,
        `serve`, `mcp`, the window, `doctor --calibrate`):

        1. the takeover watch (`TakeoverUnavailable` goes to the face's subscribers);
        2. the signals: from here a Ctrl+C stops every run;
        3. the face's first run, `start(ready)`, admitted in this step (no await since the
           signals: every stop from now on reaches it); RefusedToStart at once, before
           anything is served;
        4. the local API (controls only, or full), which registers this instance: every
           stop-all finds it from then (before, the host watches the stop-all mark), and
           every run it starts has the takeover watch from its first instant;
        5. the stop hotkey;
        6. only then may the first run act (`ready`): its model check went on meanwhile.
        """
        if face.takeover:
            await self.watch_takeover()
        if face.signals:
            self.stop_on_signals(then=face.on_signal)
        ready: Ready = concurrent.futures.Future()
        hosted = self.start(start(ready)) if start is not None else None
        api_problem = ""
        if face.api:
            controls_only = face.api == "controls"
            try:
                await self.serve_api(face.port, controls_only=controls_only, face=face.name)
            except (DesktopAgentError, OSError) as error:
                if not face.api_optional:
                    raise
                api_problem = one_line(error)
                log.warning("local API not served: %s", error)
        armed = await self.grab_stop_hotkey() if face.hotkey else False
        ready.set_result(None)
        return Served(hosted, api_problem, armed)

    async def serve_api(self, port: int = 0, *, controls_only: bool = False, face: str = "") -> int:
        """Serve the local API on loopback and register this instance (`face`: app, run,
        serve, mcp — what its instance file says); its port. The server is the `local_api`
        this host was opened with (ConfigError without one)."""
        if self._local_api is None:
            raise ConfigError("this face was given no local API to serve")
        server = await self._local_api(self, controls_only=controls_only, face=face)
        self.api_port = await server.start(port)
        self._closers.append(server.close)
        # the runs admitted meanwhile (waiting for this API to act) and a stop-all that came
        # while this instance could not be found: from now on every stop-all finds it
        self._catch_up_on_stop_all()
        log.info("local API on 127.0.0.1:%d%s", self.api_port, " (controls only)" * controls_only)
        return self.api_port

    def _watch_stop_mark(self) -> None:
        if self._mark_watch is None or self._mark_watch.done():
            self._mark_watch = self._spawn(self._follow_stop_mark())

    async def _follow_stop_mark(self) -> None:
        """While runs or held work (a model check) go on here and no stop-all can find this
        instance (its API is not registered: still coming, or it could not be served), look at
        the stop-all mark every STOP_MARK_POLL_S: a stop-all from another process stops them
        all the same."""
        while self.api_port is None and self._agent.runner.busy and not self._closed:
            await asyncio.sleep(STOP_MARK_POLL_S)
            if self.api_port is None:
                self._catch_up_on_stop_all()

    def _catch_up_on_stop_all(self) -> None:
        """Stop every run here when a stop-all marked STOP_MARK_FILE since the last look (it
        came while this instance was starting and did not find it); the mark is seen once."""
        mark = read_stop_mark(str(self.data_dir))
        if mark == self._stop_mark:
            return
        self._stop_mark = mark
        log.info("a stop-all came while this instance started: its runs are stopped")
        self._agent.stop_all()

    async def grab_stop_hotkey(self, combo: str | None = None) -> bool:
        """The global stop hotkey (`combo`, default the settings') stops everything, delivered
        on this loop. Subscribers hear `StopHotkeyChanged` (armed or not, why), now and whenever
        that changes; False (and `hotkey_problem` says why) when it cannot be had."""
        await self.release_stop_hotkey()
        combo = combo or self.settings.stop_hotkey
        from desktop_agent.desktop.hotkey import HotkeyUnavailable, start_global_hotkey

        # what the hotkey runs is imported now, not on the first press
        await asyncio.to_thread(importlib.import_module, "desktop_agent.instances.registry")
        loop = asyncio.get_running_loop()
        try:
            # an X connection and a few round trips: not on the loop's thread
            self._hotkey = await asyncio.to_thread(
                partial(
                    start_global_hotkey,
                    combo,
                    self._on_hotkey,
                    loop,
                    on_change=self._hotkey_changed,
                )
            )
        except HotkeyUnavailable as error:
            log.warning("stop hotkey %s unavailable: %s", combo, error)
            return self._hotkey_state(False, one_line(error))
        log.info("global stop hotkey %s is on", combo)
        return self._hotkey_state(True, "")

    def _hotkey_state(self, armed: bool, why: str) -> bool:
        self.hotkey_problem = "" if armed else one_line(why)
        self._tell(StopHotkeyChanged(armed, self.hotkey_problem))
        return armed

    def _hotkey_changed(self, armed: bool, why: str) -> None:
        """The listener stopped being armed (or came back), on this loop."""
        self._hotkey_state(armed, why)

    async def release_stop_hotkey(self) -> None:
        hotkey, self._hotkey = self._hotkey, None
        if hotkey is not None:
            await asyncio.to_thread(hotkey.stop)  # joins the listener thread (up to 2 s)

    def _on_hotkey(self) -> None:
        log.info("stop hotkey pressed")
        self.stop_everything()

    def stop_on_signals(self, then: Callable[[], None] | None = None) -> None:
        """SIGINT and SIGTERM (Ctrl+C, Ctrl+Break on Windows) stop every run here (then call
        `then`); main thread only."""
        loop = asyncio.get_running_loop()

        def on_signal() -> None:
            self._agent.stop_all()
            if then is not None:
                then()

        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(signum, on_signal)
            except NotImplementedError:
                # Windows' ProactorEventLoop has none (CPython 3.11 Lib/asyncio/events.py:573);
                # it wakes on a signal (set_wakeup_fd, proactor_events.py:642), and a plain
                # handler hands the signal to it
                previous = signal.signal(signum, lambda *_: loop.call_soon_threadsafe(on_signal))
                self._closers.append(partial(signal.signal, signum, previous))
                continue
            self._closers.append(partial(loop.remove_signal_handler, signum))

    async def watch_takeover(self) -> None:
        """From now on the user's own input pauses every run while the setting
        `pause_on_user_input` is on (`apply_settings` follows it): such a pause comes as
        `RunPaused(reason="user")`; a watch that cannot start as `TakeoverUnavailable`."""
        self._watching = True
        await self._follow_takeover_setting()

    async def _follow_takeover_setting(self) -> None:
        agent = self._agent
        if agent.settings.pause_on_user_input:
            takeover = agent.watch_user_input()  # the one it has, or a new one
            if takeover is not None and takeover is not self._heard:
                self._heard = takeover
                takeover.add_listener(self)
        elif agent.takeover is not None:
            takeover, agent.takeover = agent.takeover, None
            await takeover.close()

    # the UserTakeover's listener (on this loop)
    def took_over(self, run_ids: tuple[str, ...]) -> None:
        for run_id in run_ids:
            self._tell(UserTookOver(run_id))

    def unavailable(self, why: str) -> None:
        self._tell(TakeoverUnavailable(why))

    # ── settings and the model ───────────────────────────────────────────────

    async def apply_settings(self, settings: Settings) -> None:
        """Use `settings` from now on: the next run's model and limits; the policies, the
        approval timeout, the budget and the takeover watch at once."""
        agent = self._agent
        agent.settings = settings
        for spec in agent.registry.specs():
            policy = settings.policies.get(spec.name, DEFAULT_POLICY[spec.risk])
            agent.permissions.set_policy(spec.name, policy)
        services = agent.runner.services
        services.approval_timeout_s = settings.approval_timeout_s
        services.sensitive_targets = tuple(settings.sensitive_targets)
        services.injection_guard = settings.injection_guard == "on"
        services.budget = settings.budget()
        if self._watching:
            await self._follow_takeover_setting()

    async def check_model(
        self, settings: Settings | None = None, *, asked_at: int | None = None, **options: Any
    ) -> ModelCheck:
        """The one model check (model_check.py) for `settings` (default: the host's),
        held: every stop gives it up and raises StopRequested (`_held`; `asked_at`: the
        `stops` when the face asked for it)."""
        from desktop_agent.model_check import check_model

        return await self._held(check_model(settings or self.settings, **options), asked_at)

    async def vision_verdict(
        self, settings: Settings | None = None, *, asked_at: int | None = None
    ) -> VisionVerdict:
        """The window's model line: whether the model can see (no chat request); raises what
        stands in the way of a verdict (model_check.verdict_of), StopRequested when stopped."""
        from desktop_agent.model_check import verdict_of

        return verdict_of(await self.check_model(settings, asked_at=asked_at))

    async def connection_report(self, settings: Settings, *, asked_at: int | None = None) -> str:
        """The settings dialog's Test connection in one line, asked afresh (its `settings` may
        be unsaved: the keyring's key goes only to the saved server); raises ModelUnreachable,
        StopRequested when stopped."""
        from desktop_agent.model_check import report_of

        return report_of(await self.check_model(settings, asked_at=asked_at, fresh=True))

    async def find_model_servers(self, *, asked_at: int | None = None) -> Discovery:
        """The model servers on this machine (127.0.0.1, the settings' probe ports; no key
        is sent), held as a model check is: a stop gives the look up (StopRequested)."""
        from desktop_agent.planner.discovery import discover

        return await self._held(discover(tuple(self.settings.probe_ports)), asked_at)

    @staticmethod
    def model_profiles() -> tuple[tuple[str, str], ...]:
        """(name, note) of every model profile (planner/profiles.py), the settings dialog's
        choices: a fixed table, no I/O, so any thread may read it."""
        from desktop_agent.planner.profiles import PROFILES

        return tuple((profile.name, profile.note) for profile in PROFILES)

    # ── lifetime ─────────────────────────────────────────────────────────────

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(work)
        self._owned.add(task)
        task.add_done_callback(self._owned.discard)
        return task

    async def close(self) -> None:
        """Stop every run (stored stopped / user_stop) and wait for them, then close what
        the faces turned on (signals, hotkey, API) and the services. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._agent.stop_all()
        if self._mark_watch is not None:
            self._mark_watch.cancel()
        if self._owned:
            await asyncio.gather(*self._owned, return_exceptions=True)
        await self.release_stop_hotkey()
        for closer in reversed(self._closers):
            try:
                result = closer()
                if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
                    await result
            except Exception:  # noqa: BLE001 - closing goes on
                log.exception("while closing the host")
        self._unsubscribe()
        await self._agent.close()
