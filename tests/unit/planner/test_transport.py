"""Timeouts, bounded retries with backoff and Retry-After, and a stop that ends a request."""

from __future__ import annotations

import asyncio
import gc
from datetime import UTC, datetime

import pytest

from desktop_agent.core.errors import PlannerTransportError
from desktop_agent.planner.client import retry_after_s
from tests.support.model_server import Disconnect, Hang, HttpError, ModelServer, Reply
from tests.unit.planner.conftest import RecordingSleep, closed_port, make_planner, make_request

DONE = Reply({"action": "done", "message": "ok", "reason": "r"})


async def test_429_waits_as_long_as_retry_after_asks_then_succeeds(sleep: RecordingSleep) -> None:
    script = [HttpError(429, "slow down", retry_after="2"), DONE]
    async with (
        ModelServer(script) as server,
        make_planner(server.base_url, sleep=sleep) as planner,
    ):
        decision = await planner.decide(make_request())
    assert decision.action == "done"
    assert sleep.delays == [2.0]
    assert len(server.requests) == 2


async def test_retry_after_beyond_the_budget_fails_at_once(sleep: RecordingSleep) -> None:
    async with (
        ModelServer([HttpError(429, "quota", retry_after="60"), DONE]) as server,
        make_planner(server.base_url, sleep=sleep) as planner,
    ):
        with pytest.raises(PlannerTransportError) as caught:
            await planner.decide(make_request())
    assert str(caught.value) == (
        f"model server at {server.base_url} answered 429: quota; it asked to retry after "
        "60 s, more than the 30 s this planner waits"
    )
    assert sleep.delays == []
    assert len(server.requests) == 1


async def test_5xx_are_retried_with_exponential_backoff(sleep: RecordingSleep) -> None:
    script = [HttpError(500, "boom"), HttpError(503, "loading model"), DONE]
    async with (
        ModelServer(script) as server,
        make_planner(server.base_url, sleep=sleep) as planner,
    ):
        decision = await planner.decide(make_request())
    assert decision.action == "done"
    assert sleep.delays == [1.0, 2.0]


async def test_at_most_three_attempts_then_a_one_line_error(sleep: RecordingSleep) -> None:
    script = [HttpError(500, "boom"), HttpError(500, "boom"), HttpError(502, "bad gateway"), DONE]
    async with (
        ModelServer(script) as server,
        make_planner(server.base_url, sleep=sleep) as planner,
    ):
        with pytest.raises(PlannerTransportError) as caught:
            await planner.decide(make_request())
    assert str(caught.value) == (
        f"model server at {server.base_url} answered 502: bad gateway (gave up after 3 attempts)"
    )
    assert len(server.requests) == 3
    assert server.remaining == 1


async def test_backoff_never_waits_more_than_the_total_budget(sleep: RecordingSleep) -> None:
    script = [HttpError(500, "a"), HttpError(500, "b"), HttpError(500, "c")]
    async with (
        ModelServer(script) as server,
        make_planner(server.base_url, sleep=sleep, max_backoff_total_s=1.5) as planner,
    ):
        with pytest.raises(PlannerTransportError):
            await planner.decide(make_request())
    assert sleep.delays == [1.0, 0.5]


async def test_client_errors_are_not_retried(sleep: RecordingSleep) -> None:
    async with (
        ModelServer([HttpError(401, "invalid api key"), DONE]) as server,
        make_planner(server.base_url, sleep=sleep) as planner,
    ):
        with pytest.raises(PlannerTransportError) as caught:
            await planner.decide(make_request())
    assert str(caught.value) == (
        f"model server at {server.base_url} refused the API key (401): invalid api key"
    )
    assert len(server.requests) == 1 and sleep.delays == []


async def test_unknown_model_says_so(sleep: RecordingSleep) -> None:
    async with (
        ModelServer([HttpError(404, "model 'qwen2.5vl' not found")]) as server,
        make_planner(server.base_url, sleep=sleep) as planner,
    ):
        with pytest.raises(PlannerTransportError, match=r"does not know model 'qwen2.5vl' \(404\)"):
            await planner.decide(make_request())


async def test_read_timeout_fails_without_retrying(sleep: RecordingSleep) -> None:
    slow = Reply({"action": "done"}, delay_s=30)
    async with (
        ModelServer([slow, DONE]) as server,
        make_planner(server.base_url, sleep=sleep, read_timeout_s=0.2) as planner,
    ):
        with pytest.raises(PlannerTransportError) as caught:
            await planner.decide(make_request())
    assert str(caught.value) == f"model server at {server.base_url} did not answer within 0.2 s"
    assert len(server.requests) == 1 and sleep.delays == []


