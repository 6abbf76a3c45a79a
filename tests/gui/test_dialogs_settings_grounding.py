"""The settings dialog's Grounding tab: the mode, the grounding model, set-of-mark (issue #19)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit

from desktop_agent.settings import Settings, load_settings, save_settings
from desktop_agent.ui.settings_dialog import SettingsDialog
from tests.gui.test_dialogs_settings_profile import box, saved

pytestmark = [pytest.mark.gui]


def line(dialog: SettingsDialog, name: str) -> QLineEdit:
    widget = dialog.fields[name]
    assert isinstance(widget, QLineEdit)
    return widget


def test_a_grounding_model_chosen_in_the_dialog_is_saved(
    qtbot: Any, qloop: Any, tmp_path: Any
) -> None:
    dialog = SettingsDialog(None, Settings())
    qtbot.addWidget(dialog)
    mode: QComboBox = box(dialog, "grounding")
    assert [mode.itemData(i) for i in range(mode.count())] == ["auto", "off", "zoom", "grounder"]
    assert mode.currentData() == "auto"

    mode.setCurrentIndex(mode.findData("grounder"))
    assert dialog.validate() is None  # a grounder without its model: one clear line
    assert 'grounding = "grounder" needs grounder_model' in dialog.summary.text()
    line(dialog, "grounder_model").setText("Hcompany/Holo2-8B")
    line(dialog, "grounder_base_url").setText("http://127.0.0.1:8001/v1")
    marks = dialog.fields["set_of_mark"]
    assert isinstance(marks, QCheckBox)
    marks.setChecked(True)
    result = saved(qloop, dialog)

    assert (result.grounding, result.grounder_model, result.grounder_base_url) == (
        "grounder",
        "Hcompany/Holo2-8B",
        "http://127.0.0.1:8001/v1",
    )
    assert result.set_of_mark is True
    path = save_settings(result, tmp_path / "settings.toml")
    assert load_settings(path, env={}).grounder_model == "Hcompany/Holo2-8B"
