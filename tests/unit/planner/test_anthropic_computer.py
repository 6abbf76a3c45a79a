"""Anthropic's computer use (profile anthropic-computer): the real anthropic client against a
fake Messages server on loopback; the tool versions, the size rule, each action, the
tool_results, a zoom, and each bad answer (issue 29 item 4)."""

from __future__ import annotations

import base64
import io
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from anthropic.types.beta import BetaMessage
from PIL import Image

from desktop_agent.core.errors import PlannerError, PlannerTransportError
from desktop_agent.core.models import (
    MonitorArea,
    Observation,
    ScreenLayout,
    StepKind,
    StepStatus,
    StepView,
)
from desktop_agent.planner.anthropic_actions import parse_action
from desktop_agent.planner.backends import backend_named, make_planner
from desktop_agent.planner.backends.anthropic_computer import AnthropicPlanner
from desktop_agent.planner.profiles import resolve_profile, sent_size
from tests.support.messages_server import ApiError, Message, MessagesServer, text, tool_use
from tests.unit.planner.conftest import RecordingSleep, make_observation, make_request, tools

#: two monitors: the primary, and a smaller one left of it
MONITORS = (MonitorArea(1, 0, 0, 1920, 1080, primary=True), MonitorArea(2, -1280, 0, 1280, 1024))


def on_monitor(number: int) -> Observation:
    """The test screenshot as the image of monitor `number` of MONITORS."""
    layout = ScreenLayout(shown=MONITORS[number - 1], monitors=MONITORS)
    return replace(make_observation(), layout=layout)


ALL = (
    "click", "type_text", "hotkey", "wait", "scroll", "drag", "move_mouse", "hold_key",
    "mouse_down", "mouse_up", "cursor_position",
)  # fmt: skip
MODEL = "claude-sonnet-4-5"


def planner_for(server: MessagesServer, model: str = MODEL, **options: Any) -> Any:
    options.setdefault("sleep", RecordingSleep())
    return make_planner(
        base_url=server.url, model=model, api_key="sk-ant-test", profile="anthropic-computer",
        **options,
    )  # fmt: skip


def request(turn: int = 1, steps: tuple[StepView, ...] = (), **changes: Any) -> Any:
    return make_request(turn=turn, steps=steps, allowed=ALL, **changes)


def row(turn: int, seq: int, tool: str, status: StepStatus, **fields: Any) -> StepView:
    now = datetime.now(UTC)
    return StepView(
        run_id="run1", seq=seq, index=turn, kind=StepKind.ACTION, tool=tool, status=status,
        started_at=now, finished_at=now, **fields,
    )  # fmt: skip


def test_claude_on_anthropics_api_gets_the_anthropic_computer_profile_and_elsewhere_not() -> None:
    assert resolve_profile(MODEL, base_url="https://api.anthropic.com").name == (
        "anthropic-computer"
    )
    assert resolve_profile("claude-opus-4-6", base_url="https://api.anthropic.com/").backend == (
        "anthropic_computer"
    )
    # the same name behind an OpenAI-compatible proxy speaks chat completions
    assert resolve_profile(MODEL, base_url="https://openrouter.ai/api/v1").backend == "chat_json"
    assert resolve_profile(MODEL).backend == "chat_json"
    assert resolve_profile(MODEL, "anthropic-computer").backend == "anthropic_computer"


def test_doctor_says_which_tool_version_each_model_gets() -> None:
    backend = backend_named("anthropic_computer")

    assert "computer_20250124 (beta computer-use-2025-01-24)" in backend.protocol_for(MODEL)
    assert "computer_20251124 (beta computer-use-2025-11-24)" in backend.protocol_for(
        "claude-opus-4-6"
    )


