"""A run's own model profile (API, MCP run_task, `run --model-profile`) is the one its
planner speaks, stored with the run and said by `show`; without one the settings' holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_agent.agent import Agent
from desktop_agent.cli.output import human
from desktop_agent.core.events import RunStarted
from desktop_agent.core.models import TaskSpec
from desktop_agent.settings import Settings
from tests.fakes import FakeExecutor, FakeObserver
from tests.support.model_server import ModelServer
from tests.unit.planner.conftest import make_observation


@pytest.mark.parametrize(("asked", "spoken"), [("ui-tars", "ui-tars"), ("", "qwen2.5-vl-ollama")])
async def test_the_runs_profile_is_the_one_its_planner_speaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, asked: str, spoken: str
) -> None:
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))
    async with ModelServer([]) as server:
        settings = Settings(base_url=server.base_url, model="qwen2.5vl", vision="yes")
        agent = await Agent.open(
            tmp_path, settings, observer=FakeObserver(make_observation()), executor=FakeExecutor()
        )
        try:
            run = await agent.runner.create(
                TaskSpec(goal="g", base_url=server.base_url, model="qwen2.5vl",
                         allowed_tools=("click",), model_profile=asked)
            )  # fmt: skip
            planner = await agent.prepare(run)
            stored = await agent.repo.get_run(run.id)
            await planner.aclose()  # type: ignore[attr-defined]
        finally:
            await agent.close()
    assert planner.profile.name == spoken  # type: ignore[attr-defined]
    assert stored is not None and stored.model_profile == asked
    line = human(RunStarted(stored))
    assert ("model profile ui-tars" in line) == bool(asked)
