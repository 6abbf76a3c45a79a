"""A model response has a total deadline and a size cap (issue #10 item 8, model side).

The openai client's timeouts are per read: a server trickling a byte at a time never trips
them. Both limits fail the turn with a one-line PlannerTransportError; nothing else breaks.
"""

from __future__ import annotations

import time

import pytest

from desktop_agent.core.errors import PlannerTransportError
from tests.support.model_server import ModelServer, Oversized, Reply, Trickle
from tests.unit.planner.conftest import make_planner, make_request

DONE = Reply({"action": "done", "message": "ok"})


async def test_a_trickling_server_fails_the_turn_at_the_total_deadline() -> None:
    # one byte every 50 ms for 3 s: each read is quick, the whole answer is not
    async with ModelServer([Trickle(DONE, interval_s=0.05, for_s=3.0)], then=DONE) as server:
        planner = make_planner(server.base_url, read_timeout_s=2.0, response_deadline_s=0.5)
        async with planner:
            started = time.monotonic()
            with pytest.raises(PlannerTransportError) as caught:
                await planner.decide(make_request())
            elapsed = time.monotonic() - started
            message = str(caught.value)
            assert message.startswith(f"model server at {server.base_url}")
            assert "did not finish its answer within 0.5 s" in message
            assert "\n" not in message
            assert elapsed < 2.0  # the deadline ended it, not the trickle
            # the next turn works: nothing was left broken
            assert (await planner.decide(make_request())).action == "done"


async def test_the_deadline_is_not_retried_like_a_dropped_connection() -> None:
    async with ModelServer([Trickle(DONE, for_s=3.0)], then=DONE) as server:
        planner = make_planner(server.base_url, response_deadline_s=0.3)
        async with planner:
            with pytest.raises(PlannerTransportError):
                await planner.decide(make_request())
    assert len(server.requests) == 1


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_a_100_mb_answer_fails_the_turn_without_being_read_whole(chunked: bool) -> None:
    item = Oversized(DONE, size=100 * 1024 * 1024, chunked=chunked)
    async with ModelServer([item], then=DONE) as server:
        planner = make_planner(server.base_url, max_response_bytes=4 * 1024 * 1024)
        async with planner:
            with pytest.raises(PlannerTransportError) as caught:
                await planner.decide(make_request())
            message = str(caught.value)
            assert "4,194,304 bytes a turn may take" in message
            assert "\n" not in message
            assert (await planner.decide(make_request())).action == "done"


async def test_an_answer_within_the_limits_is_read_as_before() -> None:
    small = Oversized(DONE, size=64 * 1024, chunked=True)  # padding, but under the cap
    async with ModelServer([small, Trickle(DONE, for_s=0.2)]) as server:
        planner = make_planner(server.base_url, response_deadline_s=5.0)
        async with planner:
            assert (await planner.decide(make_request())).action == "done"
            assert (await planner.decide(make_request())).action == "done"


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_a_64_mb_error_body_is_read_through_the_same_cap(chunked: bool) -> None:
    # the SDK reads a 4xx/5xx body whole before raising: the planner must not let it
    size = 64 * 1024 * 1024
    failure = Oversized(DONE, size=size, chunked=chunked, status=500)
    async with ModelServer([failure], then=DONE) as server:
        planner = make_planner(server.base_url, max_response_bytes=1024 * 1024, max_attempts=1)
        async with planner:
            with pytest.raises(PlannerTransportError) as caught:
                await planner.decide(make_request())
            message = str(caught.value)
            assert "answered 500" in message
            assert "an error body over the 1,048,576 bytes an answer may take" in message
            assert "\n" not in message
            assert (await planner.decide(make_request())).action == "done"
    # the client hung up after the cap: the server could not write most of its body
    assert server.padding_sent < size // 2, f"{server.padding_sent:,} bytes were read"


async def test_a_small_error_body_still_says_the_servers_message() -> None:
    failure = Oversized(DONE, size=1024, chunked=True, status=503)
    async with ModelServer([failure], then=DONE) as server:
        planner = make_planner(server.base_url, max_attempts=1)
        async with planner:
            with pytest.raises(PlannerTransportError) as caught:
                await planner.decide(make_request())
    assert "answered 503: padded failure (gave up after 1 attempts)" in str(caught.value)