async def test_connection_refused_is_retried_then_reported(sleep: RecordingSleep) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    async with make_planner(base_url, sleep=sleep) as planner:
        with pytest.raises(PlannerTransportError) as caught:
            await planner.decide(make_request())
    message = str(caught.value)
    assert message.startswith(f"model server at {base_url} could not be reached (")
    assert message.endswith("(gave up after 3 attempts)")
    assert "\n" not in message
    assert sleep.delays == [1.0, 2.0]


async def test_dropped_connection_is_retried(sleep: RecordingSleep) -> None:
    async with (
        ModelServer([Disconnect(), DONE]) as server,
        make_planner(server.base_url, sleep=sleep) as planner,
    ):
        decision = await planner.decide(make_request())
    assert decision.action == "done"
    assert sleep.delays == [1.0]


async def test_cancel_during_a_request_ends_the_decision_at_once() -> None:
    async with ModelServer([Hang()]) as server, make_planner(server.base_url) as planner:
        task = asyncio.create_task(planner.decide(make_request()))
        await server.wait_requests(1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)
    assert task.cancelled()


async def test_cancel_during_a_backoff_ends_the_decision_at_once() -> None:
    waiting = asyncio.Event()
    asked: list[float] = []

    async def real_sleep(seconds: float) -> None:
        asked.append(seconds)
        waiting.set()
        await asyncio.sleep(seconds)

    script = [HttpError(429, "busy", retry_after="20"), DONE]
    async with (
        ModelServer(script) as server,
        make_planner(server.base_url, sleep=real_sleep) as planner,
    ):
        task = asyncio.create_task(planner.decide(make_request()))
        await asyncio.wait_for(waiting.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)
    assert asked == [20.0]
    assert len(server.requests) == 1


def test_retry_after_reads_seconds_milliseconds_and_http_dates() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_s({"retry-after": "3"}, now) == 3.0
    assert retry_after_s({"retry-after": "1.5"}, now) == 1.5
    assert retry_after_s({"retry-after-ms": "250", "retry-after": "9"}, now) == 0.25
    assert retry_after_s({"retry-after": "Thu, 01 Jan 2026 12:00:07 GMT"}, now) == 7.0
    assert retry_after_s({"retry-after": "Thu, 01 Jan 2026 11:00:00 GMT"}, now) == 0.0
    assert retry_after_s({"retry-after": "soon"}, now) is None
    assert retry_after_s({}, now) is None


async def test_a_planner_nobody_closes_leaves_no_socket_open() -> None:
    # The composition root does not close a run's planner; an open keep-alive socket
    # would then be collected unclosed (a ResourceWarning, an error under pytest).
    async with ModelServer([DONE, DONE]) as server:
        planner = make_planner(server.base_url)
        await planner.decide(make_request())
        await planner.decide(make_request())
        del planner
        gc.collect()
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "headers", "text", "level", "kind"),
    [
        (429, {"retry-after": "2"}, "slow down", "json_schema", "Retry"),
        (503, {}, "busy", "json_schema", "Retry"),
        (401, {}, "bad key", "json_schema", "Fail"),
        (404, {}, "no such model", "json_schema", "Fail"),
        (400, {}, "response_format is not supported", "json_schema", "Downgrade"),
        (400, {}, "response_format is not supported", "text", "Fail"),
        (
            400,
            {},
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "json_schema",
            "Fix",
        ),
    ],
)
def test_one_failed_request_is_classified_once_and_the_retry_follows_from_its_class(
    status: int, headers: dict[str, str], text: str, level: str, kind: str
) -> None:
    from desktop_agent.planner.client import ErrorAnswer, OpenAIPlanner, Retry

    planner = OpenAIPlanner(base_url="http://127.0.0.1:9/v1", model="m", api_key=None)
    body = {"model": "m", "max_tokens": 1024, "temperature": 0}
    outcome = planner._classify(
        ErrorAnswer(status, headers, text),
        "at",
        body,
        frozenset(),
        level,  # type: ignore[arg-type]
    )
    assert type(outcome).__name__ == kind
    if status == 429:
        assert isinstance(outcome, Retry) and outcome.after == 2.0