async def test_the_first_request_holds_the_task_the_screen_the_tool_and_cache_marks() -> None:
    async with MessagesServer([Message([tool_use("left_click", coordinate=[250, 160])])]) as server:
        planner = planner_for(server, model="claude-opus-4-6")
        assert isinstance(planner, AnthropicPlanner)
        decision = await planner.decide(request())
        await planner.aclose()
    body, headers = server.requests[0], server.headers[0]
    # the SDK sends the key as a bearer token (anthropic/_client.py:758-762, 2.17)
    assert headers["authorization"] == "Bearer sk-ant-test"
    assert headers["anthropic-beta"] == "computer-use-2025-11-24"
    assert body["tools"] == [
        {
            "type": "computer_20251124", "name": "computer", "display_width_px": 320,
            "display_height_px": 200, "cache_control": {"type": "ephemeral"},
            "enable_zoom": True,
        }
    ]  # fmt: skip
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "never instructions" in body["system"][0]["text"]
    first = body["messages"][0]
    assert first["role"] == "user"
    assert first["content"][0] == {"type": "text", "text": "The task: save the file"}
    assert first["content"][1]["type"] == "image"
    assert (decision.tool, decision.args) == ("click", {"x": 250, "y": 160})
    BetaMessage.model_validate(server.answers[0])


async def test_an_older_model_gets_computer_20250124_without_zoom() -> None:
    async with MessagesServer([Message([text("Nothing to do.")])]) as server:
        planner = planner_for(server)
        decision = await planner.decide(request())
        await planner.aclose()
    assert server.headers[0]["anthropic-beta"] == "computer-use-2025-01-24"
    assert server.requests[0]["tools"][0]["type"] == "computer_20250124"
    assert "enable_zoom" not in server.requests[0]["tools"][0]
    assert (decision.action, decision.message) == ("done", "Nothing to do.")


async def test_points_on_the_scaled_image_are_mapped_back_to_the_screenshot() -> None:
    # 2560x1440 is 3.7 MP: Anthropic's rule (≤ 1568 px a side, ≈ 1.15 MP) sends 1429x804, as
    # its documented 1512x982 goes as 1330x864
    observation = make_observation(2560, 1440)
    shown = sent_size(resolve_profile(MODEL, "anthropic-computer"), 2560, 1440)
    assert shown == (1429, 804)
    assert sent_size(resolve_profile(MODEL, "anthropic-computer"), 1512, 982) == (1330, 864)
    async with MessagesServer([Message([tool_use("left_click", coordinate=[714, 401])])]) as server:
        planner = planner_for(server)
        decision = await planner.decide(request(observation=observation))
        await planner.aclose()
    tool = server.requests[0]["tools"][0]
    assert (tool["display_width_px"], tool["display_height_px"]) == shown
    sent = server.requests[0]["messages"][0]["content"][1]["source"]
    with Image.open(io.BytesIO(base64.b64decode(sent["data"]))) as image:
        assert image.size == shown
    assert decision.args == {"x": 1279, "y": 718}  # 714·2560/1429, 401·1440/804


@pytest.mark.parametrize(
    ("action", "fields", "tool", "args"),
    [
        ("left_click", {"coordinate": [10, 20]}, "click", {"x": 10, "y": 20}),
        ("right_click", {"coordinate": [10, 20]}, "click", {"x": 10, "y": 20, "button": "right"}),
        ("middle_click", {"coordinate": [1, 2]}, "click", {"x": 1, "y": 2, "button": "middle"}),
        ("double_click", {"coordinate": [10, 20]}, "click", {"x": 10, "y": 20, "clicks": 2}),
        ("triple_click", {"coordinate": [10, 20]}, "click", {"x": 10, "y": 20, "clicks": 3}),
        ("mouse_move", {"coordinate": [30, 40]}, "move_mouse", {"x": 30, "y": 40}),
        (
            "left_click_drag",
            {"start_coordinate": [1, 2], "coordinate": [30, 40]},
            "drag",
            {"x": 1, "y": 2, "to_x": 30, "to_y": 40},
        ),
        ("scroll", {"coordinate": [5, 6], "scroll_direction": "down", "scroll_amount": 3},
         "scroll", {"amount": -3, "x": 5, "y": 6}),
        ("scroll", {"coordinate": [5, 6], "scroll_direction": "up", "scroll_amount": 2},
         "scroll", {"amount": 2, "x": 5, "y": 6}),
        ("type", {"text": "hello"}, "type_text", {"text": "hello"}),
        ("key", {"text": "ctrl+s"}, "hotkey", {"keys": ["ctrl", "s"]}),
        ("key", {"text": "Return"}, "hotkey", {"keys": ["enter"]}),
        ("key", {"text": "ctrl+Page_Down"}, "hotkey", {"keys": ["ctrl", "pagedown"]}),
        ("hold_key", {"text": "shift", "duration": 2}, "hold_key",
         {"keys": ["shift"], "seconds": 2.0}),
        ("wait", {"duration": 1}, "wait", {"seconds": 1.0}),
        ("cursor_position", {}, "cursor_position", {}),
    ],
)  # fmt: skip
def test_each_action_is_the_tool_call_it_means(
    action: str, fields: dict[str, Any], tool: str, args: dict[str, Any]
) -> None:
    parsed = parse_action({"action": action, **fields}, tools(*ALL), (320, 200), None, "", "raw")

    assert [(d.tool, d.args) for d in parsed.decisions] == [(tool, args)]


