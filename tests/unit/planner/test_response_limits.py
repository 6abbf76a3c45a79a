"""A model response has a total deadline and a size cap (issue #10 item 8, model side).

The openai client's timeouts are per read: a server trickling a byte at a time never trips
them. Both limits fail the turn with a one-line PlannerTransportError; nothing else breaks.
"""

from __future__ import annotations

import contextlib
import json
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator

import pytest

from desktop_agent.core.errors import PlannerTransportError
from tests.support.model_server import ModelServer, Oversized, Reply, Trickle
from tests.unit.planner.conftest import make_planner, make_request

DONE = Reply({"action": "done", "message": "ok"})


async def test_a_trickling_server_fails_the_turn_at_the_total_deadline() -> None:
    # one byte every 50 ms for a minute: each read is quick, the whole answer is not
    trickle = Trickle(DONE, interval_s=0.05, for_s=60.0)
    async with ModelServer([DONE, trickle], then=DONE) as server:
        # a deadline a normal turn meets on a loaded machine; reads time out after 2 s
        planner = make_planner(server.base_url, read_timeout_s=2.0, response_deadline_s=3.0)
        async with planner:
            # a first turn makes the client: the timed turn below is the request alone
            assert (await planner.decide(make_request())).action == "done"
            started = time.monotonic()
            with pytest.raises(PlannerTransportError) as caught:
                await planner.decide(make_request())
            elapsed = time.monotonic() - started
            message = str(caught.value)
            assert message.startswith(f"model server at {server.base_url}")
            assert "did not finish its answer within 3 s" in message
            assert "\n" not in message
            # the deadline ended it: not a read timeout (2 s), not the trickle's end (60 s)
            assert 3.0 <= elapsed < 10.0, elapsed
            # the next turn works: nothing was left broken
            assert (await planner.decide(make_request())).action == "done"


async def test_making_the_client_does_not_count_against_the_response_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the first turn imports openai (over a second; several on a loaded machine): that is
    # this process's time, not the server's answer
    async with ModelServer([], then=DONE) as server:
        planner = make_planner(server.base_url, response_deadline_s=3.0)
        make_client = planner._client

        def slow_client() -> object:
            time.sleep(3.5)  # a cold import that blocks, as `import openai` does
            return make_client()

        monkeypatch.setattr(planner, "_client", slow_client)
        async with planner:
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


def gzipped(data: bytes, times: int = 1) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return b"".join([*(packer.compress(data) for _ in range(times)), packer.flush()])


@contextlib.asynccontextmanager
async def gzip_server(status: int, body: bytes) -> AsyncIterator[str]:
    """A chat-completions server answering `body` as it is, marked gzip: its base URL."""
    from aiohttp import web

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
        return web.Response(status=status, body=body, headers=headers)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    finally:
        await runner.cleanup()


async def test_a_gzipped_answer_is_read() -> None:
    completion = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "qwen2.5vl",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": json.dumps(DONE.content)},
            }
        ],
    }
    answer = gzipped(json.dumps(completion).encode())
    async with gzip_server(200, answer) as url, make_planner(url) as planner:
        assert (await planner.decide(make_request())).action == "done"


@pytest.mark.parametrize("status", [200, 500], ids=["answer", "error body"])
async def test_a_gzip_bomb_never_inflates_past_the_cap(status: int) -> None:
    # 64 MB of spaces in about 64 KB: inflated whole, one network chunk alone is tens of MB
    bomb = gzipped(b" " * (1024 * 1024), times=64)
    cap = 1024 * 1024
    async with (
        gzip_server(status, bomb) as url,
        make_planner(url, max_response_bytes=cap, max_attempts=1) as planner,
    ):
        tracemalloc.start()
        try:
            with pytest.raises(PlannerTransportError) as caught:
                await planner.decide(make_request())
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert "1,048,576 bytes" in str(caught.value)
    assert peak < 8 * cap, f"{peak:,} bytes held at the peak"
