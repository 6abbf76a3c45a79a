"""RoutinesController: the Routines list's Run, and Save as routine… from the history."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QDialog

from desktop_agent.core.errors import DesktopAgentError
from desktop_agent.core.events import RunFinished, TaskLoopEvent
from desktop_agent.ui.save_routine import SaveRoutineDialog
from desktop_agent.ui.text import one_line

if TYPE_CHECKING:
    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.main_window import MainWindow
    from desktop_agent.ui.runs_state import RunsState

log = logging.getLogger(__name__)


class RoutinesController(QObject):
    """Fills the window's Routines list, runs a routine as the window's live run, and saves
    a completed run as a routine (the dialog, then the engine).

    Attributes:
        dialog: the open Save as routine… dialog, if any.
    """

    def __init__(self, window: MainWindow, client: EngineClient, runs: RunsState) -> None:
        super().__init__(window)
        self.window = window
        self.client = client
        self.dialog: SaveRoutineDialog | None = None
        self._connect_signals()
        runs.subscribe(self.on_run_event)
        window.spawn(self.refresh())

    def _connect_signals(self) -> None:
        self.window.routines.run_requested.connect(self.on_run_requested)
        self.window.history.save_routine_requested.connect(self.on_save_requested)

    async def refresh(self) -> None:
        try:
            routines = await self.client.ask(self.client.host.records.list_routines)
        except DesktopAgentError as error:
            self.window.routines.show_note(
                self.tr("Routines not read: {error}").format(error=one_line(error))
            )
            return
        self.window.routines.set_routines(routines)

    def on_run_event(self, event: TaskLoopEvent) -> None:
        if isinstance(event, RunFinished) and event.run.routine:
            run = event.run
            reason = f" / {run.stop_reason.value}" if run.stop_reason else ""
            self.window.routines.show_note(
                self.tr("Routine {name}: {status}. {message}").format(
                    name=run.routine,
                    status=run.status.value + reason,
                    message=one_line(run.message),
                )
            )

    @Slot(str, dict)
    def on_run_requested(self, name: str, values: dict[str, str]) -> None:
        from desktop_agent.host.host import RoutineRequest

        window = self.window
        started = window.start_live(
            lambda ready: RoutineRequest(name, dict(values), ready=ready),
            status=self.tr("Starting routine {name}…").format(name=name),
        )
        panel = window.routines
        if not started:
            panel.show_note(self.tr("A run is on show: stop it or let it end first."))
            return
        panel.clear_secrets()
        panel.show_note(
            self.tr("Running routine {name}: no model is asked while the screen matches.").format(
                name=name
            )
        )

    @Slot(str)
    def on_save_requested(self, run_id: str) -> None:
        self.window.spawn(self.save(run_id))

    async def save(self, run_id: str) -> None:
        """Ask for the name, parameters and grants, then save; said in the panel's note."""
        panel = self.window.routines
        try:
            steps = await self.client.ask(self.client.host.records.list_steps, run_id)
        except DesktopAgentError as error:
            panel.show_note(one_line(error))
            return
        dialog = SaveRoutineDialog(self.window, run_id, steps)
        self.dialog = dialog
        answered: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_finished(result: int) -> None:
            if not answered.done():
                answered.set_result(result)

        dialog.finished.connect(on_finished)
        dialog.open()  # never exec() inside a coroutine
        try:
            if await answered != QDialog.DialogCode.Accepted:
                return
            name = dialog.name_edit.text().strip()
            records = self.client.host.records
            routine = await self.client.ask(
                records.save_routine, run_id, name, dialog.params(), dialog.grants()
            )
        except DesktopAgentError as error:
            panel.show_note(self.tr("Not saved: {error}").format(error=one_line(error)))
            return
        finally:
            self.dialog = None
            dialog.deleteLater()
        await self.refresh()
        panel.show_note(
            self.tr("Saved routine {name} ({count} steps).").format(
                name=routine.name, count=len(routine.steps)
            )
        )
