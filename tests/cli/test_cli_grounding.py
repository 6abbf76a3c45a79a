"""`run --grounding/--grounder-url/--grounder-model` reach the settings the run is made with;
a grounder without its model is one line and exit 3 (issue #19)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from desktop_agent.cli import EXIT_REFUSED, build_parser
from desktop_agent.cli.commands import settings_for
from desktop_agent.launch import main

pytestmark = pytest.mark.usefixtures("isolated_home")


def test_a_grounding_model_on_the_command_line_is_the_runs_grounder() -> None:
    args = build_parser().parse_args(
        [
            "run",
            "x",
            "--grounder-model",
            "Hcompany/Holo2-8B",
            "--grounder-url",
            "http://127.0.0.1:9/v1/",
        ]
    )

    settings = settings_for(args)

    assert (settings.grounding, settings.grounder_model, settings.grounder_base_url) == (
        "grounder",
        "Hcompany/Holo2-8B",
        "http://127.0.0.1:9/v1",
    )


@pytest.mark.parametrize("mode", ["off", "zoom", "auto"])
def test_grounding_on_the_command_line_beats_the_settings(mode: str) -> None:
    settings = settings_for(build_parser().parse_args(["run", "x", "--grounding", mode]))

    assert settings.grounding == mode


def test_without_the_options_the_settings_grounding_stays() -> None:
    assert settings_for(build_parser().parse_args(["run", "x"])).grounding == "auto"


def test_a_grounder_without_its_model_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "x", "--grounding", "grounder"]) == EXIT_REFUSED

    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert 'grounding = "grounder" needs grounder_model' in err[0]


def test_an_unknown_grounding_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "x", "--grounding", "sideways"]) == EXIT_REFUSED

    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "--grounding" in err[0]


async def test_doctor_says_how_clicks_are_refined_and_checks_the_grounding_model() -> None:
    from desktop_agent.cli.commands import _model_checks
    from desktop_agent.settings import Settings
    from tests.support.model_server import ModelServer
    from tests.unit.planner.conftest import closed_port

    def grounding(items: list[Any]) -> Any:
        return next(item for item in items if item.name == "grounding")

    async with (
        ModelServer(ollama={"qwen2.5vl:7b": ["completion", "vision"]}) as server,
        ModelServer(models=("Salesforce/GTA1-7B",)) as grounder,
    ):
        settings = Settings(base_url=server.base_url, model="qwen2.5vl:7b")
        by_grounder = {"grounding": "grounder", "grounder_model": "Salesforce/GTA1-7B"}
        auto = grounding(await _model_checks(settings))
        found = grounding(
            await _model_checks(
                settings.model_copy(update={**by_grounder, "grounder_base_url": grounder.base_url})
            )
        )
        gone = grounding(
            await _model_checks(
                settings.model_copy(
                    update={
                        **by_grounder,
                        "grounder_base_url": f"http://127.0.0.1:{closed_port()}/v1",
                    }
                )
            )
        )

    assert (auto.ok, auto.detail) == (True, "zoom (auto): the model looks again on a crop")
    assert found.ok
    assert found.detail == (
        f"grounder (grounder): Salesforce/GTA1-7B at {grounder.base_url}, profile gta1 "
        "(gta1 answers, coordinates resized)"
    )
    assert not gone.ok
    assert gone.fix.startswith("start the grounding model's server")


async def test_doctor_says_when_the_grounders_server_does_not_have_the_grounding_model() -> None:
    from desktop_agent.cli.commands import _model_checks
    from desktop_agent.settings import Settings
    from tests.support.model_server import ModelServer

    async with (
        ModelServer(ollama={"qwen2.5vl:7b": ["completion", "vision"]}) as server,
        ModelServer(models=("Hcompany/Holo2-8B",)) as grounder,
    ):
        settings = Settings(
            base_url=server.base_url,
            model="qwen2.5vl:7b",
            grounding="grounder",
            grounder_model="Salesforce/GTA1-7B",
            grounder_base_url=grounder.base_url,
        )
        (line,) = [item for item in await _model_checks(settings) if item.name == "grounding"]

    assert not line.ok
    assert "'Salesforce/GTA1-7B' is not among the models of the server at" in line.detail
    assert "Hcompany/Holo2-8B" in line.detail
    assert line.fix.startswith("load the grounding model")


async def test_doctor_sends_the_planners_key_to_its_server_and_none_to_another_grounder(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop_agent.cli.commands import _model_checks
    from desktop_agent.settings import KEYRING_SERVICE, KEYRING_USER, Settings, save_settings
    from tests.support.keyrings import memory_keyring
    from tests.support.model_server import ModelServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    async with (
        ModelServer(ollama={"qwen2.5vl:7b": ["completion", "vision"]}) as server,
        ModelServer(models=("Salesforce/GTA1-7B",)) as grounder,
    ):
        settings = Settings(base_url=server.base_url, model="qwen2.5vl:7b")
        save_settings(settings, isolated_home / "settings.toml")  # the key is for this server
        with memory_keyring() as keyring:
            keyring.passwords[(KEYRING_SERVICE, KEYRING_USER)] = "sk-saved"
            items = await _model_checks(
                settings.model_copy(
                    update={
                        "grounding": "grounder",
                        "grounder_model": "Salesforce/GTA1-7B",
                        "grounder_base_url": grounder.base_url,
                    }
                )
            )

    assert all(item.ok for item in items), items
    assert {key for _, _, key in server.heard} == {"Bearer sk-saved"}
    assert grounder.heard and {key for _, _, key in grounder.heard} == {None}
