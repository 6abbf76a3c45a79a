"""Calibration against scripted models on loopback: the coordinate space is found, errors in px."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from desktop_agent.core.calibration import Target, targets_for, to_image_targets
from desktop_agent.core.models import ScreenMapping
from desktop_agent.planner.calibration import calibrate, synthetic_observation
from desktop_agent.planner.profiles import profile_named
from tests.support.model_server import ModelServer, Reply, ScriptItem
from tests.unit.planner.conftest import make_planner

WIDTH, HEIGHT = 1280, 720
_LABEL = re.compile(r"red ring labelled ([A-Z])")


def clicking_model(
    targets: tuple[Target, ...], where: Callable[[Target], tuple[int, int]]
) -> Callable[[dict[str, Any]], ScriptItem]:
    """A scripted model that clicks the target its request names, at `where(target)`."""
    by_label = {target.label: target for target in targets}

    def respond(body: dict[str, Any]) -> ScriptItem:
        system, user = body["messages"][0]["content"], body["messages"][1]["content"][0]
        match = _LABEL.search(f"{system}\n{user['text']}")
        assert match is not None, "the request does not name a target"
        x, y = where(by_label[match.group(1)])
        if '"computer_use"' in system:  # a Qwen3-VL profile: its own function call
            call = {
                "name": "computer_use",
                "arguments": {"action": "left_click", "coordinate": [x, y]},
            }
            return Reply(f"<tool_call>\n{json.dumps(call)}\n</tool_call>")
        return Reply({"action": "tool", "tool": "click", "args": {"x": x, "y": y}})

    return respond


async def run_calibration(
    where: Callable[[Target], tuple[int, int]], model: str = "some-vlm", profile: str = "auto"
) -> Any:
    observation, targets = synthetic_observation(WIDTH, HEIGHT)
    async with (
        ModelServer(respond=clicking_model(targets, where)) as server,
        make_planner(server.base_url, model=model, profile=profile) as planner,
    ):
        report = await calibrate(planner, observation, targets, model)
    assert len(server.requests) == len(targets)  # one chat request per target
    return report


async def test_a_perfect_pixel_model_has_0_px_error_and_keeps_its_profile() -> None:
    report = await run_calibration(lambda t: (t.x, t.y))
    assert report.best.space == "pixels"
    assert report.best.errors_px == (0.0,) * 5
    assert report.suggested_coordinates == "auto"
    assert report.lines()[-1] == "best fit: pixels, as the profile says; nothing to change"


async def test_a_model_answering_in_0_to_1000_is_detected_as_such() -> None:
    report = await run_calibration(
        lambda t: (round(t.x / WIDTH * 1000), round(t.y / HEIGHT * 1000))
    )
    assert report.best.space == "normalized"
    assert report.best.max_px <= 1.0  # 0–1000 is coarser than 1280 px: rounding only
    pixels = next(fit for fit in report.fits if fit.space == "pixels")
    assert pixels.mean_px > 50
    assert report.suggested_coordinates == "normalized"
    assert 'save model_coordinates = "normalized"' in report.lines()[-1]


async def test_a_qwen25_model_in_its_resized_pixels_is_detected_under_a_pixel_profile() -> None:
    rule = profile_named("qwen2.5-vl").resize
    assert rule is not None
    rw, rh = rule.size(WIDTH, HEIGHT)  # 1288x728
    report = await run_calibration(
        lambda t: (round(t.x * rw / WIDTH), round(t.y * rh / HEIGHT)), profile="generic"
    )
    assert report.best.space == "resized"
    assert report.best.max_px <= 1.0
    assert report.suggested_coordinates == "resized"


async def test_a_normalized_profile_that_fits_needs_no_change() -> None:
    report = await run_calibration(
        lambda t: (round(t.x / WIDTH * 1000), round(t.y / HEIGHT * 1000)), model="qwen3-vl:8b"
    )
    assert report.profile.name == "qwen3-vl"
    assert report.suggested_coordinates == "auto"


async def test_an_unusable_answer_is_reported_for_its_target_and_the_rest_still_fit() -> None:
    observation, targets = synthetic_observation(WIDTH, HEIGHT)
    good = clicking_model(targets, lambda t: (t.x, t.y))
    calls = []

    def respond(body: dict[str, Any]) -> ScriptItem:
        calls.append(body)
        return Reply("I think it is somewhere on the left") if len(calls) == 1 else good(body)

    async with (
        ModelServer(respond=respond) as server,
        make_planner(server.base_url, profile="auto") as planner,
    ):
        report = await calibrate(planner, observation, targets, "m")
    assert report.answered == 4
    assert report.answers[0].point is None
    assert "not JSON" in report.answers[0].error
    assert report.best.errors_px == (0.0,) * 4
    assert "no answer" in report.lines()[1]


def test_targets_placed_on_the_screen_map_into_a_downscaled_screenshot() -> None:
    screen = targets_for(1920, 1080)
    shot = to_image_targets(screen, ScreenMapping(scale_x=1.5, scale_y=1.5))
    assert [(t.x, t.y) for t in shot] == [(round(t.x / 1.5), round(t.y / 1.5)) for t in screen]


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080), (800, 600)])
def test_targets_are_inside_the_screen_and_apart(size: tuple[int, int]) -> None:
    width, height = size
    targets = targets_for(width, height)
    assert all(0 < t.x < width and 0 < t.y < height for t in targets)
    assert len({t.label for t in targets}) == len(targets)
