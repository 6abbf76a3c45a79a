"""Nothing clipped: each dialog and panel laid out at 100 % and 200 % scale, in English and in
Chinese, gives every label the room its text needs (tests/support/clipped_labels.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_agent.ui.i18n import translations_dir

pytestmark = [pytest.mark.gui]

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "clipped_labels.py"


@pytest.mark.parametrize("language", ["en", "zh_CN"])
@pytest.mark.parametrize("scale", ["1", "2"])
def test_every_label_has_the_room_its_text_needs(scale: str, language: str) -> None:
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
