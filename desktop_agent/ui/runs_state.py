"""RunsState: what the app's views know of this process's runs, fed by one event channel.

Qt-free: the engine's events (every TaskLoopEvent of every run) come in through `apply`,
and the views — the history, the tray, the acting panel, the window — follow it through
`subscribe`, each redrawing itself from the state and the event. No view writes rows of its
own from another source. The window's run on show is `shown` (ui/run_on_show.py); the live
one's events reach it from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from desktop_agent.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    TaskLoopEvent,
    UserTookOver,
    event_run_id,
)
from desktop_agent.core.models import ApprovalRequest, RunStatus, RunView
from desktop_agent.ui.run_on_show import RunOnShow

Listener = Callable[[TaskLoopEvent], None]


class TrayState(StrEnum):
    """What the tray icon says of this process's runs."""

    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    FAILED = "failed"  # the last run that ended failed


@dataclass
class RunsState:
    """The runs of this process that have not ended, the approvals they wait for, and how
    the last one ended.

    Attributes:
        active: run id → latest view of each run that has not ended (running or paused).
        approvals: approval id → the request, while it waits for an answer.
        taken_over: the runs the user's own input paused (or is pausing: `UserTookOver`
            came, `RunPaused(reason="user")` follows at the run's pause point) that have not
            resumed: the app's one record of "paused by the user" (the engine's UserTakeover
            keeps its own, to know what it paused).
        last_failed: the most recent run that ended, failed.
        shown: the window's run on show.
    """

    active: dict[str, RunView] = field(default_factory=dict)
    approvals: dict[str, ApprovalRequest] = field(default_factory=dict)
    taken_over: set[str] = field(default_factory=set)
    last_failed: bool = False
    shown: RunOnShow = field(default_factory=RunOnShow)
    _listeners: list[Listener] = field(default_factory=list)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Hear every event after the state took it in; returns the unsubscribe call."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def apply(self, event: TaskLoopEvent) -> None:
        if isinstance(event, ApprovalRequested):
            self.approvals[event.approval.id] = event.approval
        elif isinstance(event, ApprovalResolved):
            self.approvals.pop(event.approval.id, None)
        elif isinstance(event, UserTookOver):
            self.taken_over.add(event.run_id)
        elif isinstance(event, RunFinished):
            self.active.pop(event.run.id, None)
            self.taken_over.discard(event.run.id)
            self.approvals = {
                key: request
                for key, request in self.approvals.items()
                if request.run_id != event.run.id
            }
            self.last_failed = event.run.status is RunStatus.FAILED
        elif isinstance(event, RunStarted):
            self.active[event.run.id] = event.run
            self.last_failed = False
        elif isinstance(event, RunPaused):
            self.active[event.run.id] = event.run
            if event.reason == "user":
                self.taken_over.add(event.run.id)
        elif isinstance(event, RunResumed):
            self.active[event.run.id] = event.run
            self.taken_over.discard(event.run.id)
        if self.shown.follows(event):
            self.shown.apply(event, taken_over=event_run_id(event) in self.taken_over)
        for listener in list(self._listeners):
            listener(event)

    @property
    def tray_state(self) -> TrayState:
        runs = self.active.values()
        if any(run.status is not RunStatus.PAUSED for run in runs):
            return TrayState.RUNNING
        if runs:
            return TrayState.PAUSED
        return TrayState.FAILED if self.last_failed else TrayState.IDLE

    def is_active(self, run_id: str) -> bool:
        return run_id in self.active
