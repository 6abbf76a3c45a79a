"""RunOnShow: the run the window shows — which, live or replayed, how far, what the panel
offers and what the status line says — as a Qt-free model the window renders.

One run is on show at a time. A live run is put on show at the click (`show_live`, its id
made with the request) and follows the app's RunsState; a replay (`show_replay`) follows a
RunWorker reading the stored events. Both reach `apply`, the one way an event changes what
is shown, and the window hears every change through `subscribe` (napari's model/view split:
the model holds the state, the view renders it and forwards the user's intents).

The window makes its RunOnShow before its first paint; the core's events (some 8 ms of
dataclasses to import) are imported where an event is read, after it. The datetime module is
not imported either: a run's own times (datetimes the store made) tell the time now.
"""

from __future__ import annotations

import time
from enum import StrEnum
from typing import TYPE_CHECKING, Literal, TypeAlias
from urllib.parse import urlsplit

from desktop_agent.core.statuses import RunStatus

if TYPE_CHECKING:
    import concurrent.futures
    from collections.abc import Awaitable, Callable

    from desktop_agent.core.events import TaskLoopEvent
    from desktop_agent.core.models import RunView

#: what changed the run on show: one of its events; "reset" (another run is put on show: the
#: views start empty); "state" (the user asked something, a replay failed or ended)
Change: TypeAlias = "TaskLoopEvent | Literal['reset', 'state']"
Listener: TypeAlias = "Callable[[Change], None]"

#: the status line when the user's own mouse or keyboard input paused the run
TOOK_OVER = "Paused: you took over the mouse or keyboard. Resume with Ctrl+P or from the tray."
#: the status bar's tokens' tooltip, and what it adds when some turns' tokens are estimated
USAGE_TIP = "Model tokens (prompt + completion) and the cost estimate from the price table"
USAGE_ESTIMATED = " — some turns' tokens are estimated: the server gave no usage"


class PanelState(StrEnum):
    """What the run on show is doing; the task panel's buttons follow it."""

    IDLE = "idle"
    STARTING = "starting"  # admitted, its model being checked
    RUNNING = "running"
    PAUSED = "paused"
    STOPPING = "stopping"


class Showing(StrEnum):
    NOTHING = "nothing"
    LIVE = "live"  # a run of this window, executing now (or just ended)
    REPLAY = "replay"  # a stored run, read again