def test_mouse_down_and_up_act_where_the_conversation_left_the_pointer() -> None:
    moved = parse_action(
        {"action": "mouse_move", "coordinate": [50, 60]}, tools(*ALL), (320, 200), None, "", ""
    )
    down = parse_action(
        {"action": "left_mouse_down"}, tools(*ALL), (320, 200), moved.pointer, "", ""
    )
    click = parse_action({"action": "left_click"}, tools(*ALL), (320, 200), (7, 8), "", "")

    assert [(d.tool, d.args) for d in down.decisions] == [("mouse_down", {"x": 50, "y": 60})]
    assert click.decisions[0].args == {"x": 7, "y": 8}
    with pytest.raises(PlannerError, match="pointer's place is not known yet"):
        parse_action({"action": "left_mouse_up"}, tools(*ALL), (320, 200), None, "", "")


@pytest.mark.parametrize(
    ("action", "tool", "args"),
    [
        (
            {"action": "left_click", "coordinate": [3, 4], "text": "shift"},
            "click",
            {"x": 3, "y": 4, "hold": ["shift"]},
        ),
        (
            {
                "action": "scroll",
                "coordinate": [3, 4],
                "scroll_direction": "down",
                "scroll_amount": 2,
                "text": "ctrl",
            },
            "scroll",
            {"amount": -2, "x": 3, "y": 4, "hold": ["ctrl"]},
        ),
        (
            {
                "action": "left_click_drag",
                "start_coordinate": [1, 2],
                "coordinate": [5, 6],
                "text": "alt+shift",
            },
            "drag",
            {"x": 1, "y": 2, "to_x": 5, "to_y": 6, "hold": ["alt", "shift"]},
        ),
    ],
)
def test_keys_a_pointer_action_names_are_held_around_it(
    action: dict[str, Any], tool: str, args: dict[str, Any]
) -> None:
    parsed = parse_action(action, tools(*ALL), (320, 200), None, "", "")
    assert [(d.tool, d.args) for d in parsed.decisions] == [(tool, args)]


def test_a_repeated_key_is_one_step_a_press() -> None:
    parsed = parse_action(
        {"action": "key", "text": "Down", "repeat": 3}, tools(*ALL), (320, 200), None, "", ""
    )
    assert [d.args for d in parsed.decisions] == [{"keys": ["down"]}] * 3


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"action": "fly", "coordinate": [1, 1]}, "unknown computer action 'fly'"),
        ({"action": "left_click", "coordinate": [400, 10]}, "outside the 320x200 screenshot"),
        ({"action": "left_click", "coordinate": "middle"}, "needs 'coordinate' as \\[x, y\\]"),
        ({"action": "scroll", "coordinate": [1, 1], "scroll_direction": "left"}, "horizontal"),
        ({"action": "left_click", "coordinate": [1, 1], "text": "shift+"}, "has an empty key"),
        (
            {"action": "scroll", "coordinate": [1, 1], "scroll_direction": "up", "text": "hyper"},
            "hyper",
        ),
        ({"action": "hold_key", "text": "shift", "duration": 60}, "seconds"),
        ({"action": "key"}, 'needs "text"'),
        ({"action": "zoom", "region": [0, 0, 900, 10]}, "not a box inside"),
        ("left_click", "not an object"),
    ],
)
def test_a_malformed_action_is_a_clear_planner_error(action: Any, message: str) -> None:
    with pytest.raises(PlannerError, match=message):
        parse_action(action, tools(*ALL), (320, 200), None, "", "raw")


