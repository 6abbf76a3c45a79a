"""Every request body is validated: a bad one is a 400 with a one-line reason naming the value."""

from __future__ import annotations

import pytest

from tests.unit.api.conftest import Api

BAD_BODIES: list[tuple[bytes, str]] = [
    (b"", "goal is required"),
    (b"{", "the body is not valid JSON: Expecting property name enclosed in double quotes"),
    (b'{"goal": "x",}', "the body is not valid JSON: "),
    (b"[]", "the body must be a JSON object, not a list"),
    (b'"goal"', "the body must be a JSON object, not a string"),
    (b"null", "the body must be a JSON object, not null"),
    (b'{"goal": ""}', "the goal is empty"),
    (b'{"goal": " \\n\\t "}', "the goal is empty"),
    (b'{"goal": 5}', "goal: input should be a valid string (got 5)"),
    (b'{"goal": ["a"]}', "goal: input should be a valid string (got a list)"),
    (
        b'{"goal": "x", "max_steps": 0}',
        "max_steps: input should be greater than or equal to 1 (got 0)",
    ),
    (
        b'{"goal": "x", "max_steps": 501}',
        "max_steps: input should be less than or equal to 500 (got 501)",
    ),
    (b'{"goal": "x", "max_steps": "5"}', 'max_steps: input should be a valid integer (got "5")'),
    (b'{"goal": "x", "max_steps": 5.5}', "max_steps: input should be a valid integer (got 5.5)"),
    (b'{"goal": "x", "max_steps": true}', "max_steps: input should be a valid integer (got True)"),
    (b'{"goal": "x", "max_steps": 1e999}', "max_steps: input should be a valid integer (got inf)"),
    (
        b'{"goal": "x", "max_failures": 51}',
        "max_failures: input should be less than or equal to 50",
    ),
    (
        b'{"goal": "x", "max_failures": -1}',
        "max_failures: input should be greater than or equal to 1",
    ),
    (
        b'{"goal": "x", "max_steps": ' + b"9" * 5000 + b"}",
        "the body is not valid JSON: Exceeds the limit",
    ),
    (
        b'{"goal": "x", "max_steps": 99999999999999999999999999999999999}',
        "max_steps: input should be less than or equal to 500 (got a huge number)",
    ),
    (
        b'{"goal": "x", "base_url": "ftp://host/v1"}',
        'base_url "ftp://host/v1" is not an http(s) URL with a host',
    ),
    (
        b'{"goal": "x", "base_url": "localhost:11434"}',
        'base_url "localhost:11434" is not an http(s) URL with a host',
    ),
    (
        b'{"goal": "x", "base_url": "http://"}',
        'base_url "http://" is not an http(s) URL with a host',
    ),
    (
        b'{"goal": "x", "base_url": "http://host:99999/v1"}',
        'base_url "http://host:99999/v1" is not a valid URL',
    ),
    (
        b'{"goal": "x", "base_url": "http://a b/"}',
        'base_url "http://a b/" holds a space or a control character',
    ),
    (b'{"goal": "x", "model": ""}', "the model name is empty"),
    (b'{"goal": "x", "model": "a\\nb"}', "model holds a control character"),
    (b'{"goal": "x", "allowed_tools": ["wait", "teleport"]}', "unknown tool(s): teleport"),
    (
        b'{"goal": "x", "allowed_tools": "wait"}',
        'allowed_tools: input should be a valid list (got "wait")',
    ),
    (b'{"goal": "x", "allowed_tools": []}', "allowed_tools: list should have at least 1 item"),
    (
        b'{"goal": "x", "allowed_tools": [1]}',
        "allowed_tools.0: input should be a valid string (got 1)",
    ),
    (
        b'{"goal": "x", "vision": "maybe"}',
        "vision: input should be 'auto', 'yes' or 'no' (got \"maybe\")",
    ),
    (b'{"goal": "x", "colour": "red"}', 'unknown field "colour"'),
    (
        b'{"goal": "x", "model_profile": "qwen9"}',
        "unknown model profile 'qwen9' (one of: auto, ",
    ),
    (b'{"goal": "x", "model_profile": 3}', "model_profile: input should be a valid string (got 3)"),
    (
        b'{"goal": "x", "monitor": "left"}',
        "monitor must be auto, all or a monitor number from 1 (the primary) to 16, not 'left'",
    ),
    (b'{"goal": "x", "monitor": 17}', "monitor must be auto, all or a monitor number from 1"),
    (b'{"goal": "x", "monitor": true}', "monitor must be auto, all or a monitor number from 1"),
    (
        b'{"goal": "x", "allowed_tools": ["' + b"w" * 65 + b'"]}',
        "allowed_tools.0: string should have at most 64 characters",
    ),
    (
        b'{"goal": "\\ud800"}',
        "goal: input should be a valid string, unable to parse raw data as a unicode string",
    ),
    (b'{"goal": "a\\u0000b"}', "goal holds a control character"),
    (b'{"goal": NaN}', "the body is not valid JSON: NaN is not JSON"),
    (b'{"goal": "x", "max_steps": Infinity}', "the body is not valid JSON: Infinity is not JSON"),
    (b"[" * 100_000, "the body is nested too deep"),
    (b'{"goal": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "the body is nested too deep"),
    (b'{"goal": "\xff\xfe"}', "the body is not UTF-8"),
    (
        b'{"goal": 1, "model": 2, "vision": 3, "max_steps": 4.5}',
        "goal: input should be a valid string (got 1); "
        "model: input should be a valid string (got 2); "
        "max_steps: input should be a valid integer (got 4.5); and 1 more",
    ),
]


@pytest.mark.parametrize(("raw", "error"), BAD_BODIES, ids=range(len(BAD_BODIES)))
async def test_a_bad_task_body_is_400_with_a_one_line_reason(
    api: Api, raw: bytes, error: str
) -> None:
    status, body = await api.call("POST", "/api/tasks", data=raw)

    assert status == 400, body
    assert set(body) == {"error"}
    assert body["error"].startswith(error), body["error"]
    assert "\n" not in body["error"] and len(body["error"]) < 400
    assert await api.agent.repo.list_runs() == []


async def test_a_body_over_1_mib_is_413(api: Api) -> None:
    raw = b'{"goal": "' + b"x" * (1024 * 1024) + b'"}'
    status, body = await api.call("POST", "/api/tasks", data=raw)
    assert (status, body) == (413, {"error": "the body is larger than 1024 KiB"})


async def test_a_long_goal_is_400(api: Api) -> None:
    status, body = await api.call("POST", "/api/tasks", body={"goal": "x" * 10_001})
    assert status == 400
    assert body["error"].startswith("goal: string should have at most 10000 characters")


async def test_a_valid_body_is_normalised(api: Api) -> None:
    run = await api.create(
        "  tidy up  ",
        base_url="http://127.0.0.1:1234/v1/",
        model=" llava ",
        allowed_tools=["wait", "click", "wait"],
        max_steps=500,
        max_failures=50,
        vision="auto",
    )
    assert run["goal"] == "tidy up"
    assert run["base_url"] == "http://127.0.0.1:1234/v1"
    assert run["model"] == "llava"
    assert run["allowed_tools"] == ["wait", "click"]
    assert (run["max_steps"], run["max_failures"]) == (500, 50)
    assert run["model_profile"] == ""  # none asked: the settings' choice


async def test_a_run_keeps_the_model_profile_its_body_named(api: Api) -> None:
    run = await api.create("in its own format", model_profile=" Qwen3-VL ")
    assert run["model_profile"] == "qwen3-vl"
    stored = await api.agent.repo.get_run(run["id"])
    assert stored is not None and stored.model_profile == "qwen3-vl"


@pytest.mark.parametrize(("asked", "kept"), [(2, "2"), (" ALL ", "all"), (0, "all"), (None, "")])
async def test_a_run_keeps_the_monitor_its_body_named(api: Api, asked: object, kept: str) -> None:
    run = await api.create("on that monitor", monitor=asked)
    assert run["monitor"] == kept
    stored = await api.agent.repo.get_run(run["id"])
    assert stored is not None and stored.monitor == kept


async def test_defaults_come_from_the_settings(api: Api) -> None:
    run = await api.create("defaults", base_url=None, model=None)
    settings = api.agent.settings
    assert (run["model"], run["base_url"]) == (settings.model, settings.base_url)
    assert (run["max_steps"], run["max_failures"]) == (settings.max_steps, settings.max_failures)
    assert "wait" in run["allowed_tools"] and "screen_snapshot" not in run["allowed_tools"]


@pytest.mark.parametrize(
    ("path", "raw", "error"),
    [
        ("/api/tasks/stop-all", b'{"all": true}', 'unknown field "all"'),
        ("/api/tasks/stop-all", b"[1]", "the body must be a JSON object, not a list"),
        ("/api/tasks/RUN/stop", b"{", "the body is not valid JSON"),
        ("/api/tasks/RUN/pause", b'{"now": 1}', 'unknown field "now"'),
    ],
)
async def test_routes_without_arguments_take_no_body_or_an_empty_object(
    api: Api, path: str, raw: bytes, error: str
) -> None:
    run = await api.create("queued")
    path = path.replace("RUN", run["id"])
    status, body = await api.call("POST", path, data=raw)
    assert status == 400
    assert body["error"].startswith(error)
    status, _ = await api.call("POST", path, data=b"{}")
    assert status in (200, 409)


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("limit=0", "limit: input should be greater than or equal to 1"),
        ("limit=abc", "limit: input should be a valid integer"),
        ("status=lost", "status: input should be 'queued'"),
        ("sort=asc", 'unknown field "sort"'),
        ("limit=1&limit=2", "a query parameter is given twice"),
    ],
)
async def test_a_bad_list_query_is_400(api: Api, query: str, error: str) -> None:
    status, body = await api.call("GET", f"/api/tasks?{query}")
    assert status == 400
    assert body["error"].startswith(error), body


async def test_a_utf8_bom_before_the_json_is_skipped(api: Api) -> None:
    status, run = await api.call("POST", "/api/tasks", data=b'\xef\xbb\xbf{"goal": "bom"}')
    assert (status, run["goal"]) == (201, "bom")


async def test_a_json_syntax_error_names_line_and_column(api: Api) -> None:
    status, body = await api.call("POST", "/api/tasks", data=b'{"goal": "x"\n "model": 1}')
    assert (status, body) == (
        400,
        {"error": "the body is not valid JSON: Expecting ',' delimiter (line 2, column 2)"},
    )
