"""The backend protocol: each profile names a backend module, and planner/ branches on none."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from desktop_agent.core.errors import ConfigError
from desktop_agent.core.models import MonitorArea, ScreenLayout
from desktop_agent.planner import backends
from desktop_agent.planner.backends import backend_named, backend_names, chat_format, make_planner
from desktop_agent.planner.client import OpenAIPlanner
from desktop_agent.planner.profiles import PROFILES
from tests.unit.planner.conftest import make_observation, make_request, pixel_space

#: every profile and the backend that speaks to it (a new profile adds its row here)
PROFILE_BACKENDS = {
    "openai-reasoning": "chat_json",
    "openai": "chat_json",
    "anthropic-computer": "anthropic_computer",
    "openai-computer": "openai_computer",
    "ui-tars-1.5": "ui_tars",
    "ui-tars": "ui_tars",
    "gta1": "chat_json",
    "holo1.5": "chat_json",
    "holo": "chat_json",
    "mai-ui": "mai_ui",
    "gui-owl-1.5": "gui_owl",
    "ui-venus-1.5": "ui_venus",
    "qwen3-vl": "qwen3_vl",
    "qwen2.5-vl-ollama": "chat_json",
    "qwen2.5-vl": "chat_json",
    "llava": "chat_json",
    "gemma3": "chat_json",
    "generic": "chat_json",
}

PLANNER_DIR = Path(backends.__file__).parent.parent


def test_each_profile_names_its_backend() -> None:
    assert {profile.name: profile.backend for profile in PROFILES} == PROFILE_BACKENDS
    for name in set(PROFILE_BACKENDS.values()):
        backend = backend_named(name)
        assert backend.name == name
        assert backend.protocol


@pytest.mark.parametrize(
    "name", sorted({"chat_json", "ui_tars", "qwen3_vl", "gui_owl", "ui_venus", "mai_ui"})
)
def test_a_chat_backend_is_spoken_by_the_chat_completions_planner(name: str) -> None:
    profile = next(p.name for p in PROFILES if p.backend == name)
    planner = make_planner(
        base_url="http://127.0.0.1:9/v1", model="m", api_key=None, profile=profile
    )
    assert isinstance(planner, OpenAIPlanner)
    assert planner.format is chat_format(name)


def test_every_backend_module_holds_its_backend() -> None:
    names = backend_names()
    assert {"chat_json", "ui_tars"} <= set(names)
    for name in names:
        assert backend_named(name).name == name


def test_an_unknown_backend_is_a_one_line_config_error() -> None:
    with pytest.raises(
        ConfigError, match=r"^unknown backend 'nope' \(one of: anthropic_computer, chat_json, "
    ) as err:
        backend_named("nope")
    assert "\n" not in str(err.value)


#: attributes whose value names a format: comparing one of them is a branch per format
_FORMAT_NAMES = {"grammar", "backend", "point_format", "fmt"}


def _names_a_format(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in _FORMAT_NAMES
    return isinstance(node, ast.Name) and node.id in _FORMAT_NAMES


def test_no_module_of_the_planner_branches_on_a_format() -> None:
    """Adding a format is its module and a profile row: nothing in planner/ asks which it is."""
    branches = []
    for path in sorted(PLANNER_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and any(
                _names_a_format(side) for side in (node.left, *node.comparators)
            ):
                branches.append(f"{path.relative_to(PLANNER_DIR)}:{node.lineno}")
    assert branches == []


@pytest.mark.parametrize(
    "name", sorted({"chat_json", "ui_tars", "qwen3_vl", "gui_owl", "ui_venus", "mai_ui"})
)
@pytest.mark.parametrize("allowed", [("click", "focus_window"), ("click",)])
def test_each_chat_format_says_which_monitor_the_image_is(
    name: str, allowed: tuple[str, ...]
) -> None:
    monitors = (MonitorArea(1, 0, 0, 1920, 1080, primary=True), MonitorArea(2, 1920, 0, 1280, 1024))
    observation = replace(make_observation(), layout=ScreenLayout(monitors[1], monitors))
    request = make_request(observation=observation, allowed=allowed)
    messages = chat_format(name).messages(request, "data:image/jpeg;base64,", pixel_space())
    said = str(messages)
    assert "The image shows monitor 2, 1280x1024 at 1920,0" in said
    assert "monitor 1 (the primary), 1920x1080 at 0,0" in said
    # focus_window is named only to a model that has it
    assert ("focus_window one of their windows" in said) == ("focus_window" in allowed)
    alone = replace(observation, layout=ScreenLayout(monitors[0], monitors[:1]))
    one = chat_format(name).messages(replace(request, observation=alone), "u", pixel_space())
    assert "The image shows" not in str(one)