async def test_every_tool_use_is_answered_with_what_its_step_did_the_screen_last() -> None:
    script = [
        Message(
            [text("Type and save."), tool_use("type", text="hi"), tool_use("key", text="ctrl+s")]
        ),
        Message([text("Done.")]),
    ]  # fmt: skip
    async with MessagesServer(script) as server:
        planner = planner_for(server)
        first = await planner.decide(request())
        steps = (
            row(1, 2, "type_text", StepStatus.OK, summary="typed 2 characters"),
            row(1, 4, "hotkey", StepStatus.DENIED, error="denied by the user"),
        )
        second = await planner.decide(request(turn=2, steps=steps))
        await planner.aclose()
    assert (first.tool, [d.tool for d in first.batch]) == ("type_text", ["hotkey"])
    assert first.reason == "Type and save."
    uses = [b for b in server.answers[0]["content"] if b["type"] == "tool_use"]
    answer = server.requests[1]["messages"]
    assert [m["role"] for m in answer] == ["user", "assistant", "user"]
    results = answer[2]["content"]
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    assert "typed 2 characters" in results[0]["content"][0]["text"]
    assert "is_error" not in results[0]
    assert results[1]["is_error"] is True
    assert "denied: denied by the user" in results[1]["content"][0]["text"]
    assert [p["type"] for p in results[1]["content"]] == ["text", "image"]
    assert [p["type"] for p in results[0]["content"]] == ["text"]
    assert second.action == "done"


async def test_cursor_position_is_answered_in_the_models_pixels() -> None:
    observation = make_observation(2560, 1440)
    script = [Message([tool_use("cursor_position")]), Message([text("ok")])]
    async with MessagesServer(script) as server:
        planner = planner_for(server)
        await planner.decide(request(observation=observation))
        steps = (row(1, 2, "cursor_position", StepStatus.OK, target=(1280, 720)),)
        await planner.decide(request(turn=2, steps=steps, observation=observation))
        await planner.aclose()
    said = server.requests[1]["messages"][2]["content"][0]["content"][0]["text"]
    assert "X=714,Y=402" in said


async def test_a_zoom_is_answered_with_a_full_resolution_crop_without_a_step() -> None:
    crops: list[tuple[int, int, int, int]] = []

    async def region(box: tuple[int, int, int, int]) -> bytes:
        crops.append(box)
        out = io.BytesIO()
        Image.new("RGB", box[2:], (1, 2, 3)).save(out, format="PNG")
        return out.getvalue()

    observation = make_observation(2560, 1440)
    script = [
        Message([tool_use("zoom", region=[100, 100, 300, 200])]),
        Message([tool_use("left_click", coordinate=[150, 150])]),
    ]
    async with MessagesServer(script) as server:
        planner = planner_for(server, model="claude-opus-4-6")
        decision = await planner.decide(replace(request(observation=observation), region=region))
        await planner.aclose()
    assert len(server.requests) == 2  # asked on at once: one turn, no step for the zoom
    assert crops == [(179, 179, 358, 179)]  # the region in screenshot pixels, captured anew
    result = server.requests[1]["messages"][2]["content"][0]
    assert result["type"] == "tool_result"
    image = result["content"][1]
    assert image["source"]["media_type"] == "image/png"
    with Image.open(io.BytesIO(base64.b64decode(image["source"]["data"]))) as crop:
        assert crop.size == (358, 179)  # the screen's own pixels, not the scaled image's
    assert decision.tool == "click"


