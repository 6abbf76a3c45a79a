"""Settings: TOML round trip, one line per bad value, env overrides, paths, and the API key."""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail

from desktop_agent.core.errors import ConfigError
from desktop_agent.core.models import Policy
from desktop_agent.settings import (
    KEYRING_SERVICE,
    PRESETS,
    Settings,
    get_api_key,
    load_settings,
    resolve_data_dir,
    save_settings,
    set_api_key,
    settings_path,
)
from tests.support.keyrings import MemoryKeyring
from tests.support.keyrings import memory_keyring as keyring_in_memory

SECRET = "sk-very-secret-0123456789"


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    with keyring_in_memory() as backend:
        yield backend


@pytest.fixture
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]  # keyring: no annotations
    yield
    keyring.set_keyring(previous)


def _load_error(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env=env or {})
    return str(caught.value).splitlines()


# ── defaults, round trip ─────────────────────────────────────────────────────


def test_defaults_are_ollama_qwen_and_the_documented_limits(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "missing.toml", env={})
    assert settings == Settings()
    assert (settings.base_url, settings.model) == ("http://localhost:11434/v1", "qwen2.5vl")
    assert (settings.max_steps, settings.max_failures) == (20, 3)
    assert settings.vision == "auto" and settings.api_key_env == "OPENAI_API_KEY"
    assert PRESETS["ollama"].base_url == settings.base_url


def test_round_trip_keeps_every_value(tmp_path: Path) -> None:
    settings = Settings(
        provider="openrouter",
        base_url="https://openrouter.ai/api/v1",
        model='qwen/qwen2.5-vl-72b-instruct "quoted" \\ ünïcode',
        api_key_env="OPENROUTER_KEY",
        vision="yes",
        read_timeout_s=45.5,
        max_steps=200,
        max_failures=7,
        approval_timeout_s=30,
        policies={"click": Policy.ALLOW, "launch_app": Policy.DENY},
        stop_hotkey="ctrl+shift+f12",
        capture_width=1024,
        capture_format="png",
        jpeg_quality=60,
        monitor=2,
        set_of_mark=True,
        minimize_while_acting=False,
    )
    path = save_settings(settings, tmp_path / "nested" / "settings.toml")
    assert load_settings(path, env={}) == settings
    assert tomllib.loads(path.read_text(encoding="utf-8"))["policies"]["launch_app"] == "deny"


def test_save_replaces_atomically_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    save_settings(Settings(max_steps=5), path)
    save_settings(Settings(max_steps=6), path)
    assert load_settings(path, env={}).max_steps == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]


def test_a_failed_save_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "settings.toml"
    save_settings(Settings(max_steps=5), path)

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        save_settings(Settings(max_steps=6), path)
    monkeypatch.undo()
    assert load_settings(path, env={}).max_steps == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]


# ── validation: one line per bad value ───────────────────────────────────────


@pytest.mark.parametrize(
    ("toml", "line"),
    [
        ('base_url = "htp:/x"', "base_url: not a valid http(s) URL: 'htp:/x'"),
        ('base_url = "localhost:11434"', "base_url: not a valid http(s) URL: 'localhost:11434'"),
        (
            'base_url = "http://host:99999/v1"',
            "base_url: not a valid http(s) URL: 'http://host:99999/v1'",
        ),
        ('model = "  "', "model: must not be empty"),
        ("max_steps = 0", "max_steps: input should be greater than or equal to 1, got 0"),
        ("max_steps = 501", "max_steps: input should be less than or equal to 500, got 501"),
        ("max_failures = 51", "max_failures: input should be less than or equal to 50, got 51"),
        (
            'max_steps = "many"',
            "max_steps: input should be a valid integer, unable to parse string as an integer, "
            "got 'many'",
        ),
        ('vision = "maybe"', "vision: input should be 'auto', 'yes' or 'no', got 'maybe'"),
        ('capture_format = "gif"', "capture_format: input should be 'jpeg' or 'png', got 'gif'"),
        (
            'provider = "acme"',
            "provider: unknown provider 'acme' (one of: ollama, lmstudio, vllm, llamacpp, "
            "openai, openai-computer, anthropic-computer, openrouter, custom)",
        ),
        ('api_key_env = "MY KEY"', "api_key_env: not an environment variable name: 'MY KEY'"),
        (
            'stop_hotkey = "ctrl+alt+banana"',
            "stop_hotkey: unknown key 'banana' in 'ctrl+alt+banana'",
        ),
        ('colour = "blue"', "colour: unknown setting"),
        (
            '[policies]\nclick = "sometimes"',
            "policies.click: input should be 'allow', 'ask' or 'deny', got 'sometimes'",
        ),
    ],
)
def test_each_bad_value_gives_one_clear_line(tmp_path: Path, toml: str, line: str) -> None:
    assert _load_error(tmp_path, toml) == [line]


def test_unknown_tool_in_a_policy_is_named(tmp_path: Path) -> None:
    lines = _load_error(tmp_path, '[policies]\nclick = "allow"\nformat_disk = "allow"')
    assert len(lines) == 1
    assert lines[0].startswith("policies: unknown tool 'format_disk' (the tools are: ")
    assert "click" in lines[0] and "launch_app" in lines[0]


def test_several_bad_values_give_one_line_each(tmp_path: Path) -> None:
    lines = _load_error(tmp_path, 'base_url = "nope"\nmodel = ""\nmax_failures = 0')
    assert [line.split(":")[0] for line in lines] == ["base_url", "model", "max_failures"]


def test_broken_toml_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    lines = _load_error(tmp_path, "model = ")
    assert len(lines) == 1
    assert lines[0].startswith(f"settings file {path} is not valid TOML: ")


