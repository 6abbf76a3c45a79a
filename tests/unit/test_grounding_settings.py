"""The grounding settings reach the run: Agent.prepare gives the planner its grounding and the
separate grounding model (issue #19)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from desktop_agent.agent import Agent
from desktop_agent.core.models import Policy, StepKind, TaskSpec
from desktop_agent.settings import Settings, validation_messages
from tests.fakes import FakeExecutor, FakeObserver
from tests.support.model_server import ModelServer, Reply
from tests.unit.planner.conftest import make_observation

CLICK = {
    "action": "tool",
    "tool": "click",
    "args": {"x": 100, "y": 100, "target": "the Save button"},
    "reason": "save",
}
DONE = {"action": "done", "message": "saved", "reason": "saved"}


async def test_a_grounder_in_the_settings_finds_the_point_the_run_clicks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))
    executor = FakeExecutor()
    async with (
        ModelServer([Reply(CLICK), Reply(DONE)]) as planner_server,
        ModelServer(
            [Reply("(644,364)"), Reply("(644,364)")]  # GTA1: the middle of its 1288x728 input
        ) as grounder_server,
    ):
        settings = Settings(
            base_url=planner_server.base_url,
            model="qwen2.5vl",
            vision="yes",
            grounding="grounder",
            grounder_base_url=grounder_server.base_url,
            grounder_model="Salesforce/GTA1-7B",
            policies={"click": Policy.ALLOW},
        )
        agent = await Agent.open(
            tmp_path,
            settings,
            observer=FakeObserver(make_observation(1280, 720)),
            executor=executor,
        )
        try:
            run = await agent.runner.create(
                TaskSpec(
                    goal="save",
                    base_url=planner_server.base_url,
                    model="qwen2.5vl",
                    allowed_tools=("click",),
                )
            )
            final = await agent.runner.run(run, await agent.prepare(run))
            steps = await agent.repo.list_steps(run.id)
        finally:
            await agent.close()

    assert final.status.value == "completed", final.message
    assert [(args.x, args.y) for _, args in executor.calls] == [(640, 360)]  # type: ignore[attr-defined]
    assert len(grounder_server.requests) == 2  # the whole screen, then the crop
    assert grounder_server.requests[0]["model"] == "Salesforce/GTA1-7B"
    system = grounder_server.requests[0]["messages"][0]["content"]
    assert "The image resolution is height 728 and width 1288" in system
    ground = next(step for step in steps if step.kind is StepKind.GROUND)
    assert ground.target == (640, 360)


def test_grounding_by_a_grounder_needs_its_model_named() -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(grounding="grounder")

    assert validation_messages(caught.value) == [
        'settings: grounding = "grounder" needs grounder_model (the grounding model\'s name)'
    ]


PLANNER_PRICE = {"gpt-4o*": (2.50, 10.00)}


def test_a_grounder_on_this_machine_without_a_price_is_free_the_planner_keeps_its_price() -> None:
    settings = Settings(
        base_url="https://api.openai.com/v1",
        model="gpt-4o",
        prices=PLANNER_PRICE,
        grounding="grounder",
        grounder_base_url="http://127.0.0.1:8000/v1",
        grounder_model="Salesforce/GTA1-7B",
    )

    budget = settings.budget()

    assert (
        budget.cost_of({"gpt-4o": (1000, 100), "Salesforce/GTA1-7B": (5000, 50)})
        == (1000 * 2.50 + 100 * 10.00) / 1_000_000
    )
    assert budget.price_of("Salesforce/GTA1-7B-other") is None  # its own name only
    assert settings.prices == PLANNER_PRICE  # nothing is written to the settings


@pytest.mark.parametrize(
    ("url", "prices", "cost"),
    [
        # a grounder afar without a price: the run's cost is not known
        ("https://grounder.example/v1", PLANNER_PRICE, None),
        # its own price, wherever it runs
        ("http://127.0.0.1:8000/v1", {**PLANNER_PRICE, "salesforce/gta1*": (0.2, 0.8)},
         (1000 * 2.50 + 100 * 10.00 + 5000 * 0.2 + 50 * 0.8) / 1_000_000),
    ],
)  # fmt: skip
def test_a_grounder_with_its_own_price_or_afar_without_one(
    url: str, prices: dict[str, tuple[float, float]], cost: float | None
) -> None:
    settings = Settings(
        base_url="https://api.openai.com/v1",
        model="gpt-4o",
        prices=prices,
        grounding="grounder",
        grounder_base_url=url,
        grounder_model="Salesforce/GTA1-7B",
    )

    assert settings.budget().cost_of(
        {"gpt-4o": (1000, 100), "Salesforce/GTA1-7B": (5000, 50)}
    ) == pytest.approx(cost)
