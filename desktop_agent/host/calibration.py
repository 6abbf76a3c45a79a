"""ScreenCalibration: the engine side of a calibration — the screenshot and the model's answers.

The window (ui/calibration.py) only paints the rings and shows the report; it awaits these
coroutines on the engine (the app's `EngineClient.ask`, `doctor --calibrate`'s own engine),
so the capture, the keyring and the model's requests never run on the GUI thread.

    calibration = ScreenCalibration(settings)
    client.send(host.hold_calibration, calibration)             # every stop-all stops it
    observation = await client.ask(calibration.screenshot)     # the rings on the screen
    result = await client.ask(calibration.ask, observation, screen_targets)
    await client.ask(calibration.close)

A stop stops a calibration as it stops a run: `Host.hold_calibration` has every stop-all of
the process (the window's and the tray's Stop all, the stop hotkey, the local API's stop-all,
so another process's `desktop-agent stop-all`, SIGINT/SIGTERM) and the window's Stop stop its
`control`; the screenshot and the model's requests are raced against it (`RunControl.guard`),
so a request in flight is cancelled and none follows: `StopRequested` is raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from desktop_agent.core.calibration import CalibrationResult, Target, to_image_targets
from desktop_agent.core.control import RunControl
from desktop_agent.core.errors import RefusedToStart
from desktop_agent.core.models import Observation, Policy
from desktop_agent.core.tools import SCREEN_DENIED, SCREEN_TOOL

if TYPE_CHECKING:
    from desktop_agent.core.ports import ScreenObserver
    from desktop_agent.settings import Settings


class ScreenCalibration:
    """Calibrates the model of `settings` (maybe the settings dialog's, unsaved).

    Await its coroutines on one loop, the engine's. The observer defaults to the desktop's,
    made at the first screenshot, without the element inventory or set-of-mark (only the
    image matters here, and marks would cover the rings); `close` releases it.

    Attributes:
        settings: the model, its server, profile and the capture to calibrate with.
        planner_options: more arguments for the planner (tests: `max_attempts=1`).
        control: its stop (`control.stop()` from the loop it runs on); once stopped, what
            is in flight is cancelled and every coroutine raises StopRequested.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        observer: ScreenObserver | None = None,
        **planner_options: Any,
    ) -> None:
        self.settings = settings
        self.planner_options = planner_options
        self._observer = observer
        self._own_observer: Any = None
        self.control = RunControl()
        self._release: Callable[[], None] | None = None

    @property
    def stopped(self) -> bool:
        return self.control.stop_requested

    def held_until_closed(self, release: Callable[[], None]) -> None:
        """`release` (what lets go of its stop, `Host.hold_calibration`) is called by close."""
        self._release = release

    @property
    def model(self) -> str:
        return self.settings.model

    async def screenshot(self) -> Observation:
        """The screen as the model will be shown it (the capture runs on its own thread)."""
        if self._observer is None:
            from desktop_agent.desktop import DesktopObserver

            self._own_observer = DesktopObserver.from_settings(
                self.settings, inventory=False, set_of_mark=False
            )
            self._observer = self._own_observer
        return await self.control.guard(self._observer.observe())

    async def ask(
        self, observation: Observation, screen_targets: Sequence[Target]
    ) -> CalibrationResult:
        """Ask the model for each target (one request each) and fit its answers.

        `screen_targets` are where the rings are on the screen; the API key goes by the one
        rule (`settings.api_key_for`), read off this loop's thread. StopRequested once
        stopped: the request in flight is cancelled, and no other is sent. RefusedToStart,
        nothing sent, while screen_snapshot's policy keeps the screen in this process.
        """
        if self.settings.policies.get(SCREEN_TOOL) is Policy.DENY:
            raise RefusedToStart(SCREEN_DENIED)  # the model would see the screen
        return await self.control.guard(self._ask(observation, screen_targets))

    async def _ask(
        self, observation: Observation, screen_targets: Sequence[Target]
    ) -> CalibrationResult:
        from desktop_agent.planner import OpenAIPlanner
        from desktop_agent.planner.calibration import calibrate
        from desktop_agent.settings import api_key_for

        settings = self.settings
        targets = to_image_targets(screen_targets, observation.mapping)
        api_key = await asyncio.to_thread(api_key_for, settings.base_url, settings)
        planner = OpenAIPlanner(
            base_url=settings.base_url,
            model=settings.model,
            api_key=api_key,
            read_timeout_s=settings.read_timeout_s,
            profile=settings.model_profile,
            coordinates=settings.model_coordinates,
            **self.planner_options,
        )
        async with planner:
            report = await calibrate(planner, observation, targets, settings.model)
        return report.result()

    async def close(self) -> None:
        """Release the observer made here (one passed in stays its owner's), and its stop."""
        release, self._release = self._release, None
        if release is not None:
            release()
        observer, self._own_observer = self._own_observer, None
        if observer is not None:
            observer.close()