def test_good_values_are_normalized(tmp_path: Path) -> None:
    settings = Settings(
        base_url="http://localhost:1234/v1/", model=" llava ", stop_hotkey="Control+Alt+Escape"
    )
    assert settings.base_url == "http://localhost:1234/v1"
    assert settings.model == "llava"
    assert settings.stop_hotkey == "ctrl+alt+esc"


# ── environment ──────────────────────────────────────────────────────────────


def test_env_overrides_the_file(tmp_path: Path) -> None:
    path = save_settings(Settings(model="llava", max_steps=9), tmp_path / "settings.toml")
    env = {
        "DESKTOP_AGENT_BASE_URL": "http://127.0.0.1:8000/v1",
        "DESKTOP_AGENT_MODEL": "Qwen/Qwen2.5-VL-7B-Instruct",
        "DESKTOP_AGENT_MAX_STEPS": "50",
        "DESKTOP_AGENT_VISION": "yes",
        "DESKTOP_AGENT_SET_OF_MARK": "true",
        "DESKTOP_AGENT_MODEL_UNUSED": "ignored",
    }
    settings = load_settings(path, env=env)
    assert settings.base_url == "http://127.0.0.1:8000/v1"
    assert settings.model == "Qwen/Qwen2.5-VL-7B-Instruct"
    assert settings.max_steps == 50
    assert settings.vision == "yes"
    assert settings.set_of_mark is True


def test_a_bad_env_value_names_the_variable(tmp_path: Path) -> None:
    lines = _load_error(tmp_path, "", env={"DESKTOP_AGENT_BASE_URL": "ftp://x"})
    assert lines == ["base_url (from DESKTOP_AGENT_BASE_URL): not a valid http(s) URL: 'ftp://x'"]


def test_data_dir_is_the_option_then_the_env_then_the_platform_dir(tmp_path: Path) -> None:
    env = {"DESKTOP_AGENT_HOME": str(tmp_path / "home")}
    assert resolve_data_dir(tmp_path / "cli", env=env) == tmp_path / "cli"
    assert resolve_data_dir(str(tmp_path / "cli"), env=env) == tmp_path / "cli"
    assert resolve_data_dir(None, env=env) == tmp_path / "home"
    platform = resolve_data_dir(None, env={})
    assert platform.name == "desktop-agent"
    assert not (tmp_path / "home").exists()


def test_settings_live_in_the_home_dir_when_it_is_set(tmp_path: Path) -> None:
    assert settings_path({"DESKTOP_AGENT_HOME": str(tmp_path)}) == tmp_path / "settings.toml"
    platform = settings_path({})
    assert platform.name == "settings.toml" and platform.parent.name == "desktop-agent"


def test_load_without_a_path_reads_the_home_dir_file(tmp_path: Path) -> None:
    save_settings(Settings(model="llava"), tmp_path / "settings.toml")
    assert load_settings(env={"DESKTOP_AGENT_HOME": str(tmp_path)}).model == "llava"


# ── the API key ──────────────────────────────────────────────────────────────


def test_api_key_comes_from_the_keyring_first(memory_keyring: MemoryKeyring) -> None:
    set_api_key(SECRET)
    assert memory_keyring.passwords == {(KEYRING_SERVICE, "api-key"): SECRET}
    assert get_api_key(Settings(), env={"OPENAI_API_KEY": "from-env"}) == SECRET


def test_api_key_falls_back_to_the_named_env_var(memory_keyring: MemoryKeyring) -> None:
    settings = Settings(api_key_env="MY_MODEL_KEY")
    assert get_api_key(settings, env={"MY_MODEL_KEY": "from-env"}) == "from-env"
    assert get_api_key(settings, env={"OPENAI_API_KEY": "other"}) is None


def test_clearing_the_key_removes_it_from_the_keyring(memory_keyring: MemoryKeyring) -> None:
    set_api_key(SECRET)
    set_api_key(None)
    set_api_key(None)  # removing twice is fine
    assert memory_keyring.passwords == {}


def test_without_a_keyring_the_env_is_used_and_a_notice_logged(
    no_keyring: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="desktop_agent.settings"):
        key = get_api_key(Settings(), env={"OPENAI_API_KEY": "from-env"})
    assert key == "from-env"
    assert "no usable keyring" in caplog.text and "$OPENAI_API_KEY" in caplog.text


def test_storing_a_key_without_a_keyring_is_a_clear_config_error(no_keyring: None) -> None:
    with pytest.raises(ConfigError) as caught:
        set_api_key(SECRET)
    assert str(caught.value) == (
        "no OS keyring is available to keep the API key; set it in the environment variable "
        "named by api_key_env (OPENAI_API_KEY by default) instead"
    )


def test_api_key_is_absent_from_every_file_written(
    tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    set_api_key(SECRET)
    env = {"DESKTOP_AGENT_HOME": str(tmp_path), "OPENAI_API_KEY": SECRET}
    settings = load_settings(env=env)
    assert get_api_key(settings, env=env) == SECRET
    save_settings(settings, settings_path(env))
    save_settings(settings.model_copy(update={"model": "llava"}), tmp_path / "other.toml")
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written
    for path in written:
        assert SECRET.encode() not in path.read_bytes()


def test_an_api_key_in_the_file_is_never_used(tmp_path: Path, no_keyring: None) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('api_key = "sk-in-file"\nmodel = "llava"\n', encoding="utf-8")
    settings = load_settings(path, env={})
    assert settings.model == "llava"
    assert get_api_key(settings, env={}) is None
    assert "api_key" not in settings.model_dump()
