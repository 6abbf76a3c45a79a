"""`--model-profile` on run and doctor: a bad name is one line and exit 3; doctor shows it."""

from __future__ import annotations

from typing import Any

import pytest

from desktop_agent.cli import EXIT_REFUSED, build_parser
from desktop_agent.launch import main

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.mark.parametrize("command", [["run", "x"], ["doctor"]])
def test_an_unknown_model_profile_is_refused_in_one_line(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--model-profile", "qwen9"]) == EXIT_REFUSED
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "unknown model profile 'qwen9' (one of: auto, openai-reasoning," in err[0]


def test_the_profile_options_parse() -> None:
    args = build_parser().parse_args(["run", "x", "--model-profile", "UI-TARS-1.5"])
    assert args.model_profile == "ui-tars-1.5"
    args = build_parser().parse_args(["doctor", "--calibrate", "--model-profile", "auto"])
    assert (args.calibrate, args.model_profile) == (True, "auto")


def test_doctor_calibrate_without_a_display_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    assert main(["doctor", "--calibrate"]) == EXIT_REFUSED
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("desktop-agent: no display to open the window on")


async def test_doctor_names_the_profile_the_model_gets() -> None:
    from desktop_agent.cli.commands import _model_checks
    from desktop_agent.settings import Settings
    from tests.support.model_server import ModelServer

    async with ModelServer(ollama={"qwen3-vl:8b": ["completion", "vision"]}) as server:
        settings = Settings(base_url=server.base_url, model="qwen3-vl:8b")
        items = await _model_checks(settings)
        pinned = await _model_checks(settings.model_copy(update={"model_profile": "generic"}))
    profile = next(item for item in items if item.name == "profile")
    assert profile.ok
    assert profile.detail.startswith("qwen3-vl (auto): Qwen3-VL: 0–1000 relative coordinates")
    assert (
        "coordinates normalized; backend qwen3_vl: chat completions, Qwen3-VL's computer_use"
        in (profile.detail)
    )
    assert next(i for i in pinned if i.name == "profile").detail.startswith("generic (generic)")


async def test_doctor_names_the_computer_tool_an_openai_computer_model_gets() -> None:
    from desktop_agent.cli.commands import _model_checks
    from desktop_agent.settings import Settings
    from tests.support.responses_server import ResponsesServer

    async with ResponsesServer() as server:
        settings = Settings(base_url=server.base_url, model="computer-use-preview")
        items = await _model_checks(settings)
    profile = next(item for item in items if item.name == "profile")
    assert profile.detail.startswith("openai-computer (auto): OpenAI's computer tool")
    assert (
        "backend openai_computer: OpenAI Responses API, the computer tool (computer_use_preview "
        "for computer-use-preview*, else the GA computer tool with batched actions)"
    ) in profile.detail
    # the model check's request reached the server (GET /v1/models: the cheap one)
    assert ("GET", "/v1/models") in [(method, path) for method, path, _ in server.heard]


@pytest.mark.parametrize(
    ("key", "ok", "detail"),
    [
        ("sk-good", True, "accepted (GET /models)"),
        ("sk-bad", False, "refused the API key (401)"),
        (None, False, "no API key is set for"),
    ],
)
async def test_doctor_checks_the_key_an_openai_computer_model_needs(
    monkeypatch: pytest.MonkeyPatch, key: str | None, ok: bool, detail: str
) -> None:
    from desktop_agent.cli.commands import _model_checks
    from desktop_agent.settings import Settings
    from tests.support.responses_server import ResponsesServer

    if key is None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    else:
        monkeypatch.setenv("OPENAI_API_KEY", key)
    async with ResponsesServer(api_keys=("sk-good",)) as server:
        settings = Settings(base_url=server.base_url, model="computer-use-preview")
        items = await _model_checks(settings)
    checked = next(item for item in items if item.name == "api key")
    assert checked.ok is ok
    assert detail in checked.detail
    # a chat model's doctor asks nothing of its key: a local server needs none
    assert "api key" not in [i.name for i in await _chat_items()]


async def _chat_items() -> list[Any]:
    from desktop_agent.cli.commands import _model_checks
    from desktop_agent.settings import Settings
    from tests.support.model_server import ModelServer

    async with ModelServer() as server:
        return await _model_checks(Settings(base_url=server.base_url, model="qwen2.5vl"))


@pytest.mark.parametrize(
    ("key", "ok", "detail"),
    [
        ("sk-ant-good", True, "accepted (GET /v1/models)"),
        ("sk-ant-bad", False, "refused the key (401)"),
        (None, False, "no Anthropic API key for"),
    ],
)
async def test_doctor_names_the_anthropic_tool_version_and_checks_its_key(
    monkeypatch: pytest.MonkeyPatch, key: str | None, ok: bool, detail: str
) -> None:
    from desktop_agent.cli.commands import _model_checks
    from desktop_agent.settings import Settings
    from tests.support.messages_server import MessagesServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if key is None:
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    else:
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    async with MessagesServer(api_keys=("sk-ant-good",)) as server:
        settings = Settings(
            base_url=server.url, model="claude-sonnet-4-5", model_profile="anthropic-computer"
        )
        items = await _model_checks(settings)
    profile = next(item for item in items if item.name == "profile")
    assert "claude-sonnet-4-5 gets computer_20250124 (beta computer-use-2025-01-24)" in (
        profile.detail
    )
    checked = next(item for item in items if item.name == "api key")
    assert checked.ok is ok
    assert detail in checked.detail
    assert "ANTHROPIC_API_KEY" in checked.fix
