"""The app's own model checks obey the key rule (settings.api_key_for): the vision check at
start and after a save, the settings dialog's Test connection and Calibrate… (both use the
dialog's URL, maybe unsaved) and `doctor --calibrate` send the keyring's key only to the saved
server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.launch import main
from desktop_agent.settings import KEYRING_SERVICE, KEYRING_USER, Settings, save_settings
from tests.fakes import make_agent
from tests.gui.fake_agent import drive, make_client
from tests.support.keyrings import memory_keyring
from tests.support.model_server import ModelServer, Reply, serve_in_thread

pytestmark = pytest.mark.gui

STORED = "sk-stored-for-the-saved-server"
CLICK = Reply({"action": "tool", "tool": "click", "args": {"x": 10, "y": 10}})


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
        serve_in_thread(ModelServer(ollama=sees, then=CLICK)) as saved,
        serve_in_thread(ModelServer(ollama=sees, then=CLICK)) as other,
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
            drive(qloop, client.ask(client.host.vision_verdict, candidate))
            answer = drive(qloop, client.ask(client.host.connection_report, candidate))
            assert "The server answers" in answer
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
    from desktop_agent.core.calibration import targets_for
    from desktop_agent.planner.calibration import synthetic_observation
    from desktop_agent.ui import calibration

    settings, saved, other = servers
    asked: list[str] = []

    async def calibrate_in_window(calibration: Any, on_engine: Any, **_: Any) -> None:
        # the window's part done: the engine takes the screenshot and asks the model
        observation, _targets = synthetic_observation(640, 360)
        await on_engine(calibration.ask, observation, targets_for(640, 360))
        asked.append(calibration.settings.base_url)

    monkeypatch.setattr(calibration, "calibrate_in_window", calibrate_in_window)
    monkeypatch.setattr(desktop_agent.host.display, "display_problem", lambda env: None)
    data = ["--data-dir", str(tmp_path / "data")]
    main(["doctor", "--calibrate", *data])
    main(["doctor", "--calibrate", "--base-url", other.base_url, *data])
    assert asked == [settings.base_url, other.base_url]
    assert saved.authorizations == [f"Bearer {STORED}"] * 5
    # (the openai client needs some key: a placeholder goes where none may)
    assert len(other.authorizations) == 5
    assert not any(STORED in (header or "") for header in other.authorizations)
