"""Model profiles: picked by model id, request parameters per family, coordinates converted."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from desktop_agent.core.errors import ConfigError, PlannerError
from desktop_agent.core.models import Decision, Observation
from desktop_agent.planner.client import ResponseFormatMemory
from desktop_agent.planner.profiles import (
    PROFILES,
    ResizeRule,
    profile_named,
    resolve_profile,
    sent_size,
    to_screenshot,
)
from tests.support.model_server import (
    OPENAI_REASONING_REJECTS,
    ModelServer,
    Reply,
)
from tests.unit.planner.conftest import decoded_image, make_observation, make_planner, make_request

CLICK_CENTRE_1000 = {"action": "tool", "tool": "click", "args": {"x": 500, "y": 500}}


async def decide_with(
    model: str, reply: Reply, observation: Observation | None = None, **server: Any
) -> tuple[Decision, ModelServer]:
    """One decision of `model`'s auto profile against a loopback server answering `reply`."""
    async with (
        ModelServer([reply], **server) as model_server,
        make_planner(model_server.base_url, model=model, profile="auto") as planner,
    ):
        decision = await planner.decide(make_request(observation=observation))
    return decision, model_server


@pytest.mark.parametrize(
    ("model", "profile"),
    [
        ("gpt-5", "openai-reasoning"),
        ("gpt-5-mini", "openai-reasoning"),
        ("o3", "openai-reasoning"),
        ("o4-mini", "openai-reasoning"),
        ("o1-preview", "openai-reasoning"),
        ("openai/gpt-5-nano", "openai-reasoning"),
        ("gpt-4o-mini", "openai"),
        ("gpt-4.1", "openai"),
        ("qwen2.5vl", "qwen2.5-vl-ollama"),
        ("qwen2.5vl:7b", "qwen2.5-vl-ollama"),
        ("Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl"),
        ("qwen/qwen2.5-vl-72b-instruct", "qwen2.5-vl"),
        ("qwen3-vl:8b", "qwen3-vl"),
        ("Qwen/Qwen3-VL-30B-A3B-Instruct", "qwen3-vl"),
        ("ByteDance-Seed/UI-TARS-1.5-7B", "ui-tars-1.5"),
        ("bytedance-research/UI-TARS-72B-DPO", "ui-tars"),
        ("llava:13b", "llava"),
        ("gemma3:12b", "gemma3"),
        ("google/gemma-3-27b-it", "gemma3"),
        ("mistral-small3.1", "generic"),
    ],
)
def test_profile_is_picked_by_model_id(model: str, profile: str) -> None:
    assert resolve_profile(model).name == profile


def test_a_named_profile_overrides_the_model_id_and_an_unknown_name_is_a_clear_error() -> None:
    assert resolve_profile("qwen2.5vl", "qwen3-vl").coordinates == "normalized"
    with pytest.raises(ConfigError, match=r"unknown model profile 'qwen9' \(one of: auto, "):
        resolve_profile("qwen2.5vl", "qwen9")


def test_a_calibrated_coordinate_space_overrides_only_the_coordinates() -> None:
    profile = resolve_profile("gpt-5-mini", coordinates="normalized")
    assert profile.coordinates == "normalized"
    assert profile.token_param == "max_completion_tokens"
    assert not profile.temperature


def test_every_profile_name_is_unique_and_the_last_one_matches_anything() -> None:
    names = [profile.name for profile in PROFILES]
    assert len(names) == len(set(names))
    assert PROFILES[-1].matches("some-model-nobody-knows")


def test_smart_resize_matches_qwen_and_ollama_rules() -> None:
    # Qwen2-VL's smart_resize (HF processor defaults): 1920x1080 → 1932x1092
    assert ResizeRule(28, 56 * 56, 16384 * 28 * 28).size(1920, 1080) == (1932, 1092)
    # Ollama's qwen2.5vl caps at 2<<20 pixels: the same screen → 1904x1064
    assert profile_named("qwen2.5-vl-ollama").model_size(1920, 1080) == (1904, 1064)
    # UI-TARS-1.5's min_pixels (100·28²) grows a small image
    assert profile_named("ui-tars-1.5").model_size(320, 200) == (364, 224)
    assert profile_named("ui-tars-1.5").model_size(1280, 720) == (1288, 728)


def test_points_convert_to_screenshot_pixels_per_space() -> None:
    assert to_screenshot(profile_named("qwen3-vl"), 500, 500, 1280, 720) == (640, 360)
    assert to_screenshot(profile_named("qwen3-vl"), 1000, 1000, 1280, 720) == (1279, 719)
    assert to_screenshot(profile_named("ui-tars-1.5"), 644, 364, 1280, 720) == (640, 360)
    assert to_screenshot(profile_named("generic"), 17, 33, 1280, 720) == (17, 33)
    with pytest.raises(PlannerError, match=r"outside the image \(x and y from 0 to 1000"):
        to_screenshot(profile_named("qwen3-vl"), 1500, 10, 1280, 720)


# ── requests on the wire (loopback server, real openai client) ──────────────


async def test_openai_reasoning_models_get_max_completion_tokens_and_no_temperature() -> None:
    decision, server = await decide_with("gpt-5-mini", Reply({"action": "done", "message": "ok"}))
    assert decision.action == "done"
    body = server.requests[0]
    assert "temperature" not in body
    assert "max_tokens" not in body
    assert body["max_completion_tokens"] == 4096
    assert body["reasoning_effort"] == "low"
    assert body["response_format"]["type"] == "json_schema"


