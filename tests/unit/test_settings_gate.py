"""The gate's settings: the user's list of sensitive target words."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from desktop_agent.core.call_risk import DEFAULT_SENSITIVE_TARGETS
from desktop_agent.settings import Settings, load_settings, save_settings, validation_messages


def test_the_default_list_is_the_built_in_one_and_the_user_may_replace_it() -> None:
    assert tuple(Settings().sensitive_targets) == DEFAULT_SENSITIVE_TARGETS
    assert Settings(sensitive_targets=[" Publish ", "Publish", "wire"]).sensitive_targets == [
        "Publish",
        "wire",
    ]


def test_an_empty_word_is_refused_with_one_clear_line() -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(sensitive_targets=["pay", "  "])
    assert validation_messages(caught.value) == [
        "sensitive_targets: an empty word would match nothing; remove it"
    ]


def test_the_list_round_trips_through_the_settings_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    save_settings(Settings(sensitive_targets=["Pay", 'say "yes"', "überweisen"]), path)
    assert load_settings(path, env={}).sensitive_targets == ["Pay", 'say "yes"', "überweisen"]


def test_budgets_and_prices_round_trip_and_become_the_loops_budget(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    chosen = Settings(
        max_run_seconds=600, max_run_tokens=0, prices={"gpt-4o*": (2.5, 10.0), "my model": (1, 2)}
    )
    save_settings(chosen, path)
    loaded = load_settings(path, env={})
    assert loaded == chosen
    budget = loaded.budget()
    assert (budget.max_seconds, budget.max_tokens) == (600, None)  # 0: no limit
    assert budget.cost("GPT-4o", 1_000_000, 0) == 2.5
    with pytest.raises(ValidationError) as caught:
        Settings(prices={"x": (-1, 2)})
    assert validation_messages(caught.value) == [
        "prices: 'x': a price is a pattern and two amounts >= 0"
    ]