async def test_a_rate_limit_is_retried_after_the_time_it_asks() -> None:
    sleep = RecordingSleep()
    script = [ApiError(429, "rate limited", retry_after="2"), Message([text("done")])]
    async with MessagesServer(script) as server:
        planner = planner_for(server, sleep=sleep)
        decision = await planner.decide(request())
        await planner.aclose()
    assert sleep.delays == [2.0]
    assert decision.action == "done"


async def test_an_overloaded_api_is_retried_then_a_clear_transport_error() -> None:
    sleep = RecordingSleep()
    script = [ApiError(529, "Overloaded")] * 3
    async with MessagesServer(script) as server:
        planner = planner_for(server, sleep=sleep)
        with pytest.raises(PlannerTransportError, match=r"is overloaded \(529\): Overloaded"):
            await planner.decide(request())
        await planner.aclose()
    assert len(server.requests) == 3
    assert len(sleep.delays) == 2


async def test_a_refused_key_is_one_line_and_not_retried() -> None:
    async with MessagesServer([ApiError(401, "invalid x-api-key")]) as server:
        planner = planner_for(server)
        with pytest.raises(PlannerTransportError, match=r"refused the API key \(401\)"):
            await planner.decide(request())
        await planner.aclose()
    assert len(server.requests) == 1


async def test_a_refusal_is_a_planner_error_naming_it() -> None:
    refused = Message(
        [text("I can't help with that.")],
        stop_reason="refusal",
        stop_details={"type": "refusal", "category": "cyber", "explanation": None},
    )
    async with MessagesServer([refused]) as server:
        planner = planner_for(server)
        with pytest.raises(PlannerError, match="the model refused: .I can't help with that"):
            await planner.decide(request())
        await planner.aclose()
    BetaMessage.model_validate(server.answers[0])


async def test_an_unusable_action_is_answered_next_turn_as_an_error_of_every_tool_use() -> None:
    script = [
        Message([tool_use("left_click", coordinate=[999, 5]), tool_use("type", text="x")]),
        Message([text("Sorry.")]),
    ]
    async with MessagesServer(script) as server:
        planner = planner_for(server)
        with pytest.raises(PlannerError, match="outside the 320x200 screenshot"):
            await planner.decide(request())
        await planner.decide(request(turn=2))
        await planner.aclose()
    results = server.requests[1]["messages"][2]["content"]
    assert [r["is_error"] for r in results] == [True, True]
    assert "outside the 320x200 screenshot" in results[0]["content"][0]["text"]


async def test_a_request_that_failed_is_sent_again_whole_next_turn() -> None:
    script = [
        Message([tool_use("type", text="x")]),
        ApiError(400, "bad"),
        Message([text("done")]),
    ]
    async with MessagesServer(script) as server:
        planner = planner_for(server)
        await planner.decide(request())
        steps = (row(1, 2, "type_text", StepStatus.OK, summary="typed 1 characters"),)
        with pytest.raises(PlannerTransportError, match=r"rejected the request \(400\): bad"):
            await planner.decide(request(turn=2, steps=steps))
        await planner.decide(request(turn=3, steps=steps))
        await planner.aclose()
    # the tool_use is still answered by the message right after it
    assert server.requests[2]["messages"][2]["content"][0]["type"] == "tool_result"
    assert len(server.requests[2]["messages"]) == 3


