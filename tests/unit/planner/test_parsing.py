"""parse_decision: the answer forms models really produce, and a precise message for the rest."""

from __future__ import annotations

import pytest

from desktop_agent.core.errors import PlannerError
from desktop_agent.planner import parse_decision
from tests.support.model_server import ModelServer, Reply
from tests.unit.planner.conftest import ALLOWED, make_planner, make_request, tools

TOOLS = tools(*ALLOWED)
CLICK = '{"action": "tool", "tool": "click", "args": {"x": 10, "y": 20}, "reason": "the button"}'


@pytest.mark.parametrize(
    "text",
    [
        CLICK,
        f"  {CLICK}\n",
        f"```json\n{CLICK}\n```",
        f"```\n{CLICK}\n```",
        f"I will click the button.\n{CLICK}\nThat should work.",
        f"Here is my answer:\n```json\n{CLICK}\n```\nDone.",
        f"<think>The button is at 10,20. {{not json}}</think>\n{CLICK}",
    ],
    ids=["strict", "whitespace", "json-fence", "bare-fence", "prose", "prose-fence", "think"],
)
def test_tolerated_forms_give_the_same_decision(text: str) -> None:
    decision = parse_decision(text, TOOLS)
    assert decision.action == "tool"
    assert decision.tool == "click"
    assert decision.args == {"x": 10, "y": 20}
    assert decision.reason == "the button"
    assert decision.raw == text


def test_done_and_fail_carry_message_and_reason() -> None:
    done = parse_decision('{"action": "done", "message": "Saved.", "reason": "title"}', TOOLS)
    assert (done.action, done.message, done.reason, done.tool) == ("done", "Saved.", "title", None)
    fail = parse_decision('{"action": "fail", "reason": "not installed"}', TOOLS)
    assert (fail.action, fail.reason) == ("fail", "not installed")


def test_tool_without_args_field_validates_empty_args() -> None:
    decision = parse_decision('{"action": "tool", "tool": "wait", "args": {"seconds": 1}}', TOOLS)
    assert decision.args == {"seconds": 1}
    with pytest.raises(PlannerError, match=r"invalid arguments for wait: seconds: Field required"):
        parse_decision('{"action": "tool", "tool": "wait"}', TOOLS)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "I would click the Save button.",
            "the answer is not JSON: 'I would click the Save button.'",
        ),
        ("", "the answer was empty; answer with one JSON object"),
        ("<think>hmm</think>", "the answer was empty; answer with one JSON object"),
        ("[1, 2]", "the answer is a JSON array, not an object; answer with one JSON object"),
        (
            '{"action": "tool", "tool": "launch_app", "args": {"command": "xterm"}}',
            'unknown tool "launch_app"; the tools you may use are: click, type_text, wait',
        ),
        (
            '{"action": "tool", "tool": "click", "args": {"x": -5, "y": 3}}',
            "invalid arguments for click: x: Input should be greater than or equal to 0",
        ),
        (
            '{"action": "tool", "tool": "click", "args": {"x": 5}}',
            "invalid arguments for click: args: Value error, give either x and y, or element",
        ),
        (
            '{"action": "tool", "tool": "click", "args": [5, 6]}',
            '"args" must be a JSON object, not [5, 6]',
        ),
        (
            '{"tool": "click", "args": {"x": 1, "y": 2}}',
            'missing "action": it must be "tool", "done" or "fail"',
        ),
        (
            '{"action": "tool", "args": {"x": 1, "y": 2}}',
            'missing "tool": name one of the tools: click, type_text, wait',
        ),
        (
            '{"action": "click", "args": {"x": 1, "y": 2}}',
            '"action" must be "tool", "done" or "fail", not "click"; '
            'to use click, answer {"action": "tool", "tool": "click", ...}',
        ),
        ('{"action": "finish"}', '"action" must be "tool", "done" or "fail", not "finish"'),
        ('{"action": "done", "reason": 5}', '"reason" must be a string, not 5'),
        (
            f"{CLICK}\n{CLICK}",
            "the answer holds 2 JSON objects; give exactly one action per turn",
        ),
        (
            f'```json\n{CLICK}\n```\n```json\n{{"action": "done"}}\n```',
            "the answer holds 2 JSON objects; give exactly one action per turn",
        ),
    ],
    ids=[
        "prose-only",
        "empty",
        "think-only",
        "array",
        "unknown-tool",
        "bad-args",
        "half-a-point",
        "args-not-object",
        "missing-action",
        "missing-tool",
        "tool-as-action",
        "unknown-action",
        "reason-not-string",
        "two-objects",
        "two-fences",
    ],
)
def test_invalid_answers_fail_with_a_precise_message(text: str, message: str) -> None:
    with pytest.raises(PlannerError) as caught:
        parse_decision(text, TOOLS)
    assert str(caught.value) == message
    assert caught.value.raw == text