async def test_other_models_keep_temperature_0_and_max_tokens() -> None:
    _, server = await decide_with("gpt-4o-mini", Reply({"action": "done"}))
    body = server.requests[0]
    assert body["temperature"] == 0
    assert body["max_tokens"] == 1024
    assert "max_completion_tokens" not in body
    assert "reasoning_effort" not in body


async def test_a_400_naming_temperature_or_max_tokens_is_fixed_not_taken_for_a_format_refusal(
    formats: ResponseFormatMemory,
) -> None:
    """A reasoning model the table does not know (a new name) is sent temperature/max_tokens.

    OpenAI answers 400 naming the parameter; before, that 400 stepped the response format
    down to plain text and still failed, every turn.
    """
    done = Reply({"action": "done", "message": "ok"})
    async with ModelServer(then=done, reject_params=OPENAI_REASONING_REJECTS) as server:
        planner = make_planner(server.base_url, model="o9-preview", formats=formats)
        async with planner:
            first = await planner.decide(make_request())
            second = await planner.decide(make_request())
    assert first.action == "done" and second.action == "done"
    # one refusal per parameter, then the fixed request; the next turn is right at once
    assert len(server.requests) == 4
    fixed = server.requests[2]
    assert "temperature" not in fixed and "max_tokens" not in fixed
    assert fixed["max_completion_tokens"] == 1024
    assert fixed["response_format"]["type"] == "json_schema"  # not stepped down
    assert server.requests[3] == {**fixed, "messages": server.requests[3]["messages"]}


async def test_a_400_naming_a_parameter_the_request_lacks_still_steps_the_format_down(
    formats: ResponseFormatMemory,
) -> None:
    async with (
        ModelServer(then=Reply({"action": "done"}), reject_formats={"json_schema"}) as server,
        make_planner(server.base_url, formats=formats) as planner,
    ):
        await planner.decide(make_request())
    assert [r.get("response_format", {}).get("type") for r in server.requests] == [
        "json_schema",
        "json_object",
    ]


async def test_qwen3_vl_answers_in_0_to_1000_and_the_decision_is_in_screenshot_pixels() -> None:
    observation = make_observation(1280, 720)
    call = {"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 500]}}
    answer = (
        f"Thought: the middle.\nAction: click it.\n<tool_call>\n{json.dumps(call)}\n</tool_call>"
    )
    decision, server = await decide_with("qwen3-vl:8b", Reply(answer), observation)
    assert decision.args == {"x": 640, "y": 360}
    system = server.requests[0]["messages"][0]["content"]
    assert "The screen's resolution is 1000x1000" in system


async def test_qwen25_vl_pixels_of_its_resized_image_are_mapped_back() -> None:
    observation = make_observation(1920, 1080)
    # Ollama's qwen2.5vl sees 1904x1064; the model clicks the centre of what it sees
    click = {"action": "tool", "tool": "click", "args": {"x": 952, "y": 532}}
    decision, server = await decide_with("qwen2.5vl:7b", Reply(click), observation)
    assert decision.args == {"x": 960, "y": 540}
    assert "1904x1064 pixels" in server.requests[0]["messages"][0]["content"]


async def test_ui_tars_action_text_is_asked_for_and_parsed_into_screenshot_pixels() -> None:
    observation = make_observation(1280, 720)
    # UI-TARS-1.5 answers in its README's format, in pixels of its 1288x728 smart_resize input
    answer = (
        "Thought: The Save button is in the middle of the dialog; I click it.\n"
        "Action: click(start_box='<|box_start|>(644,364)<|box_end|>')"
    )
    decision, server = await decide_with(
        "ByteDance-Seed/UI-TARS-1.5-7B", Reply(answer), observation
    )
    assert (decision.tool, decision.args) == ("click", {"x": 640, "y": 360})
    assert decision.reason.startswith("The Save button")
    body = server.requests[0]
    assert "response_format" not in body  # action text, not JSON
    system = body["messages"][0]["content"]
    assert "## Action Space" in system and "click(start_box=" in system
    assert "1288x728 pixels" in system


async def test_an_image_budget_scales_the_screenshot_and_the_answer_back() -> None:
    observation = make_observation(1280, 720)
    click = {"action": "tool", "tool": "click", "args": {"x": 448, "y": 252}}
    decision, server = await decide_with("llava:13b", Reply(click), observation)
    assert decision.args == {"x": 640, "y": 360}
    assert sent_size(profile_named("llava"), 1280, 720) == (896, 504)
    assert decoded_image(server.requests[0]).size == (896, 504)


def test_a_drags_whole_path_is_mapped_to_screenshot_pixels() -> None:
    from desktop_agent.planner.profiles import decision_to_screenshot

    drag = Decision(
        action="tool",
        tool="drag",
        args={"x": 0, "y": 0, "to_x": 1000, "to_y": 1000, "via": [[500, 500], [250, 750]]},
    )
    moved = decision_to_screenshot(drag, profile_named("qwen3-vl"), 1280, 720)
    assert moved.args["via"] == [[640, 360], [320, 540]]
    assert (moved.args["to_x"], moved.args["to_y"]) == (1279, 719)
    outside = replace(drag, args={**drag.args, "via": [[1500, 10]]})
    with pytest.raises(PlannerError, match="^the drag's path: the point 1500,10 is outside"):
        decision_to_screenshot(outside, profile_named("qwen3-vl"), 1280, 720)
