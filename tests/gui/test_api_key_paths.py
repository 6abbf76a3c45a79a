"""The app's own model checks obey the key rule (settings.api_key_for): the vision check at
start and after a save, the settings dialog's Test connection and Calibrate… (both use the
dialog's URL, maybe unsaved) and `doctor --calibrate` send the keyring's key only to the saved
server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.cli import main
from desktop_agent.host.model_check import connection_report, vision_verdict
from desktop_agent.settings import KEYRING_SERVICE, KEYRING_USER, Settings, save_settings
from tests.gui.fake_agent import drive, make_agent, make_client
from tests.support.keyrings import memory_keyring
from tests.support.model_server import ModelServer, serve_in_thread

pytestmark = pytest.mark.gui

STORED = "sk-stored-for-the-saved-server"


@pytest.fixture
def servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Settings, ModelServer, ModelServer]]:
    """(the saved settings, their server, another server); the keyring holds STORED."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(home))
    for name in ("DESKTOP_AGENT_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    sees = {"qwen2.5vl": ["completion", "vision"]}
    with (
        memory_keyring() as backend,
        serve_in_thread(ModelServer(ollama=sees)) as saved,
        serve_in_thread(ModelServer(ollama=sees)) as other,
    ):
        backend.passwords[(KEYRING_SERVICE, KEYRING_USER)] = STORED
        settings = Settings(base_url=saved.base_url)
        save_settings(settings, home / "settings.toml")
        yield settings, saved, other


def assert_stored_key_only_at(saved: ModelServer, other: ModelServer) -> None:
    assert saved.heard and other.heard, "a server was not asked"
    assert {header for _, _, header in saved.heard} == {f"Bearer {STORED}"}
    assert {header for _, _, header in other.heard} == {None}


def test_the_vision_check_and_test_connection_send_the_stored_key_only_to_the_saved_server(
    qloop: Any, tmp_path: Path, servers: tuple[Settings, ModelServer, ModelServer]
) -> None:
    settings, saved, other = servers
    # another URL: typed in the dialog and not saved yet, or set by $DESKTOP_AGENT_BASE_URL
    unsaved = settings.model_copy(update={"base_url": other.base_url})
    client = make_client(make_agent(tmp_path / "data", settings=settings))
    try:
        for candidate in (settings, unsaved):
            drive(qloop, client.ask(vision_verdict, candidate))
            assert "The server answers" in drive(qloop, client.ask(connection_report, candidate))
    finally:
        drive(qloop, client.close())
    assert_stored_key_only_at(saved, other)


def test_doctor_calibrate_sends_the_stored_key_only_to_the_saved_server(
    qapp: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    servers: tuple[Settings, ModelServer, ModelServer],
) -> None:
    import desktop_agent.app
    import desktop_agent.host.display
    from desktop_agent.ui import calibration

    settings, _, other = servers
    keys: dict[str, str | None] = {}

    async def calibrate_in_window(settings: Settings, api_key: str | None, **_: Any) -> None:
        keys[settings.base_url] = api_key

    monkeypatch.setattr(calibration, "calibrate_in_window", calibrate_in_window)
    monkeypatch.setattr(desktop_agent.host.display, "display_problem", lambda env: None)
    data = ["--data-dir", str(tmp_path / "data")]
    main(["doctor", "--calibrate", *data])
    main(["doctor", "--calibrate", "--base-url", other.base_url, *data])
    assert keys == {settings.base_url: STORED, other.base_url: None}
