"""The settings dialog's model profile, coordinate space and Calibrate… button."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from desktop_agent.host.host import Host
from desktop_agent.planner.profiles import PROFILE_NAMES
from desktop_agent.settings import Settings, load_settings, save_settings
from desktop_agent.ui.settings_dialog import SettingsDialog

pytestmark = [pytest.mark.gui]


def box(dialog: SettingsDialog, name: str) -> QComboBox:
    widget = dialog.fields[name]
    assert isinstance(widget, QComboBox)
    return widget


def saved(qloop: Any, dialog: SettingsDialog) -> Settings:
    """Press Save and await `saved` on the loop (a typed key is stored off the GUI thread)."""
    got: list[Settings] = []
    dialog.saved.connect(got.append)

    async def scenario() -> None:
        dialog.on_save_clicked()
        while not got:  # noqa: ASYNC110 - the signal, delivered on the loop's thread
            await asyncio.sleep(0.005)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 10))
    return got[0]


def test_the_profile_choice_offers_auto_and_every_profile_and_is_saved(
    qtbot: Any, qloop: Any, tmp_path: Any
) -> None:
    dialog = SettingsDialog(None, Settings(), profiles=Host.model_profiles())
    qtbot.addWidget(dialog)
    profiles = box(dialog, "model_profile")
    assert [profiles.itemData(i) for i in range(profiles.count())] == ["auto", *PROFILE_NAMES]
    assert profiles.currentData() == "auto"
    profiles.setCurrentIndex(profiles.findData("qwen3-vl"))
    result = saved(qloop, dialog)
    assert result.model_profile == "qwen3-vl"
    path = save_settings(result, tmp_path / "settings.toml")
    assert 'model_profile = "qwen3-vl"' in path.read_text()
    assert load_settings(path, env={}).model_profile == "qwen3-vl"


def test_a_profile_chosen_in_the_settings_stays_chosen_when_the_dialog_is_not_offered_it(
    qtbot: Any, qloop: Any
) -> None:
    dialog = SettingsDialog(None, Settings(model_profile="qwen3-vl", grounder_profile="gta1"))
    qtbot.addWidget(dialog)
    assert box(dialog, "model_profile").currentData() == "qwen3-vl"
    result = saved(qloop, dialog)
    assert (result.model_profile, result.grounder_profile) == ("qwen3-vl", "gta1")


def test_calibrate_puts_the_coordinate_space_it_found_into_the_form(qtbot: Any, qloop: Any) -> None:
    seen: list[Settings] = []

    async def calibrate(settings: Settings) -> str | None:
        seen.append(settings)
        await asyncio.sleep(0)
        return "normalized"

    dialog = SettingsDialog(None, Settings(model="some-vlm"), calibrate=calibrate)
    qtbot.addWidget(dialog)
    assert not dialog.calibrate_button.isHidden()

    async def scenario() -> None:
        qtbot.mouseClick(dialog.calibrate_button, Qt.MouseButton.LeftButton)
        assert dialog.calibrate_result.text() == "Calibrating…"
        while not dialog.calibrate_button.isEnabled():  # noqa: ASYNC110 - a Qt widget's state
            await asyncio.sleep(0.005)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 10))
    assert [s.model for s in seen] == ["some-vlm"]
    assert box(dialog, "model_coordinates").currentData() == "normalized"
    assert "normalized" in dialog.calibrate_result.text()
    assert saved(qloop, dialog).model_coordinates == "normalized"


def test_a_failing_calibration_shows_one_line_and_changes_nothing(qtbot: Any, qloop: Any) -> None:
    async def calibrate(settings: Settings) -> str | None:
        raise RuntimeError("model server at http://x/v1 could not be reached\n(details)")

    dialog = SettingsDialog(None, Settings(), calibrate=calibrate)
    qtbot.addWidget(dialog)

    async def scenario() -> None:
        dialog.on_calibrate_clicked()
        while not dialog.calibrate_button.isEnabled():  # noqa: ASYNC110 - a Qt widget's state
            await asyncio.sleep(0.005)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 10))
    assert dialog.calibrate_result.text() == (
        "failed: model server at http://x/v1 could not be reached (details)"
    )
    assert box(dialog, "model_coordinates").currentData() == "auto"


def test_without_a_calibrator_the_button_is_hidden(qtbot: Any) -> None:
    dialog = SettingsDialog(None, Settings())
    qtbot.addWidget(dialog)
    assert dialog.calibrate_button.isHidden()
