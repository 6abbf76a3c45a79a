"""The app's Host goes through the one start-up order of every face (docs/architecture.md, the
Host): opened and closed by `Host.serving`, on the engine's thread (host/engine.py
`Engine.hold`), while the GUI thread only awaits."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent import app as app_module
from desktop_agent.host.host import Host
from desktop_agent.settings import Settings, save_settings
from desktop_agent.ui.single_instance import InstanceGuard
from tests.gui.fake_agent import drive, engine_of, until

pytestmark = [pytest.mark.gui]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A data dir with its settings file (not a first start: no finder), no X display (no
    hotkey, no takeover watch)."""
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path))
    monkeypatch.delenv("DISPLAY", raising=False)
    save_settings(Settings(base_url="http://127.0.0.1:9/v1", probe_ports=[9]))
    yield tmp_path


def test_the_apps_host_is_opened_and_closed_by_host_serving_on_the_engine_thread(
    qtbot: Any, qloop: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop_agent.ui.main_window import MainWindow

    seen: list[tuple[str, str]] = []
    serving = Host.serving.__func__  # type: ignore[attr-defined]

    @contextlib.asynccontextmanager
    async def recorded(cls: type[Host], *args: Any, **kwargs: Any) -> AsyncIterator[Host]:
        async with serving(cls, *args, **kwargs) as host:
            seen.append(("opened", threading.current_thread().name))
            try:
                yield host
            finally:
                seen.append(("closing", threading.current_thread().name))
        seen.append(("closed", threading.current_thread().name))

    monkeypatch.setattr(Host, "serving", classmethod(recorded))
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    guard = InstanceGuard(home)

    async def scenario() -> None:
        app = asyncio.ensure_future(app_module._serve(window, guard, home))
        await until(lambda: window.client is not None, 30, "the app up")
        assert seen == [("opened", "desktop-agent-engine")]
        host = engine_of(window).host
        window.quit_requested.emit()
        assert await asyncio.wait_for(app, 30) == 0
        assert host._closed, "closed by Host.serving's exit"

    try:
        drive(qloop, scenario(), timeout=60)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            qloop.remove_signal_handler(signum)  # _serve's, on the test's loop
    assert seen == [
        ("opened", "desktop-agent-engine"),
        ("closing", "desktop-agent-engine"),
        ("closed", "desktop-agent-engine"),
    ]
