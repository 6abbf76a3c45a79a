"""EngineClient: the window's bridge to the Host, which lives on the engine thread.

It only crosses the thread. Calls go to the engine with `send` (a plain call: it lands in
order with every stop), `ask` (a coroutine, awaited on the GUI loop) and `stream` (an async
iterator, its items handed over as they come); the Host's one event stream comes back as the
`run_event` signal, queued to the GUI thread and handed on in slices. What is done over there
(runs, the history, routines, model checks, settings, the API, the hotkey, takeover, the
closing order) is the Host's (desktop_agent/host/).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from desktop_agent.core.errors import DesktopAgentError
from desktop_agent.core.events import TaskLoopEvent
from desktop_agent.ui.text import one_line

if TYPE_CHECKING:
    from desktop_agent.host.engine import Engine
    from desktop_agent.host.host import Host

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

#: the longest the GUI thread hands on run events before it lets Qt paint and take input:
#: short, as one event's views (row, selection, step detail) take ~0.5-1 ms; 4 ms slices
#: put the median GUI gap at 8 ms in benchmarks/gui_stall.py, 1 ms ones at ~5 ms
SLICE_S = 0.001
#: the longest a turn waits for the GUI thread to catch up with the run's events, and how
#: often it looks
PACE_MAX_S = 0.05
PACE_POLL_S = 0.002
_END = object()


class EngineClient(QObject):
    """The Host's calls from the GUI thread, its events as one signal.

    Signals:
        run_event(object): every event of the Host's one stream, in order: every run's, a
            start refused, stop-everything carried out, the stop hotkey's state, a takeover
            watch that cannot start. (`object`: the events are a union of dataclasses, which
            a Qt signal cannot name as one type.)

    Attributes:
        engine: the thread the Host runs on.
        host: the engine side. Its fixed parts (settings, data_dir, tools, checks_model,
            api_port, hotkey_problem) are read from the GUI thread; everything else goes
            through `send`, `ask` and `stream`.
    """

    run_event = Signal(object)
    # the engine thread emits this; connected to this object's slot, it is queued to the
    # GUI thread
    _events_waiting = Signal()

    def __init__(
        self,
        engine: Engine,
        host: Host,
        parent: QObject | None = None,
        *,
        close_host: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """`close_host`: what closes the Host, awaited on the GUI loop (the app's: leaving the
        `Host.serving` its engine holds, host/engine.py `Held.leave`); by default `host.close`
        asked on the engine."""
        super().__init__(parent)
        self.engine = engine
        self.host = host
        self._close_host = close_host
        self._closed = False
        # the engine's events wait here for the GUI thread, which hands them on in slices
        self._inbox: deque[TaskLoopEvent] = deque()
        self._inbox_lock = threading.Lock()
        self._woken = False
        # the GUI thread has painted every event handed to it (the next turn may go on)
        self._caught_up = True
        # the GUI thread's own 1 ms waits (the rest of a burst, the paint before "caught
        # up"): kept timers, as QTimer.singleShot(1, callable) makes a timer object and its
        # connection at each call (20-80 µs, with its delivery; several times per event)
        self._next_slice = self._one_ms_timer(self._hand_on_events)
        self._painted = self._one_ms_timer(self._after_paint)
        self._paint_seen = self._one_ms_timer(self._tell_caught_up)
        self._events_waiting.connect(self._hand_on_events)
        engine.call(self._subscribe)

    def _one_ms_timer(self, slot: Callable[[], None]) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(1)
        timer.setTimerType(Qt.TimerType.PreciseTimer)  # as QTimer.singleShot's under 2 s
        timer.timeout.connect(slot)
        return timer

    # ── calls to the engine ──────────────────────────────────────────────────

    def send(self, fn: Callable[P, object], *args: P.args, **kwargs: P.kwargs) -> None:
        """Call `fn` on the engine as soon as it is free: in order with every other call sent
        (a stop sent after a start reaches the run). EngineClosed once the engine has ended."""
        self.engine.call(partial(fn, *args, **kwargs))

    async def ask(self, fn: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
        """Await `fn(...)` run on the engine, from the GUI loop; what it raises is raised
        here. Cancelling the awaiting task cancels the work on the engine."""

        async def on_engine() -> T:
            return await fn(*args, **kwargs)

        return await self.engine.run(on_engine())

    async def stream(
        self, fn: Callable[P, AsyncIterator[T]], *args: P.args, **kwargs: P.kwargs
    ) -> AsyncGenerator[T, None]:
        """`fn(...)`'s items, read on the engine and handed to the GUI loop as they come;
        what it raises is raised here after the items before it. Closing this ends it."""
        gui_loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()

        def hand_over(item: Any) -> None:
            gui_loop.call_soon_threadsafe(queue.put_nowait, item)

        async def pump() -> None:
            try:
                async for item in fn(*args, **kwargs):
                    hand_over(item)
                hand_over(_END)
            except Exception as error:  # noqa: BLE001 - raised again on the reader's side
                hand_over(_Raised(error))

        pumping = self.engine.submit(pump())
        try:
            while (item := await queue.get()) is not _END:
                if isinstance(item, _Raised):
                    raise item.error
                yield item
        finally:
            pumping.cancel()

    # ── on the engine thread ─────────────────────────────────────────────────

    def _subscribe(self) -> None:
        self.host.pace_runs(self._pace)
        self.host.subscribe(self._from_engine)  # for the Host's life

    def _from_engine(self, event: TaskLoopEvent) -> None:
        """An event of a run (engine thread): into the inbox, and wake the GUI thread once."""
        with self._inbox_lock:
            self._inbox.append(event)
            self._caught_up = False
            if self._woken:
                return
            self._woken = True
        self._events_waiting.emit()

    async def _pace(self) -> None:
        """Before a turn (engine thread): while the GUI thread has events waiting, let it
        catch up, for PACE_MAX_S at most. An engine that races ahead only makes the two
        threads fight over the GIL, and the window's paints slow down several times. The
        turn looks every PACE_POLL_S rather than being woken: a wake across the threads costs
        the GUI thread ~1 ms at every catch-up."""
        deadline = time.monotonic() + PACE_MAX_S
        # a poll, not an Event: setting one from the GUI thread is the wake this avoids
        while not self._caught_up and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(PACE_POLL_S)

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
                    if not self._painted.isActive():
                        self._painted.start()
                    return
                event = self._inbox.popleft()
            self.run_event.emit(event)
            if time.perf_counter() >= deadline:
                # the rest after Qt's own events: a timer (a 0 ms one is a posted call that
                # Qt would deliver in the same pass, before timers and paints)
                self._next_slice.start()
                return

    @Slot()
    def _after_paint(self) -> None:
        if not self._paint_seen.isActive():
            self._paint_seen.start()

    @Slot()
    def _tell_caught_up(self) -> None:
        """The events handed on are painted: the next turn may go on."""
        with self._inbox_lock:
            if not self._inbox:  # else more came meanwhile: their pass tells
                self._caught_up = True

    # ── lifetime ─────────────────────────────────────────────────────────────

    async def close(self) -> None:
        """Close the Host (every run stopped and awaited, the hotkey, the API, the store and
        the desktop adapters), then end the engine's thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.engine.running:
            try:
                if self._close_host is not None:
                    await self._close_host()
                else:
                    await self.ask(self.host.close)
            except (DesktopAgentError, OSError, RuntimeError) as error:
                log.error("closing the engine's services: %s", one_line(error))
        await asyncio.to_thread(self.engine.close)


@dataclass(frozen=True, slots=True)
class _Raised:
    """An error raised on the engine, handed over in a stream."""

    error: Exception