async def test_bad_answers_in_a_run_are_failed_steps_never_a_fault_of_the_loop() -> None:
    from desktop_agent.core.models import Policy, RunStatus, StopReason
    from tests.unit.core.conftest import make_harness

    script = [
        Message([tool_use("fly", coordinate=[1, 1])]),
        ApiError(529, "Overloaded"),
        ApiError(529, "Overloaded"),
        ApiError(529, "Overloaded"),
        Message([tool_use("left_click", coordinate=[10, 10])]),
        Message([text("Clicked it.")]),
    ]
    h = make_harness(policies={"click": Policy.ALLOW})
    run = await h.create(allowed_tools=("click",), max_failures=5)
    async with MessagesServer(script) as server:
        planner = planner_for(server)
        await h.collect(run, planner)
        await planner.aclose()
    final = h.stored(run.id)
    assert (final.status, final.stop_reason) == (RunStatus.COMPLETED, StopReason.DONE)
    rows = h.repo.steps[run.id].values()
    errors = [s.error for s in rows if s.status is StepStatus.FAILED]
    assert "unknown computer action 'fly'" in (errors[0] or "")
    assert "is overloaded (529)" in (errors[1] or "")
    assert [name for name, _ in h.executor.calls] == ["click"]


async def test_without_a_key_the_turn_fails_with_one_line_naming_where_to_put_it() -> None:
    async with MessagesServer([Message([text("done")])]) as server:
        planner = make_planner(
            base_url=server.url, model=MODEL, api_key=None, profile="anthropic-computer"
        )
        with pytest.raises(
            PlannerTransportError, match="no Anthropic API key for .*ANTHROPIC_API_KEY"
        ):
            await planner.decide(request())
        assert isinstance(planner, AnthropicPlanner)
        await planner.aclose()
    assert server.requests == []


async def test_the_conversation_is_told_which_monitor_the_screenshot_is_when_it_changes() -> None:
    script = [Message([tool_use("wait", duration=1)]) for _ in range(3)]
    async with MessagesServer(script) as server:
        planner = planner_for(server)
        await planner.decide(request(observation=on_monitor(2)))
        for turn, number in ((2, 2), (3, 1)):
            rows = (row(turn - 1, 2 * turn, "wait", StepStatus.OK, summary="waited"),)
            await planner.decide(request(turn=turn, steps=rows, observation=on_monitor(number)))
        await planner.aclose()
    said = [str(body["messages"][-1]["content"]) for body in server.requests]
    assert "The image shows monitor 2, 1280x1024 at -1280,0: one of the desktop's 2" in said[0]
    assert "cannot be clicked from this image" in said[0] and "focus_window" not in said[0]
    assert "The image shows" not in said[1]  # the same monitor: told once
    # the tool_result's last part is the screenshot, the monitor said just before it
    last = server.requests[2]["messages"][-1]["content"][-1]["content"]
    assert [part["type"] for part in last[-2:]] == ["text", "image"]
    assert last[-2]["text"].startswith("The image shows monitor 1 (the primary), 1920x1080 at 0,0")


async def test_a_change_back_to_one_monitor_is_said_once_so_the_last_note_stands_no_more() -> None:
    script = [Message([tool_use("wait", duration=1)]) for _ in range(4)]
    one = replace(make_observation(), layout=ScreenLayout(MONITORS[0], MONITORS[:1]))
    async with MessagesServer(script) as server:
        planner = planner_for(server)
        await planner.decide(request(observation=on_monitor(2)))
        for turn, observation in ((2, one), (3, one), (4, on_monitor(1))):
            rows = (row(turn - 1, 2 * turn, "wait", StepStatus.OK, summary="waited"),)
            await planner.decide(request(turn=turn, steps=rows, observation=observation))
        await planner.aclose()
    said = [str(body["messages"][-1]["content"]) for body in server.requests]
    assert "one of the desktop's 2 monitors" in said[0]
    # said in the tool_result just before the screenshot, as the note it replaces was
    last = server.requests[1]["messages"][-1]["content"][-1]["content"]
    assert [part["type"] for part in last[-2:]] == ["text", "image"]
    assert last[-2]["text"] == (
        "Now one monitor: the image shows the whole desktop (1920x1080); the other monitors "
        "named before are gone."
    )
    assert "Now one monitor" not in said[2] and "The image shows" not in said[2]  # told once
    assert "The image shows monitor 1 (the primary), 1920x1080 at 0,0" in said[3]
