"""Nothing clipped: each dialog and panel laid out at 100 % and 200 % scale, in English and in
Chinese, gives every text the room it needs: labels, buttons, check boxes, radio buttons,
group titles and tabs (tests/support/clipped_texts.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.ui.i18n import translations_dir

pytestmark = [pytest.mark.gui]

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "clipped_texts.py"


@pytest.mark.parametrize("language", ["en", "zh_CN"])
@pytest.mark.parametrize("scale", ["1", "2"])
def test_every_text_has_the_room_it_needs(scale: str, language: str) -> None:
    if language != "en":
        assert (translations_dir() / f"desktop_agent_{language}.qm").exists()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QT_SCALE_FACTOR": scale}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), language],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_the_check_finds_a_clipped_label_button_check_box_group_title_and_tab(qtbot: Any) -> None:
    from PySide6.QtWidgets import (
        QCheckBox,
        QGroupBox,
        QLabel,
        QPushButton,
        QTabWidget,
        QVBoxLayout,
        QWidget,
    )

    sys.path.insert(0, str(SCRIPT.parent))
    from clipped_texts import clipped

    window = QWidget()
    qtbot.addWidget(window)
    box = QGroupBox("A group title far longer than the box it names")
    QVBoxLayout(box)
    tabs = QTabWidget()
    for text in ("A first tab with a long name", "A second tab with a long name"):
        tabs.addTab(QWidget(), text)
    children = [
        QLabel("A label longer than its room"),
        QPushButton("A button longer than its room"),
        QCheckBox("A check box longer than its room"),
        box,
        tabs,
    ]
    for child in children:
        child.setParent(window)
        child.setFixedWidth(60)  # less than each text needs: what a layout must never give
    window.show()
    qtbot.waitExposed(window)

    kinds = sorted({key for item in clipped(window) for key in item if key in KINDS})
    assert kinds == ["button", "group", "label", "tab"]
    # the check box is a button
    names = [item.get("button") for item in clipped(window)]
    assert "A check box longer than its room" in names

    for child in children:
        child.setMinimumWidth(0)
        child.setMaximumWidth(16777215)
        child.resize(child.sizeHint().expandedTo(child.minimumSizeHint()))
    tabs.resize(tabs.tabBar().sizeHint().width() + 20, tabs.height())  # every tab in sight
    assert clipped(window) == []


KINDS = {"label", "button", "group", "tab"}