class RunOnShow:
    """See the module docstring.

    Attributes:
        showing: nothing, a live run or a replay.
        run_id: the live run's id (from the click on); None for a replay.
        run: the latest view of the run on show, None before its run_started.
        turn: the latest turn seen.
        state: what the panel offers (Start, Pause/Resume, Stop).
        status: the status line for the run on show.
        refused: why the live run was refused before it started ("" when it was not).
        clock_started: the monotonic clock at the live run's run_started.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.showing = Showing.NOTHING
        self.run_id: str | None = None
        self.run: RunView | None = None
        self.turn = 0
        self.state = PanelState.IDLE
        self.status = ""
        self.refused = ""
        self.clock_started: float | None = None
        self._clock = clock
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Hear every change (see `Change`), after the model took it in. Returns the
        unsubscribe call."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self, change: Change = "state") -> None:
        for listener in list(self._listeners):
            listener(change)

    # ── what is shown ────────────────────────────────────────────────────────

    @property
    def live(self) -> bool:
        return self.showing is Showing.LIVE

    @property
    def live_running(self) -> bool:
        """A live run of this window is admitted and has not ended."""
        return (
            self.live
            and self.run_id is not None
            and (self.run is None or not self.run.status.is_terminal)
        )

    def follows(self, event: TaskLoopEvent) -> bool:
        """Whether `event` of the app's stream is about the live run on show."""
        from desktop_agent.core.events import event_run_id

        return self.live and self.run_id is not None and event_run_id(event) == self.run_id

    def show_live(self, run_id: str, status: str = "Checking the model…") -> None:
        """The run `run_id` was asked for at the click (admitted on the engine in order with
        every stop sent after it): on show, starting."""
        self._reset(Showing.LIVE, run_id)
        self.state = PanelState.STARTING
        self.status = status
        self._changed("reset")

    def show_replay(self) -> None:
        """A stored run is read again: its events come to `apply`."""
        self._reset(Showing.REPLAY, None)
        self.state = PanelState.IDLE
        self._changed("reset")

    def _reset(self, showing: Showing, run_id: str | None) -> None:
        self.showing = showing
        self.run_id = run_id
        self.run = None
        self.turn = 0
        self.refused = ""
        self.clock_started = None

    def not_started(self, why: str) -> None:
        """The live run could not even be asked for (the engine has ended)."""
        self._not_started(why)
        self._changed()

    def _not_started(self, why: str) -> None:
        self.run_id = None
        self.state = PanelState.IDLE
        self.status = f"Not started: {why}"

    # ── the user's intents: the run id to send them to, None when there is none ──

    def ask_pause(self, pause: bool) -> str | None:
        if self.run is None or not self.live_running:
            return None
        if pause:
            self.status = "Pausing at the next safe point…"
            self._changed()
        return self.run.id

    def ask_stop(self) -> str | None:
        if not self.live_running or self.run_id is None:
            return None
        self.state = PanelState.STOPPING
        self.status = "Stopping…"
        self._changed()
        return self.run_id

    def may_replay(self, run_id: str, run: RunView | None) -> tuple[bool, str]:
        """Whether the history's run `run_id` (its view `run`, if the history has it) may
        be put on show now as a replay, and if not, what to say ("": nothing)."""
        if self.live_running:
            if self.run is None or self.run.id != run_id:
                return False, "A run is on; its history can be replayed when it ends."
            return False, ""  # the live run itself: on show already
        if run is not None and not run.status.is_terminal:
            where = "in another window or client" if run.status.is_active else "yet"
            return False, f"That run has not ended {where}; it can be replayed when it has."
        return True, ""

    def replay_failed(self, message: str) -> None:
        self.status = f"Could not show the run: {message}"
        self._changed()

    def replay_done(self) -> None:
        if self.state is not PanelState.IDLE:
            self.state = PanelState.IDLE
            self._changed()

    # ── events of the run on show, live or replayed: the one path ────────────

    def apply(self, event: TaskLoopEvent, *, taken_over: bool = False) -> None:
        """Take in an event of the run on show (the caller checked it is: `follows`, or
        the replay's own) and tell the subscribers; events that change nothing shown (an
        approval's: the dialog shows those) are not told. `taken_over`: the run is in
        RunsState's record of the runs the user's input paused (the one record of it)."""
        from desktop_agent.core.events import (
            RunFinished,
            RunPaused,
            RunResumed,
            RunStarted,
            RunTotals,
            StartRefused,
            StepFinished,
            StepStarted,
            UserTookOver,
        )

        if isinstance(event, StepStarted | StepFinished):
            self.turn = max(self.turn, event.step.index)
        elif isinstance(event, RunTotals):
            run = self.run
            if run is None or run.finished_at is not None:
                return  # the run_finished view is final: keep it
            self.run = run.with_(
                prompt_tokens=event.prompt_tokens,
                completion_tokens=event.completion_tokens,
                tokens_estimated=event.tokens_estimated,
                cost=event.cost,
            )
        elif isinstance(event, StartRefused):
            if event.run_id != self.run_id:
                return
            self._not_started(event.reason)
            self.refused = event.reason
        elif isinstance(event, UserTookOver):
            self.status = TOOK_OVER  # the run pauses at its next pause point
        elif isinstance(event, RunStarted):
            self.run = event.run
            if self.live:
                self.state = PanelState.RUNNING
                self.status = "Running."
                self.clock_started = self._clock()
            else:
                self.status = "Replaying a stored run."
        elif isinstance(event, RunPaused):
            self.run = event.run
            self.state = PanelState.PAUSED
            by_user = event.reason == "user" or taken_over
            self.status = TOOK_OVER if by_user else "Paused. Resume with Ctrl+P."
        elif isinstance(event, RunResumed):
            self.run = event.run
            self.state = PanelState.RUNNING
            self.status = "Running."
        elif isinstance(event, RunFinished):
            self.run = event.run
            self.state = PanelState.IDLE
            self.turn = max(self.turn, event.run.step_count)
            outcome = describe_outcome(event.run)
            self.status = outcome if self.live else f"Replayed: {outcome}"
        else:
            return
        self._changed(event)

    def elapsed_s(self) -> float | None:
        """How long the run on show has run (None before its start): to its end once it
        ended; live, by the monotonic clock since run_started (a wall-clock jump does not
        show)."""
        run = self.run
        if run is None or run.started_at is None:
            return None
        if run.finished_at is not None:
            return (run.finished_at - run.started_at).total_seconds()
        if self.clock_started is not None and self.live:
            return self._clock() - self.clock_started
        started = run.started_at
        return (started.now(started.tzinfo) - started).total_seconds()

    def title(self) -> str:
        """The goal of the run on show on one line, "Replay: " before a replayed one's."""
        goal = " ".join(self.run.goal.split()) if self.run is not None else ""
        return goal if self.live else f"Replay: {goal}"

    def title_tip(self) -> str:
        run = self.run
        return "" if run is None else f"{run.goal}\nrun {run.id} · {run.model}"

    @property
    def going(self) -> bool:
        """A live run on show that has started and not ended: the settings' limits are its."""
        return self.live and self.run is not None and self.run.finished_at is None

    def turn_line(self, template: str = "Turn {turn} of {limit}") -> str:
        """The status bar's turn, e.g. "Turn 3 of 20" ("" with no run on show); `template`
        is the line in the window's language (this model imports no Qt)."""
        run = self.run
        return "" if run is None else template.format(turn=self.turn, limit=run.max_steps)

    def usage_line(self, max_run_tokens: int = 0) -> str:
        """The run's tokens and cost; the settings' `max_run_tokens` is named only while the
        run is going (a replay's or an ended run's limit may not be today's)."""
        run = self.run
        return "" if run is None else usage_line(run, max_run_tokens if self.going else 0)

    def usage_tip(self) -> str:
        estimated = self.run is not None and self.run.tokens_estimated
        return USAGE_TIP + (USAGE_ESTIMATED if estimated else "")

    def elapsed_line(self, max_run_seconds: float = 0) -> str:
        """How long the run has run, e.g. "1:15", "1:15 of 10:00" while the settings'
        `max_run_seconds` bounds it ("" before its start)."""
        seconds = self.elapsed_s()
        if seconds is None:
            return ""
        of = f" of {format_elapsed(max_run_seconds)}" if max_run_seconds and self.going else ""
        return format_elapsed(seconds) + of


