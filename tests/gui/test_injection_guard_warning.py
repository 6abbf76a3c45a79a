"""The window says when the injection guard is off (issue 31: settings.injection_guard)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop_agent.settings import Settings
from desktop_agent.ui.main_window import MainWindow
from desktop_agent.ui.status_bar import INJECTION_GUARD_OFF
from tests.fakes import make_agent
from tests.gui.fake_agent import bind_window, drive, until


def _shown(qloop: Any, settings: Settings, data_dir: Path) -> tuple[bool, str]:
    window = MainWindow()
    window.show()
    agent = make_agent(data_dir, settings=settings)

    async def bind() -> Any:
        client = bind_window(window, agent)
        await until(lambda: not window.tasks, what="the history and the vision check")
        return client

    client = drive(qloop, bind())
    try:
        return window.bar.guard_label.isVisible(), window.bar.guard_label.text()
    finally:
        drive(qloop, window.shutdown())
        drive(qloop, client.close())
        window.deleteLater()


def test_the_status_bar_warns_while_the_injection_guard_is_off(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    off = Settings(approval_timeout_s=30.0, injection_guard="off")
    on = Settings(approval_timeout_s=30.0)

    assert _shown(qloop, off, tmp_path / "off") == (True, INJECTION_GUARD_OFF)
    assert _shown(qloop, on, tmp_path / "on")[0] is False
