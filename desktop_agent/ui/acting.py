"""ActingController: the window gets out of the way while a run acts; the acting panel shows
the step, and the window comes back when the last run ends."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject

from desktop_agent.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StartRefused,
    StepFinished,
    StepStarted,
    TaskLoopEvent,
    UserTookOver,
)
from desktop_agent.core.models import RunView, StepKind, StepView
from desktop_agent.ui.text import in_words

if TYPE_CHECKING:
    from desktop_agent.ui.acting_panel import ActingPanel
    from desktop_agent.ui.main_window import MainWindow
    from desktop_agent.ui.runs_state import RunsState

#: how long to wait for the window manager to take the minimised window off the screen
OFF_SCREEN_TIMEOUT_S = 1.0
#: and then for its iconify animation and the compositor to catch up
OFF_SCREEN_SETTLE_S = 0.05
PAUSED = str(QT_TRANSLATE_NOOP("ActingPanel", "Paused — resume from the tray or the window"))
#: the acting panel's line when the user's own input paused the run
TOOK_OVER = str(
    QT_TRANSLATE_NOOP(
        "ActingPanel",
        "Paused: you took over the mouse or keyboard — resume from the tray or the window",
    )
)


class ActingController(QObject):
    """Minimises the window while a run acts (setting `minimize_while_acting`), shows the
    acting panel with the current step, and brings the window back when no run is left.

    Attributes:
        window, panel: what it moves and fills.
        runs: the state it follows.
        approvals_open: how many approval dialogs are open (the window stays up meanwhile).
    """

    def __init__(
        self,
        window: MainWindow,
        panel: ActingPanel,
        runs: RunsState,
        minimize: Callable[[], bool],
    ) -> None:
        super().__init__(window)
        self.window = window
        self.panel = panel
        self.runs = runs
        self.approvals_open: Callable[[], int] = lambda: 0
        self._minimize = minimize
        self._minimised_by_us = False
        runs.subscribe(self.on_run_event)

    def on_run_event(self, event: TaskLoopEvent) -> None:
        active, taken_over = self.runs.active, self.runs.taken_over
        if isinstance(event, StepStarted | StepFinished):
            # a run the user took over says so until it resumes, not its last steps
            if event.step.run_id in active and event.step.run_id not in taken_over:
                # the person watches where the work is: an action's monitor, when it has one
                if event.step.monitor is not None:
                    self.panel.move_to_monitor(event.step.monitor)
                self.panel.set_step(describe_step(event.step, active))
        elif isinstance(event, RunStarted):
            if self._minimize() and not self.approvals_open():
                self.get_out_of_the_way()
            self.panel.show_for(event.run.goal)
        elif isinstance(event, UserTookOver):
            self.panel.set_step(_tr(TOOK_OVER))
        elif isinstance(event, RunPaused):
            self.panel.set_step(_tr(TOOK_OVER if event.run.id in taken_over else PAUSED))
        elif isinstance(event, RunResumed):
            self.panel.set_step(
                QCoreApplication.translate("ActingPanel", "Resumed — looking at the screen afresh")
            )
        elif isinstance(event, ApprovalRequested):
            # beside the dialog, on the monitor the action is on (as the dialog opens there)
            self.panel.move_to_monitor(event.approval.monitor)
            said = in_words(event.approval.sentence)
            self.panel.set_step(
                QCoreApplication.translate(
                    "ActingPanel", "Waiting for your approval: {action}"
                ).format(action=said)
            )
        elif isinstance(event, ApprovalResolved):
            request = event.approval
            if request.run_id in active:
                what = {
                    "once": QCoreApplication.translate("ActingPanel", "Allowed"),
                    "run": QCoreApplication.translate("ActingPanel", "Allowed for this run"),
                    "deny": QCoreApplication.translate("ActingPanel", "Denied"),
                }
                said = in_words(request.sentence)
                answer = QCoreApplication.translate("ActingPanel", "{answer} ({by}): {action}")
                self.panel.set_step(
                    answer.format(answer=what[event.decision.value], by=event.by, action=said)
                )
            if active and not self.approvals_open() and self._minimize():
                self.get_out_of_the_way()
        elif isinstance(event, RunFinished | StartRefused):
            if active:
                return
            self.panel.hide()
            self.come_back()

    async def prepare_to_act(self) -> None:
        """Before a run of this window acts: minimise (setting), and wait until it is gone."""
        if self._minimize():
            self.get_out_of_the_way()
            await self._until_off_screen()

    async def _until_off_screen(self) -> None:
        """Until the window manager has taken the window off the screen (at most 1 s), so
        the next screenshot shows the desktop and the keyboard focus is back on the app the
        user was in."""
        from PySide6.QtGui import QGuiApplication

        handle = self.window.windowHandle()
        if handle is None or QGuiApplication.platformName() in ("offscreen", "minimal"):
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + OFF_SCREEN_TIMEOUT_S
        # QWindow has no signal for losing its exposure: poll, briefly
        while handle.isExposed() and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        await asyncio.sleep(OFF_SCREEN_SETTLE_S)

    def get_out_of_the_way(self) -> None:
        if self.window.isVisible() and not self.window.isMinimized():
            self.window.get_out_of_the_way()
            self._minimised_by_us = True

    def come_back(self) -> None:
        if self._minimised_by_us:
            self._minimised_by_us = False
            self.window.bring_to_front()


def describe_step(step: StepView, runs: dict[str, RunView]) -> str:
    """The acting panel's line, e.g. "Turn 3/20 · Click the button “Save” in “Save As”"."""
    run = runs.get(step.run_id)
    limit = f"/{run.max_steps}" if run is not None else ""
    if step.kind is StepKind.OBSERVE:
        what = QCoreApplication.translate("ActingPanel", "looking at the screen")
    elif step.kind is StepKind.DECIDE:
        what = (
            QCoreApplication.translate("ActingPanel", "deciding")
            if step.tool is None
            else QCoreApplication.translate("ActingPanel", "chose {tool}").format(tool=step.tool)
        )
    elif step.kind is StepKind.GROUND:
        aim = step.args.get("target") or QCoreApplication.translate("ActingPanel", "the target")
        what = QCoreApplication.translate("ActingPanel", "looking closer for {target}").format(
            target=aim
        )
    else:
        from desktop_agent.core.sentences import of_step  # pydantic: not at the app's start

        said = of_step(step)
        what = in_words(said) if said is not None else f"{step.tool} {step.short_args(36)}".strip()
    if step.error:
        what += f" — {step.error}"
    return QCoreApplication.translate("ActingPanel", "Turn {index}{limit} · {what}").format(
        index=step.index, limit=limit, what=what
    )


def _tr(text: str) -> str:
    return QCoreApplication.translate("ActingPanel", text)
