"""Settings… in the app has Calibrate…, and it calibrates the dialog's model in the window, with
the screenshot and the model's requests on the engine thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QComboBox

from desktop_agent.planner.profiles import PROFILE_NAMES
from desktop_agent.settings import KEYRING_SERVICE, KEYRING_USER
from desktop_agent.ui import calibration
from desktop_agent.ui.settings_dialog import SettingsDialog
from tests.gui.fake_agent import drive, until
from tests.gui.test_app_wiring import Harness, build
from tests.gui.test_dialogs_settings import line
from tests.support.keyrings import memory_keyring

pytestmark = [pytest.mark.gui]


@pytest.fixture
def saved_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A settings file saving the agent's server (the default); the keyring holds sk-local."""
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))
    with memory_keyring() as backend:
        backend.passwords[(KEYRING_SERVICE, KEYRING_USER)] = "sk-local"
        yield


def test_the_settings_dialog_of_the_app_calibrates_and_fills_in_the_coordinates(
    qtbot: Any, qloop: Any, agent: Any, monkeypatch: pytest.MonkeyPatch, saved_home: None
) -> None:
    calls: list[dict[str, Any]] = []

    async def calibrate_in_window(calibration: Any, on_engine: Any, **options: Any) -> None:
        async def where() -> threading.Thread:
            return threading.current_thread()

        thread = await on_engine(where)
        calls.append({"settings": calibration.settings, "thread": thread, **options})
        options["save"]("normalized")  # the user pressed Save in the calibration window

    monkeypatch.setattr(calibration, "calibrate_in_window", calibrate_in_window)
    harness: Harness = build(qtbot, qloop, agent)
    try:
        harness.app.settings.on_settings_requested()
        dialog = harness.app.settings.dialog
        assert isinstance(dialog, SettingsDialog)
        qtbot.addWidget(dialog)
        assert dialog.calibrate_button.isVisible()
        # the profiles offered are the host's (the dialog imports no planner)
        profiles = dialog.fields["model_profile"]
        assert isinstance(profiles, QComboBox)
        offered = [profiles.itemData(i) for i in range(profiles.count())]
        assert offered == ["auto", *PROFILE_NAMES]
        line(dialog, "model").setText("qwen3-vl")  # an unsaved change is what is calibrated

        async def scenario() -> None:
            dialog.calibrate_button.click()
            await until(lambda: calls and dialog.calibrate_button.isEnabled(), what="the end")

        drive(qloop, scenario())
        (call,) = calls
        assert call["settings"].model == "qwen3-vl"
        assert call["parent"] is dialog
        # the calibration's work crosses to the engine: never the GUI thread
        assert call["thread"] is harness.client.engine.thread
        assert dialog.calibrate_result.text() == "the model answers in normalized coordinates"
        assert dialog.fields["model_coordinates"].currentData() == "normalized"
    finally:
        drive(qloop, harness.close())
