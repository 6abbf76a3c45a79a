"""Anthropic's key (keyring entry `anthropic` of service desktop-agent, else
$ANTHROPIC_API_KEY) goes where `settings.api_key_for` says for a provider's own key: the
keyring's to Anthropic's API or the saved server, the variable to the server this process was
told to use, nothing elsewhere, nothing over plain http afar; and a run of the
anthropic-computer backend sends it (issue 29 item 4)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_agent.planner.backends import backend_named
from desktop_agent.settings import KEYRING_SERVICE, ProviderKey, Settings, api_key_for
from tests.support.keyrings import memory_keyring
from tests.unit.safety.test_api_key_scope import saved_at

KEYRING = "sk-ant-in-the-keyring"
VARIABLE = "sk-ant-from-the-environment"
GENERAL = "sk-general"
OWN = ProviderKey(*backend_named("anthropic_computer").own_key or ("", "", ""))


@pytest.fixture
def anthropic_key() -> Iterator[None]:
    with memory_keyring() as backend:
        backend.passwords[(KEYRING_SERVICE, "anthropic")] = KEYRING
        yield


@pytest.mark.parametrize(
    ("saved", "used", "url", "expected"),
    [
        # Anthropic's own API gets the keyring's Anthropic key whatever server is saved
        ("https://api.openai.com/v1", None, "https://api.anthropic.com", KEYRING),
        ("https://api.anthropic.com", None, "https://api.anthropic.com/", KEYRING),
        # a proxy saved as the server gets it too (it was saved for that)
        ("https://proxy.example/anthropic", None, "https://proxy.example/anthropic", KEYRING),
        # a proxy named for this run only (--base-url): the variable, never the keyring's
        ("https://api.openai.com/v1", "https://proxy.example", "https://proxy.example", VARIABLE),
        # any other server: not Anthropic's key (the general rule: nothing here)
        ("https://api.openai.com/v1", None, "https://evil.example", None),
        # never over plain http beyond this machine
        ("http://192.168.1.20:8000", None, "http://192.168.1.20:8000", None),
    ],
)
def test_which_anthropic_key_goes_where(
    anthropic_key: None, tmp_path: Path, saved: str, used: str | None, url: str, expected: str
) -> None:
    env = {**saved_at(tmp_path, saved), "ANTHROPIC_API_KEY": VARIABLE}
    settings = Settings(base_url=used or saved)

    assert api_key_for(url, settings, env, OWN) == expected


def test_without_a_keyring_entry_the_variable_goes_to_anthropics_api(tmp_path: Path) -> None:
    with memory_keyring():
        env = {**saved_at(tmp_path, "https://api.openai.com/v1"), "ANTHROPIC_API_KEY": VARIABLE}
        settings = Settings(base_url="https://api.openai.com/v1")

        assert api_key_for("https://api.anthropic.com", settings, env, OWN) == VARIABLE


def test_without_an_anthropic_key_the_saved_servers_key_is_used(tmp_path: Path) -> None:
    with memory_keyring() as backend:
        backend.passwords[(KEYRING_SERVICE, "api-key")] = GENERAL
        env = saved_at(tmp_path, "https://api.anthropic.com")
        settings = Settings(base_url="https://api.anthropic.com")

        assert api_key_for("https://api.anthropic.com", settings, env, OWN) == GENERAL
