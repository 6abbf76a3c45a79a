"""ApprovalController: an approval a run waits for opens the approval dialog; the answer
crosses back to the engine; a dialog whose question was answered elsewhere, or whose run
ended (stopped, failed, anything), closes at once."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from desktop_agent.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    RunFinished,
    TaskLoopEvent,
)
from desktop_agent.core.models import ApprovalDecision, ApprovalRequest
from desktop_agent.ui.text import one_line

if TYPE_CHECKING:
    from desktop_agent.ui.acting import ActingController
    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.main_window import MainWindow
    from desktop_agent.ui.runs_state import RunsState

log = logging.getLogger(__name__)


class ApprovalController(QObject):
    """One approval dialog per pending question, on the GUI thread.

    Attributes:
        open_dialogs: approval id → (its run's id, the task awaiting that dialog's answer).
        explain: the next dialog says what Allow once, Allow for this run and Deny do (true
            until the user has answered one question in this session).
    """

    def __init__(
        self,
        window: MainWindow,
        client: EngineClient,
        runs: RunsState,
        acting: ActingController,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.client = client
        self.runs = runs
        self.acting = acting
        self.open_dialogs: dict[str, tuple[str, asyncio.Task[None]]] = {}
        #: the answers are explained under the buttons until the user has given one
        self.explain = True
        acting.approvals_open = lambda: len(self.open_dialogs)
        runs.subscribe(self.on_run_event)

    def on_run_event(self, event: TaskLoopEvent) -> None:
        if isinstance(event, ApprovalRequested):
            self.ask(event.approval)
        elif isinstance(event, ApprovalResolved):
            self._close(event.approval.id)  # answered elsewhere (API, timeout)
        elif isinstance(event, RunFinished):
            for approval_id, (run_id, _) in list(self.open_dialogs.items()):
                if run_id == event.run.id:
                    self._close(approval_id)  # its run ended: nobody waits for it any more

    def ask(self, request: ApprovalRequest) -> None:
        """A run waits for a human: bring the window back and open the approval dialog."""
        self.window.bring_to_front()
        self.open_dialogs[request.id] = (request.run_id, self.window.spawn(self._ask(request)))

    def _close(self, approval_id: str) -> None:
        entry = self.open_dialogs.pop(approval_id, None)
        if entry is not None:
            entry[1].cancel()

    async def _ask(self, request: ApprovalRequest) -> None:
        from desktop_agent.ui.approval import ask_approval

        try:
            try:
                decision = await ask_approval(
                    self.window,
                    request,
                    self.client.host.data_dir,
                    loader=self.window.loader,
                    explain=self.explain,
                )
                self.explain = False
            except Exception as error:  # noqa: BLE001 - the run must not wait for the timeout
                log.exception("the approval dialog for %s failed", request.tool)
                self.window.bar.show_notice(
                    self.tr("{tool} denied: the approval dialog failed: {error}").format(
                        tool=request.tool, error=one_line(error)
                    )
                )
                decision = ApprovalDecision.DENY
            if self.runs.is_active(request.run_id) and len(self.open_dialogs) == 1:
                # the run acts again right after the answer: be gone before it does
                await self.acting.prepare_to_act()
        finally:
            self.open_dialogs.pop(request.id, None)
        self.client.send(self.client.host.answer, request.id, decision)

    def close(self) -> None:
        for approval_id in list(self.open_dialogs):
            self._close(approval_id)
