"""One `task_spec(settings, request)` builds every run's TaskSpec: a goal's (the window, run,
serve, MCP, the API's queued run) and a saved routine's."""

from __future__ import annotations

import pytest

from desktop_agent.core.errors import RefusedToStart
from desktop_agent.core.models import RunKind
from desktop_agent.core.routine import Routine, RoutineStep
from desktop_agent.core.routine_player import PATIENCE_TURNS
from desktop_agent.host.requests import RunRequest, task_spec
from desktop_agent.settings import Settings

SETTINGS = Settings(base_url="http://127.0.0.1:1/v1", model="m", max_steps=30, max_failures=4)


def test_what_a_goal_leaves_out_is_the_settings() -> None:
    spec = task_spec(SETTINGS, RunRequest("  open the editor  "))
    assert (spec.goal, spec.max_steps, spec.max_failures) == ("open the editor", 30, 4)
    assert (spec.model, spec.base_url, spec.allowed_tools) == ("m", "http://127.0.0.1:1/v1", ())
    assert spec.kind is RunKind.AGENT


def test_what_a_goal_names_wins_over_the_settings() -> None:
    asked = RunRequest(
        "g", base_url="http://h/v1", model="n", max_steps=5, max_failures=1, allowed_tools=("wait",)
    )
    spec = task_spec(SETTINGS, asked)
    assert (spec.model, spec.base_url, spec.max_steps, spec.max_failures) == (
        "n",
        "http://h/v1",
        5,
        1,
    )
    assert spec.allowed_tools == ("wait",)


@pytest.mark.parametrize(
    ("request_", "why"),
    [(RunRequest("   "), "the goal is empty"), (RunRequest("g", allowed_tools=()), "no tool")],
)
def test_an_empty_goal_or_no_tool_is_refused_in_one_line(request_: RunRequest, why: str) -> None:
    with pytest.raises(RefusedToStart, match=why):
        task_spec(SETTINGS, request_)


def test_a_routine_gets_room_for_its_steps_and_names_itself() -> None:
    steps = tuple(RoutineStep("wait", {"seconds": 1}) for _ in range(3))
    spec = task_spec(SETTINGS, Routine("daily", "tidy up", steps))
    assert spec.max_steps == 30 + 2 * 3 + PATIENCE_TURNS
    assert (spec.kind, spec.routine, spec.goal) == (RunKind.ROUTINE, "daily", "tidy up")
    assert (spec.model, spec.base_url, spec.max_failures) == ("m", "http://127.0.0.1:1/v1", 4)
    many = tuple(RoutineStep("wait", {"seconds": 1}) for _ in range(400))
    assert task_spec(SETTINGS, Routine("long", "g", many)).max_steps == 500
