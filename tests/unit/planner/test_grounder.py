"""ModelGrounder against the loopback server, inside the real loop: zoom, a grounding model,
the fallbacks that say so, and a stop during the grounding request (issue #19)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.budget import Budget
from desktop_agent.core.builtin_tools import BUILTIN_TOOLS, builtin_registry
from desktop_agent.core.errors import ConfigError
from desktop_agent.core.models import (
    Policy,
    RunStatus,
    RunView,
    StepKind,
    StepView,
    StopReason,
    TaskSpec,
)
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.runner import RunnerServices, TaskRunnerService
from tests.fakes import FakeExecutor, FakeObserver, ManualClock, MemoryRepository, ScriptedGate
from tests.support.model_server import Hang, ModelServer, Reply
from tests.unit.planner.conftest import decoded_image, make_observation, make_planner, user_text

CLICK = {
    "action": "tool",
    "tool": "click",
    "args": {"x": 100, "y": 100, "target": "the Save button"},
    "reason": "save",
}
DONE = {"action": "done", "message": "saved", "reason": "saved"}


class _Run:
    def __init__(self, budget: Budget | None = None) -> None:
        self.repo = MemoryRepository()
        self.executor = FakeExecutor()
        self.runner = TaskRunnerService(
            RunnerServices(
                repo=self.repo,
                observer=FakeObserver(make_observation(width=1280, height=720)),
                executor=self.executor,
                gate=ScriptedGate(),
                registry=builtin_registry(),
                breakers=BreakerBoard(clock=ManualClock()),
                permissions=Permissions({spec.name: Policy.ALLOW for spec in BUILTIN_TOOLS}),
                budget=budget or Budget(),
            )
        )

    async def create(self, model: str = "") -> RunView:
        return await self.runner.create(
            TaskSpec(goal="save", allowed_tools=("click",), model=model)
        )

    def clicked(self) -> list[tuple[int, int]]:
        return [(args.x, args.y) for _, args in self.executor.calls]  # type: ignore[attr-defined]

    async def ground_step(self, run_id: str) -> StepView:
        steps = await self.repo.list_steps(run_id)
        return next(step for step in steps if step.kind is StepKind.GROUND)


async def test_zoom_asks_the_same_model_on_a_crop_and_clicks_where_it_answers() -> None:
    run_ = _Run()
    run = await run_.create()
    script = [Reply(CLICK), Reply('{"x": 640, "y": 360}', usage=(700, 9)), Reply(DONE)]
    async with (
        ModelServer(script) as server,
        make_planner(server.base_url, grounding="zoom") as planner,
    ):
        final = await run_.runner.run(run, planner)

    assert final.status is RunStatus.COMPLETED
    # the 320x180 crop around (100, 100) lies at (0, 10): its centre pixel is (160, 100)
    assert run_.clicked() == [(160, 100)]
    grounding = server.requests[1]
    assert "response_format" not in grounding
    assert decoded_image(grounding).size == (1280, 720)  # magnified four times
    assert "Where is the Save button in this image?" in user_text(grounding)
    assert "as 1280x720 pixels" in user_text(grounding)
    ground = await run_.ground_step(run.id)
    assert ground.args == {
        "target": "the Save button",
        "x": 100,
        "y": 100,
        "crop": [0, 10, 320, 180],
    }
    assert ground.target == (160, 100)
    assert ground.summary == "refined 100,100 → 160,100 on a 320x180 crop at 0,10"
    assert (ground.prompt_tokens, ground.completion_tokens) == (700, 9)
    assert ground.latency_ms is not None
    assert ground.screenshot is not None
    assert run_.repo.artifacts[ground.screenshot].startswith(b"\xff\xd8")
    assert final.prompt_tokens >= 700


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ('{"x": 1300, "y": 20}', "the point 1300,20 is outside the crop (1280x720 pixels"),
        ("I do not see a Save button.", "no point in the grounding answer"),
    ],
)
async def test_an_answer_outside_the_crop_or_without_a_point_keeps_the_first_point_and_says_so(
    answer: str, why: str
) -> None:
    run_ = _Run()
    run = await run_.create()
    script = [Reply(CLICK), Reply(answer), Reply(DONE)]
    async with (
        ModelServer(script) as server,
        make_planner(server.base_url, grounding="zoom") as planner,
    ):
        final = await run_.runner.run(run, planner)

    assert final.status is RunStatus.COMPLETED
    assert run_.clicked() == [(100, 100)]
    ground = await run_.ground_step(run.id)
    assert ground.summary.startswith(
        "kept the first point 100,100: the answer on the 320x180 crop at 0,10 was not usable: "
    )
    assert why in ground.summary
    assert ground.target == (100, 100)
    assert ground.raw_output == answer
    # estimated: the server reported no usage for it
    assert ground.prompt_tokens is not None and ground.prompt_tokens > 0


async def test_a_grounding_model_finds_the_target_on_the_whole_screen_then_zooms() -> None:
    run_ = _Run()
    run = await run_.create()
    located = [
        # MAI-UI, 0–999 (its SCALE_FACTOR): the screen's centre is (640, 360)
        Reply('<answer>{"coordinate": [499.5, 499.5]}</answer>'),
        Reply('<grounding_think>left</grounding_think><answer>{"coordinate": [250, 250]}</answer>'),
    ]
    async with (
        ModelServer([Reply(CLICK), Reply(DONE)]) as server,
        ModelServer(located) as grounder_server,
    ):
        grounder = make_planner(
            grounder_server.base_url, model="Tongyi-MAI/MAI-UI-8B", profile="auto"
        )
        async with make_planner(server.base_url, grounding="grounder", grounder=grounder) as p:
            final = await run_.runner.run(run, p)

    assert final.status is RunStatus.COMPLETED
    # the crop around (640, 360) lies at (480, 270); a quarter into it is (560, 315)
    assert run_.clicked() == [(560, 315)]
    assert len(server.requests) == 2  # the planner: decide, done
    assert len(grounder_server.requests) == 2  # the grounder: whole screen, crop
    system = grounder_server.requests[0]["messages"][0]["content"]
    assert '<answer>{"coordinate": [x, y]}</answer>' in system
    ground = await run_.ground_step(run.id)
    assert ground.args["first"] == [640, 360]
    assert ground.summary == "refined 640,360 → 560,315 on a 320x180 crop at 480,270"


async def test_the_grounding_models_tokens_are_priced_at_its_price_the_planners_at_its() -> None:
    prices = {"gpt-4o*": (2.50, 10.00), "tongyi-mai/mai-ui*": (0.20, 0.80)}
    run_ = _Run(Budget(prices=prices))
    run = await run_.create(model="gpt-4o")
    located = [
        Reply('<answer>{"coordinate": [500, 500]}</answer>', usage=(3000, 40)),
        Reply('<answer>{"coordinate": [250, 250]}</answer>', usage=(1000, 20)),
    ]
    async with (
        ModelServer([Reply(CLICK, usage=(2000, 100)), Reply(DONE, usage=(2500, 50))]) as server,
        ModelServer(located) as grounder_server,
    ):
        grounder = make_planner(
            grounder_server.base_url, model="Tongyi-MAI/MAI-UI-8B", profile="auto"
        )
        async with make_planner(
            server.base_url, model="gpt-4o", grounding="grounder", grounder=grounder
        ) as planner:
            final = await run_.runner.run(run, planner)

    assert final.status is RunStatus.COMPLETED
    assert (final.prompt_tokens, final.completion_tokens) == (8500, 210)
    planner_cost = (4500 * 2.50 + 150 * 10.00) / 1_000_000
    grounder_cost = (4000 * 0.20 + 60 * 0.80) / 1_000_000
    assert final.cost == pytest.approx(planner_cost + grounder_cost)
    stored = await run_.repo.get_run(run.id)
    assert stored is not None
    assert stored.cost == final.cost


async def test_a_grounder_that_does_not_answer_keeps_the_planners_point() -> None:
    run_ = _Run()
    run = await run_.create()
    async with (
        ModelServer([Reply(CLICK), Reply(DONE)]) as server,
        ModelServer(then=Reply("no idea")) as grounder_server,
    ):
        grounder = make_planner(grounder_server.base_url, model="Hcompany/Holo2-8B", profile="auto")
        async with make_planner(server.base_url, grounding="grounder", grounder=grounder) as p:
            await run_.runner.run(run, p)

    assert run_.clicked() == [(100, 100)]
    ground = await run_.ground_step(run.id)
    assert ground.summary.startswith(
        "kept the planner's point 100,100: the answer of the grounder Hcompany/Holo2-8B was "
        "not usable: no point"
    )


async def test_a_stop_during_the_grounding_request_ends_the_run_with_no_click() -> None:
    run_ = _Run()
    run = await run_.create()
    async with (
        ModelServer([Reply(CLICK), Hang()]) as server,
        make_planner(server.base_url, grounding="zoom") as planner,
    ):
        task = asyncio.create_task(run_.runner.run(run, planner))
        await server.wait_requests(2)
        assert run_.runner.stop(run.id)
        final = await asyncio.wait_for(task, 5)

    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert run_.executor.calls == []
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("model", "mode"),
    [
        ("qwen2.5vl:7b", "zoom"),
        ("gpt-4o", "zoom"),
        ("llava:13b", "zoom"),
        ("ui-tars-1.5-7b", None),
        ("Salesforce/GTA1-7B", None),
    ],
)
def test_auto_grounding_is_the_profiles_default(model: str, mode: str | None) -> None:
    planner = make_planner("http://127.0.0.1:9/v1", model=model, profile="auto", grounding="auto")

    assert (planner.grounder.mode if planner.grounder else None) == mode


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"grounding": "grounder"}, "grounding = grounder needs a grounding model"),
        ({"grounding": "sideways"}, "unknown grounding 'sideways'"),
    ],
)
def test_a_grounding_that_cannot_work_is_one_clear_line(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        make_planner("http://127.0.0.1:9/v1", **options)


def _jpeg(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format="JPEG", quality=95)
    return out.getvalue()


async def test_the_zoom_looks_at_the_region_captured_at_the_screens_resolution() -> None:
    from desktop_agent.core.ports import GroundRequest

    asked: list[tuple[int, int, int, int]] = []

    async def region(box: tuple[int, int, int, int]) -> bytes:
        asked.append(box)
        return _jpeg((480, 270), (230, 20, 20))  # 1.5x the box: the screen's own pixels

    observation = make_observation(width=1280, height=720)
    async with (
        ModelServer([Reply('{"x": 640, "y": 360}')]) as server,
        make_planner(server.base_url, grounding="zoom") as planner,
    ):
        assert planner.grounder is not None
        grounding = await planner.grounder.ground(
            GroundRequest("click", "the red thing", (640, 360), observation, region)
        )

    assert asked == [(480, 270, 320, 180)]
    sent = decoded_image(server.requests[0]).convert("RGB")
    assert sent.size == (1280, 720)
    pixel = sent.getpixel((640, 360))
    assert isinstance(pixel, tuple)
    red, green, _ = pixel
    assert red > 200 and green < 60  # the region's pixels, not the screenshot's blue
    assert grounding.point == (640, 360)


async def test_a_region_capture_that_fails_zooms_on_the_screenshot_instead() -> None:
    from desktop_agent.core.ports import GroundRequest

    async def broken(box: tuple[int, int, int, int]) -> bytes:
        raise RuntimeError("the display went away")

    observation = make_observation(width=1280, height=720)
    async with (
        ModelServer([Reply('{"x": 640, "y": 360}')]) as server,
        make_planner(server.base_url, grounding="zoom") as planner,
    ):
        assert planner.grounder is not None
        grounding = await planner.grounder.ground(
            GroundRequest("click", "the thing", (640, 360), observation, broken)
        )

    sent = decoded_image(server.requests[0]).convert("RGB")
    pixel = sent.getpixel((640, 360))
    assert isinstance(pixel, tuple)
    red, green, blue = pixel
    assert blue > 120 and red < 80  # the observation's own blue
    assert grounding.refined