async def act_when_out_of_the_way(
    before_run: Callable[[], Awaitable[None]] | None, ready: concurrent.futures.Future[None]
) -> None:
    """Await `before_run` (the window gets out of the way: minimised, setting), then let the
    run act (`ready`) — also when that failed, but not when the window is closing (this
    wait cancelled): the run never acts then, and closing the engine stops it."""
    import asyncio

    closing = False
    try:
        if before_run is not None:
            await before_run()
    except asyncio.CancelledError:
        closing = True
        raise
    finally:
        if not closing and not ready.done():
            ready.set_result(None)


def describe_outcome(run: RunView) -> str:
    """One line: how a run ended, e.g. "Completed: Saved the file." or "Stopped (max steps)"."""
    words = {
        RunStatus.COMPLETED: "Completed",
        RunStatus.FAILED: "Failed",
        RunStatus.STOPPED: "Stopped",
        RunStatus.INTERRUPTED: "Interrupted",
    }
    head = words.get(run.status, run.status.value.capitalize())
    if run.stop_reason is not None and run.stop_reason.value not in ("done", "user_stop", "error"):
        head += f" ({run.stop_reason.value.replace('_', ' ')})"
    return f"{head}: {run.message}" if run.message else head


def usage_line(run: RunView, max_tokens: int = 0) -> str:
    """The status bar's tokens and cost, e.g. "1,000 + 50 tokens of 1,000,000 · $0.0011";
    "≈" marks totals that include estimates."""
    about = "≈" if run.tokens_estimated else ""
    limit = f" of {max_tokens:,}" if max_tokens else ""
    cost = "no price" if run.cost is None else f"${run.cost:.4f}"
    return f"{about}{run.prompt_tokens:,} + {run.completion_tokens:,} tokens{limit} · {cost}"


def server_address(base_url: str) -> str:
    """host:port of a base URL ("http://localhost:11434/v1" → "localhost:11434")."""
    parts = urlsplit(base_url)
    return parts.netloc or base_url


def format_elapsed(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
