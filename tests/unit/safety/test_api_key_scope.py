"""The API key goes only where `settings.api_key_for` says: the keyring's key only to the server
it was saved for (the settings file's base URL), the environment's key to the server this
process was told to use, nothing to any other URL, and nothing over plain http beyond this
machine — on every path (runs, doctor, the app's checks: tests/cli and tests/gui hold those)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_agent.agent import Agent
from desktop_agent.core.models import TaskSpec
from desktop_agent.instances.loopback import is_loopback_address
from desktop_agent.settings import (
    KEYRING_SERVICE,
    KEYRING_USER,
    Settings,
    api_key_for,
    save_settings,
)
from tests.fakes import FakeExecutor, FakeObserver, make_observation
from tests.support.keyrings import memory_keyring
from tests.support.model_server import ModelServer, Reply

SECRET = "sk-test-only-for-the-configured-server"
STORED = "sk-stored-in-the-keyring"


@pytest.fixture
def stored_key() -> Iterator[None]:
    with memory_keyring() as backend:
        backend.passwords[(KEYRING_SERVICE, KEYRING_USER)] = STORED
        yield


def saved_at(home: Path, url: str) -> dict[str, str]:
    """An environment whose settings file (in DESKTOP_AGENT_HOME) saves `url`."""
    save_settings(Settings(base_url=url), home / "settings.toml")
    return {"DESKTOP_AGENT_HOME": str(home)}


@pytest.mark.parametrize(
    ("saved", "used", "url", "expected"),
    [
        # the saved server gets the keyring's key, over https or plain http on this machine
        ("https://api.example.com/v1", None, "https://api.example.com/v1", STORED),
        ("http://127.0.0.1:11434/v1", None, "http://127.0.0.1:11434/v1/", STORED),
        ("http://localhost:8080/v1", None, "http://localhost:8080/v1", STORED),
        ("http://127.0.0.2:8080/v1", None, "http://127.0.0.2:8080/v1", STORED),
        ("http://[::1]:8080/v1", None, "http://[::1]:8080/v1", STORED),
        # never over plain http beyond this machine, saved or not
        ("http://192.168.1.20:8000/v1", None, "http://192.168.1.20:8000/v1", None),
        ("http://127.attacker.example/v1", None, "http://127.attacker.example/v1", None),
        ("http://127.0.0.1.nip.io/v1", None, "http://127.0.0.1.nip.io/v1", None),
        # another server: nothing
        ("https://api.example.com/v1", None, "https://evil.example.com/v1", None),
        ("http://127.0.0.1:11434/v1", None, "http://127.0.0.1:9999/v1", None),
        # a server named for this process (--base-url, DESKTOP_AGENT_BASE_URL, an unsaved
        # dialog): the environment's key, never the keyring's
        (
            "https://api.example.com/v1",
            "https://other.example/v1",
            "https://other.example/v1",
            SECRET,
        ),  # noqa: E501
    ],
)
def test_which_key_goes_where(
    stored_key: None, tmp_path: Path, saved: str, used: str | None, url: str, expected: str | None
) -> None:
    env = saved_at(tmp_path, saved) | {"OPENAI_API_KEY": SECRET}
    settings = Settings(base_url=used or saved)

    key = api_key_for(url, settings, env)

    assert key == expected


def test_a_server_named_for_this_process_never_gets_the_keyrings_key(
    stored_key: None, tmp_path: Path
) -> None:
    env = saved_at(tmp_path, "https://api.example.com/v1")
    settings = Settings(base_url="https://elsewhere.example/v1")

    assert api_key_for("https://elsewhere.example/v1", settings, env) is None
    assert api_key_for("https://api.example.com/v1", settings, env) == STORED


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("LOCALHOST", True),
        ("127.attacker.example", False),
        ("127.0.0.1.example.com", False),
        ("localhost.attacker.example", False),
        ("10.0.0.1", False),
        ("", False),
    ],
)
def test_loopback_is_an_address_not_a_name_that_starts_like_one(host: str, loopback: bool) -> None:
    assert is_loopback_address(host) is loopback


async def test_a_run_naming_another_server_asks_it_without_the_stored_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))
    answer = Reply({"action": "done", "message": "ok", "reason": "nothing to do"})
    async with (
        ModelServer(script=[answer]) as own,
        ModelServer(script=[answer]) as other,
    ):
        settings = Settings(base_url=own.base_url, model="qwen2.5vl", vision="yes")
        agent = await Agent.open(
            tmp_path, settings, observer=FakeObserver(make_observation()), executor=FakeExecutor()
        )
        try:
            for server in (own, other):
                run = await agent.runner.create(
                    TaskSpec(goal="look", base_url=server.base_url, model="qwen2.5vl")
                )
                final = await agent.runner.run(run, await agent.prepare(run))
                assert final.status.value == "completed", final.message
        finally:
            await agent.close()
    assert own.authorizations == [f"Bearer {SECRET}"]
    assert len(other.authorizations) == 1
    assert SECRET not in str(other.authorizations), "the key went to a server it was not set for"


async def test_a_grounding_model_on_another_server_gets_no_stored_key(
    stored_key: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    saved = "https://api.example.com/v1"
    save_settings(Settings(base_url=saved), tmp_path / "home" / "settings.toml")
    settings = Settings(
        base_url=saved,
        grounding="grounder",
        grounder_base_url="https://grounder.example/v1",
        grounder_model="ui-tars-1.5-7b",
    )
    agent = await Agent.open(
        tmp_path,
        settings,
        observer=FakeObserver(make_observation()),
        executor=FakeExecutor(),
        check_model=False,
    )
    try:
        run = await agent.runner.create(TaskSpec(goal="look", base_url=saved, model="gpt-4.1"))
        planner = await agent.prepare(run)
        try:
            assert planner._api_key == STORED  # type: ignore[attr-defined]
            grounding = planner._grounding_model  # type: ignore[attr-defined]
            assert grounding is not None and grounding._api_key is None
        finally:
            await planner.aclose()  # type: ignore[attr-defined]
    finally:
        await agent.close()