def test_a_tool_of_the_registry_not_allowed_in_this_run_is_unknown_here() -> None:
    with pytest.raises(PlannerError, match=r'unknown tool "hotkey"'):
        parse_decision('{"action": "tool", "tool": "hotkey", "args": {"keys": ["ctrl"]}}', TOOLS)


async def test_invalid_answer_from_the_server_raises_with_the_raw_text() -> None:
    answer = "Sure! I will click Save."
    async with ModelServer([Reply(answer)]) as server, make_planner(server.base_url) as planner:
        with pytest.raises(PlannerError) as caught:
            await planner.decide(make_request())
    assert str(caught.value) == "the answer is not JSON: 'Sure! I will click Save.'"
    assert caught.value.raw == answer


async def test_answer_cut_off_at_the_token_limit_says_so() -> None:
    cut = Reply(
        '{"action": "tool", "tool": "type_text", "args": {"text": "aaaa', finish_reason="length"
    )
    async with ModelServer([cut]) as server, make_planner(server.base_url) as planner:
        with pytest.raises(PlannerError, match=r"\(the answer was cut off at 1024 tokens\)$"):
            await planner.decide(make_request())


@pytest.mark.parametrize(
    ("args", "runs"),
    [
        ('{"text": "ls", "enter": "true"}', {"text": "ls", "enter": True}),
        ('{"text": "ls", "enter": 1}', {"text": "ls", "enter": True}),
        ('{"element": "3"}', {"element": 3}),
        ('{"x": "150", "y": 120.0}', {"x": 150, "y": 120}),
        ('{"keys": ["Control", " T"]}', {"keys": ["ctrl", "t"]}),
    ],
)
def test_the_decision_carries_the_arguments_as_they_will_run(
    args: str, runs: dict[str, object]
) -> None:
    """The gate, the store and the dialog read the decision's args: they are the validated
    ones, converted as the executor gets them, never the model's spelling (issue #15)."""
    tool = {"text": "type_text", "element": "click", "x": "click", "keys": "hotkey"}
    name = tool[next(iter(runs))]
    text = f'{{"action": "tool", "tool": "{name}", "args": {args}}}'
    decision = parse_decision(text, tools(*ALLOWED, "hotkey"))
    assert decision.args == runs
    assert all(type(decision.args[k]) is type(v) for k, v in runs.items())


#: deeper than json's C scanner recurses (the interpreter's limit is 1000 frames)
DEEP = 100_000


@pytest.mark.parametrize(
    "text",
    ["[" * DEEP, '{"a":' * DEEP, '<tool_call>{"name": "computer_use", "arguments":' + "[" * DEEP],
    ids=["array", "object", "tool-call"],
)
def test_a_deeply_nested_answer_is_a_parse_error_never_a_recursion_error(text: str) -> None:
    with pytest.raises(PlannerError, match="nests its JSON too deeply") as err:
        parse_decision(text, TOOLS)
    assert "\n" not in str(err.value)
    assert err.value.raw == text


@pytest.mark.parametrize(
    ("model", "text"),
    [
        ("some-vlm", '{"action":' * DEEP),
        ("qwen3-vl:8b", '<tool_call>{"name": "computer_use", "arguments": ' + "[" * DEEP),
        ("GUI-Owl-1.5-8B", "<tool_call>" + "[" * DEEP),
    ],
    ids=["json", "qwen3-vl", "gui-owl"],
)
async def test_every_format_reports_a_deep_answer_as_the_models_mistake(
    model: str, text: str
) -> None:
    async with (
        ModelServer([Reply(text)]) as server,
        make_planner(server.base_url, model=model, profile="auto") as planner,
    ):
        with pytest.raises(PlannerError, match="too deeply") as err:
            await planner.decide(make_request())
    assert err.value.raw == text


async def test_a_server_body_nested_too_deeply_is_a_transport_error_not_a_recursion_error() -> None:
    from aiohttp import web

    from desktop_agent.core.errors import PlannerTransportError

    async def deep(_request: web.Request) -> web.Response:
        return web.Response(body=b"[" * DEEP, content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", deep)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with make_planner(f"http://127.0.0.1:{port}/v1", max_attempts=1) as planner:
            with pytest.raises(PlannerTransportError, match="nested too deeply"):
                await planner.decide(make_request())
    finally:
        await runner.cleanup()
