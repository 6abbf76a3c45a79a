"""The main window's status bar shows the run's tokens, cost and time against its budget live."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from desktop_agent.core.budget import Budget
from desktop_agent.core.models import TokenUsage
from desktop_agent.ui.main_window import MainWindow
from tests.fakes import ScriptedPlanner, done, tool
from tests.gui.fake_agent import CrossEvent, drive, until

pytestmark = [pytest.mark.gui]


def test_the_status_bar_shows_tokens_cost_and_time_while_the_run_goes(
    window: MainWindow, qloop: Any, agent: Any
) -> None:
    # USD 1 per million prompt tokens, 2 per million completion tokens
    agent.runner.services.budget = Budget(max_seconds=600, prices={"qwen*": (1.0, 2.0)})
    release = CrossEvent()

    async def thinking(request: Any) -> Any:
        await release.wait()
        return replace(done("finished"), usage=TokenUsage(100_000, 5000))

    agent.planner_factory = lambda run: ScriptedPlanner(
        [replace(tool("wait", seconds=0), usage=TokenUsage(1000, 50)), thinking]
    )

    async def scenario() -> None:
        window.panel.goal_edit.setPlainText("think twice")
        window.panel.start_button.click()
        # turn 2 is thinking: turn 1's tokens and cost show already
        await until(
            lambda: window.bar.usage_label.text() == "1,000 + 50 tokens of 1,000,000 · $0.0011",
            what="turn 1's usage",
        )
        assert window.bar.elapsed_label.text().endswith(" of 30:00")  # max_run_seconds: 1800
        release.set()
        await until(lambda: window.run is not None and window.run.finished_at, what="the end")

    drive(qloop, scenario())
    assert window.bar.usage_label.text() == "101,000 + 5,050 tokens · $0.1111"
    assert " of " not in window.bar.elapsed_label.text()


def test_totals_that_include_estimates_are_marked(
    window: MainWindow, qloop: Any, agent: Any
) -> None:
    agent.planner_factory = lambda run: ScriptedPlanner([done("at once")])  # no usage

    async def scenario() -> None:
        window.panel.goal_edit.setPlainText("finish")
        window.panel.start_button.click()
        await until(lambda: window.run is not None and window.run.finished_at, what="the end")

    drive(qloop, scenario())
    text = window.bar.usage_label.text()
    assert text.startswith("≈") and text.endswith("tokens · no price"), text
    assert "estimated" in window.bar.usage_label.toolTip()


def test_the_totals_come_with_the_run_events_and_the_store_is_not_read_for_them(
    window: MainWindow, qloop: Any, agent: Any
) -> None:
    """RunTotals carries each turn's tokens: the window reads no stored run per turn (it
    did, at every observe step, through a round trip to the engine)."""
    agent.runner.services.budget = Budget(prices={"qwen*": (1.0, 2.0)})
    release = CrossEvent()

    async def thinking(request: Any) -> Any:
        await release.wait()
        return done("finished")

    agent.planner_factory = lambda run: ScriptedPlanner(
        [replace(tool("wait", seconds=0), usage=TokenUsage(1000, 50)), thinking]
    )
    reads: list[str] = []
    real_get_run = agent.repo.get_run

    async def counting_get_run(run_id: str) -> Any:
        reads.append(run_id)
        return await real_get_run(run_id)

    agent.repo.get_run = counting_get_run

    async def scenario() -> None:
        window.panel.goal_edit.setPlainText("think twice")
        window.panel.start_button.click()
        await until(lambda: window.bar.usage_label.text().startswith("1,000 + 50 tokens"))
        release.set()
        await until(lambda: window.run is not None and window.run.finished_at, what="the end")

    drive(qloop, scenario())
    assert reads == []
