"""SettingsController: Settings… opens the settings dialog; what it saves is written (off the
GUI thread) and applied: at once, for the next run, or at the next start."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Slot

from desktop_agent.core.errors import DesktopAgentError, StopRequested
from desktop_agent.settings import Settings
from desktop_agent.ui.text import one_line

if TYPE_CHECKING:
    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.main_window import MainWindow

log = logging.getLogger(__name__)

CAPTURE_SETTINGS = ("capture_width", "capture_format", "jpeg_quality", "monitor", "set_of_mark")
#: Test connection's answer when a stop gave it up
STOPPED_TEST = "stopped; press Test connection to ask again"


class SettingsController(QObject):
    """The settings dialog and applying what it saves.

    Attributes:
        dialog: the open settings dialog, if any.
        restart_hotkey: awaited when the stop hotkey changed; returns what to tell the user.
        find_servers: the dialog's Find model servers… (a finder over it; the server and
            model chosen, or None), when set.
    """

    def __init__(
        self,
        window: MainWindow,
        client: EngineClient,
        restart_hotkey: Callable[[], Awaitable[list[str]]],
    ) -> None:
        super().__init__(window)
        self.window = window
        self.client = client
        self.restart_hotkey = restart_hotkey
        self.dialog: Any = None
        self.find_servers: Callable[[Any], Awaitable[Any]] | None = None

    @Slot()
    def on_settings_requested(self) -> None:
        from desktop_agent.ui.settings_dialog import SettingsDialog

        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.raise_()
            return
        dialog = SettingsDialog(
            self.window,
            self.client.host.settings,
            test_connection=self.test_connection,
            calibrate=self.calibrate,
            find_servers=self.find_servers,
            profiles=self.client.host.model_profiles(),
        )
        dialog.saved.connect(self.on_settings_saved)
        dialog.routine_grants.revoke_requested.connect(self.on_revoke_routine_grants)
        self.dialog = dialog
        dialog.open()
        # on the loop's next turn: this slot may run before the asyncio loop does
        QTimer.singleShot(0, lambda: self.window.spawn(self.show_routine_grants()))

    def test_connection(self, settings: Settings) -> Awaitable[str]:
        """Test connection, asked now (at the click): the server and the model of `settings`
        (the dialog's, maybe unsaved), asked by the Host's one model check. A stop from now on
        gives it up (the request in flight closed, none after): it answers STOPPED_TEST, and
        only the user's next Test connection asks again."""
        host = self.client.host
        return _unless_stopped(
            self.client.ask(host.connection_report, settings, asked_at=host.stops), STOPPED_TEST
        )

    async def show_routine_grants(self) -> None:
        """The routines' grants in the open dialog's Routines tab."""
        try:
            routines = await self.client.ask(self.client.host.records.list_routines)
        except DesktopAgentError as error:
            log.warning("routines not read: %s", error)
            return
        if self.dialog is not None:
            self.dialog.routine_grants.set_routines(routines)

    @Slot(str)
    def on_revoke_routine_grants(self, name: str) -> None:
        async def revoke() -> None:
            await self.client.ask(self.client.host.records.set_routine_grants, name, ())
            await self.show_routine_grants()

        self.window.spawn(revoke())

    async def calibrate(self, settings: Settings) -> str | None:
        """Calibrate the model of `settings` (the dialog's, maybe unsaved) in the calibration
        window; the coordinate space the user chose to save there, or None. The screenshot,
        the API key and the model's requests are the engine's (host/calibration.py).
        StopRequested when a stop ended it (Stop all, the stop hotkey, the API's stop-all)."""
        from desktop_agent.host.calibration import ScreenCalibration
        from desktop_agent.ui import calibration

        chosen: list[str] = []
        # a child of the (window-modal) dialog, or the dialog would block its Save button
        parent = self.dialog if self.dialog is not None else self.window
        screen = ScreenCalibration(settings)
        # held before any of its work, in order with it: every stop from now on reaches it
        self.client.send(self.client.host.hold_calibration, screen)
        await calibration.calibrate_in_window(
            screen, self.client.ask, save=chosen.append, parent=parent
        )
        if screen.stopped and not chosen:
            raise StopRequested
        return chosen[-1] if chosen else None

    @Slot(Settings)
    def on_settings_saved(self, settings: Settings) -> None:
        # the stops so far, as the user saved: a stop from now on (while the file is written,
        # the settings applied) stops the model check this save asks for
        self.window.spawn(self.apply_settings(settings, asked_at=self.client.host.stops))

    async def apply_settings(
        self, settings: Settings, *, save: bool = True, asked_at: int | None = None
    ) -> None:
        """Save the settings and use them from the next run on; the model line is checked
        again unless a stop came since `asked_at` (the host's `stops` when the user asked)."""
        from desktop_agent.settings import save_settings

        previous = self.client.host.settings
        notices = []
        if save:
            try:
                path = await asyncio.to_thread(save_settings, settings)
            except (DesktopAgentError, OSError) as error:
                # used anyway for this session: what the user chose is not lost on a full disk
                unsaved = f"Settings used until the app quits, but not saved: {one_line(error)}"
                log.error("%s", unsaved)
                notices.append(unsaved)
            else:
                log.info("settings saved to %s", path)
        await self.client.ask(self.client.host.apply_settings, settings)
        if settings.stop_hotkey != previous.stop_hotkey:
            # also when the old combination could not be grabbed: the new one may be free
            notices += await self.restart_hotkey()
        if any(getattr(settings, name) != getattr(previous, name) for name in CAPTURE_SETTINGS):
            notices.append("Capture settings take effect when the app is started again.")
        if notices:
            self.window.bar.show_notice(" · ".join(notices))
        self.window.apply_settings(asked_at)


async def _unless_stopped(asking: Awaitable[str], stopped: str) -> str:
    """What `asking` answers, or `stopped` when a stop gave it up."""
    try:
        return await asking
    except StopRequested:
        return stopped
