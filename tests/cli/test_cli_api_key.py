"""`run` and `doctor` send the keyring's API key only to the saved server: a URL named by
`--base-url` or `DESKTOP_AGENT_BASE_URL` gets the key of `--api-key-env` / the environment,
never the keyring's (docs/settings.md "The API key")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_agent.launch import main
from desktop_agent.settings import KEYRING_SERVICE, KEYRING_USER, Settings, save_settings
from tests.support.keyrings import memory_keyring
from tests.support.model_server import ModelServer, serve_in_thread

STORED = "sk-stored-for-the-saved-server"
FROM_ENV = "sk-named-for-this-run"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """DESKTOP_AGENT_HOME with the keyring holding STORED; no model settings from outside."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(home))
    for name in ("DESKTOP_AGENT_BASE_URL", "DESKTOP_AGENT_MODEL", "DISPLAY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with memory_keyring() as backend:
        backend.passwords[(KEYRING_SERVICE, KEYRING_USER)] = STORED
        yield home


@pytest.fixture
def servers(home: Path) -> Iterator[tuple[ModelServer, ModelServer]]:
    """(the saved server, another one): both blind, so a run is refused at its vision check
    after asking the server twice (its model list, then /api/show)."""
    blind = {"llama3": ["completion"]}
    with (
        serve_in_thread(ModelServer(ollama=blind, models=("llama3",))) as saved,
        serve_in_thread(ModelServer(ollama=blind, models=("llama3",))) as other,
    ):
        save_settings(Settings(base_url=saved.base_url, model="llama3"), home / "settings.toml")
        yield saved, other


def keys_seen(server: ModelServer) -> set[str | None]:
    assert server.heard, "the server was not asked"
    return {header for _, _, header in server.heard}


def run_args(tmp_path: Path, *extra: str) -> list[str]:
    return ["run", "look", "--model", "llama3", "--data-dir", str(tmp_path / "data"), *extra]


def test_run_against_the_saved_server_sends_the_keyrings_key(
    tmp_path: Path, servers: tuple[ModelServer, ModelServer]
) -> None:
    saved, _ = servers
    assert main(run_args(tmp_path)) == 3  # refused: the model cannot see
    assert keys_seen(saved) == {f"Bearer {STORED}"}


def test_run_with_another_base_url_never_sends_the_keyrings_key(
    tmp_path: Path, servers: tuple[ModelServer, ModelServer]
) -> None:
    saved, other = servers
    assert main(run_args(tmp_path, "--base-url", other.base_url)) == 3
    assert f"Bearer {STORED}" not in keys_seen(other)
    assert saved.heard == []


def test_the_base_url_from_the_environment_never_gets_the_keyrings_key(
    tmp_path: Path, servers: tuple[ModelServer, ModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, other = servers
    monkeypatch.setenv("DESKTOP_AGENT_BASE_URL", other.base_url)
    assert main(run_args(tmp_path)) == 3
    assert f"Bearer {STORED}" not in keys_seen(other)


def test_run_with_another_base_url_sends_the_key_named_by_api_key_env(
    tmp_path: Path, servers: tuple[ModelServer, ModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, other = servers
    monkeypatch.setenv("MY_KEY", FROM_ENV)
    args = run_args(tmp_path, "--base-url", other.base_url, "--api-key-env", "MY_KEY")
    assert main(args) == 3
    assert keys_seen(other) == {f"Bearer {FROM_ENV}"}


def test_doctor_with_another_base_url_never_sends_the_keyrings_key(
    tmp_path: Path, servers: tuple[ModelServer, ModelServer]
) -> None:
    saved, other = servers
    data = ["--data-dir", str(tmp_path / "data")]
    main(["doctor", "--base-url", other.base_url, *data])
    assert f"Bearer {STORED}" not in keys_seen(other)
    main(["doctor", *data])
    assert keys_seen(saved) == {f"Bearer {STORED}"}
