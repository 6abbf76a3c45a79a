"""JSON schema → JSON mode → plain text, as each server allows, remembered per server and model."""

from __future__ import annotations

import pytest

from desktop_agent.core.errors import PlannerTransportError
from desktop_agent.planner import ResponseFormatMemory
from tests.support.model_server import HttpError, ModelServer, Reply
from tests.unit.planner.conftest import make_planner, make_request

DONE = Reply({"action": "done", "message": "ok", "reason": "r"})


def _kinds(server: ModelServer) -> list[str]:
    return [(body.get("response_format") or {}).get("type", "text") for body in server.requests]


async def test_server_with_json_schema_gets_json_schema_every_turn(
    formats: ResponseFormatMemory,
) -> None:
    async with (
        ModelServer([DONE, DONE]) as server,
        make_planner(server.base_url, formats=formats) as planner,
    ):
        await planner.decide(make_request())
        await planner.decide(make_request())
    assert _kinds(server) == ["json_schema", "json_schema"]


async def test_server_without_json_schema_falls_back_to_json_mode_and_remembers(
    formats: ResponseFormatMemory,
) -> None:
    async with (
        ModelServer([DONE, DONE], reject_formats={"json_schema"}) as server,
        make_planner(server.base_url, formats=formats) as planner,
    ):
        first = await planner.decide(make_request())
        second = await planner.decide(make_request())
    assert (first.action, second.action) == ("done", "done")
    assert _kinds(server) == ["json_schema", "json_object", "json_object"]
    assert formats.get(server.base_url, "qwen2.5vl") == "json_object"


async def test_server_with_neither_falls_back_to_plain_text_and_remembers(
    formats: ResponseFormatMemory,
) -> None:
    async with (
        ModelServer([DONE, DONE], reject_formats={"json_schema", "json_object"}) as server,
        make_planner(server.base_url, formats=formats) as planner,
    ):
        await planner.decide(make_request())
        await planner.decide(make_request())
    assert _kinds(server) == ["json_schema", "json_object", "text", "text"]
    assert "response_format" not in server.requests[-1]


async def test_memory_outlives_the_planner_for_the_next_run_on_the_same_server(
    formats: ResponseFormatMemory,
) -> None:
    async with ModelServer([DONE, DONE], reject_formats={"json_schema"}) as server:
        async with make_planner(server.base_url, formats=formats) as planner:
            await planner.decide(make_request())
        async with make_planner(server.base_url, formats=formats) as next_run:
            await next_run.decide(make_request())
    assert _kinds(server) == ["json_schema", "json_object", "json_object"]


async def test_memory_is_per_server(formats: ResponseFormatMemory) -> None:
    async with (
        ModelServer([DONE], reject_formats={"json_schema"}) as plain,
        ModelServer([DONE]) as structured,
    ):
        async with make_planner(plain.base_url, formats=formats) as planner:
            await planner.decide(make_request())
        async with make_planner(structured.base_url, formats=formats) as planner:
            await planner.decide(make_request())
    assert _kinds(plain) == ["json_schema", "json_object"]
    assert _kinds(structured) == ["json_schema"]


async def test_lm_studio_like_server_rejecting_only_json_mode_keeps_json_schema(
    formats: ResponseFormatMemory,
) -> None:
    async with (
        ModelServer([DONE, DONE], reject_formats={"json_object"}) as server,
        make_planner(server.base_url, formats=formats) as planner,
    ):
        await planner.decide(make_request())
        await planner.decide(make_request())
    assert _kinds(server) == ["json_schema", "json_schema"]


async def test_a_400_that_plain_text_gets_too_is_an_error_and_nothing_is_remembered(
    formats: ResponseFormatMemory,
) -> None:
    too_big = HttpError(400, "image too large")
    async with (
        ModelServer([too_big, too_big, too_big]) as server,
        make_planner(server.base_url, formats=formats) as planner,
    ):
        with pytest.raises(PlannerTransportError) as caught:
            await planner.decide(make_request())
    assert str(caught.value) == (
        f"model server at {server.base_url} rejected the request (400): image too large"
    )
    assert _kinds(server) == ["json_schema", "json_object", "text"]
    assert formats.get(server.base_url, "qwen2.5vl") == "json_schema"
