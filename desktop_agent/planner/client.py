"""OpenAIPlanner: the Planner port on an OpenAI-compatible chat-completions server."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, cast

from desktop_agent.core.errors import PlannerError, PlannerTransportError
from desktop_agent.core.models import Decision, TokenUsage
from desktop_agent.core.ports import DecideRequest
from desktop_agent.planner.parsing import parse_decision
from desktop_agent.planner.prompt import TRANSPORT_PREFIX, build_messages, decision_schema

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

MAX_TOKENS = 1024
FormatLevel = Literal["json_schema", "json_object", "text"]
#: tried in this order; a server that rejects one (400/422) is asked with the next
FORMAT_LEVELS: tuple[FormatLevel, ...] = ("json_schema", "json_object", "text")
#: sent when no key is set: the client needs one, local servers ignore it
NO_KEY = "not-needed"


class ResponseFormatMemory:
    """The structured-output level each (base URL, model) accepted, so it is not re-tried.

    One is shared by every planner of the process unless a test passes its own.
    """

    def __init__(self) -> None:
        self._levels: dict[tuple[str, str], FormatLevel] = {}

    def get(self, base_url: str, model: str) -> FormatLevel:
        return self._levels.get((base_url, model), FORMAT_LEVELS[0])

    def remember(self, base_url: str, model: str, level: FormatLevel) -> None:
        self._levels[(base_url, model)] = level

    def clear(self) -> None:
        self._levels.clear()


SHARED_FORMATS = ResponseFormatMemory()


class _FormatRejected(Exception):  # noqa: N818 - internal signal
    def __init__(self, error: PlannerTransportError) -> None:
        super().__init__(str(error))
        self.error = error


def retry_after_s(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds asked by `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _server_message(error: Any) -> str:
    body = getattr(error, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str) or not message:
        message = getattr(error, "message", "") or str(error)
    flat = " ".join(str(message).split())
    return flat if len(flat) <= 200 else flat[:199] + "…"


def _cause_text(error: BaseException) -> str:
    cause = error.__cause__
    if cause is None:
        return "connection error"
    text = " ".join(str(cause).split())
    name = type(cause).__name__
    return f"{name}: {text}" if text else name


def chat_body(
    model: str, messages: list[dict[str, Any]], schema: dict[str, Any], level: FormatLevel
) -> dict[str, Any]:
    """The body of one chat-completions request (what the benchmark measures)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "temperature": 0,
        "max_tokens": MAX_TOKENS,
    }
    if level == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "decision", "schema": schema, "strict": False},
        }
    elif level == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


class OpenAIPlanner:
    """Asks an OpenAI-compatible server for the next action, one chat completion per turn.

    Transport errors (429, 5xx, connection failures) are retried with backoff,
    honouring Retry-After, at most `max_attempts` times and `max_backoff_total_s`
    seconds of waiting; a read timeout is not retried. A cancelled `decide` (a user
    stop) ends at once, during a request or a backoff.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        read_timeout_s: float = 120.0,
        connect_timeout_s: float = 5.0,
        max_attempts: int = 3,
        max_backoff_total_s: float = 30.0,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        formats: ResponseFormatMemory | None = None,
        backoff_base_s: float = 1.0,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = api_key
        self.read_timeout_s = read_timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.max_attempts = max(1, max_attempts)
        self.max_backoff_total_s = max_backoff_total_s
        self.backoff_base_s = backoff_base_s
        self.formats = formats if formats is not None else SHARED_FORMATS
        self._sleep = sleep
        self._clock = clock
        self._openai: AsyncOpenAI | None = None

    # ── the port ─────────────────────────────────────────────────────────────

    async def decide(self, request: DecideRequest) -> Decision:
        messages = build_messages(request)
        schema = decision_schema(request.tools)
        started = self._clock()
        completion = await self._complete(messages, schema)
        latency_ms = round((self._clock() - started) * 1000, 3)
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise PlannerError(f"{TRANSPORT_PREFIX} at {self.base_url} sent no answer (no choices)")
        choice = choices[0]
        text = choice.message.content or ""
        refusal = getattr(choice.message, "refusal", None)
        if not text and refusal:
            raise PlannerError(f"the model refused: {refusal}", raw=str(refusal))
        try:
            decision = parse_decision(text, request.tools)
        except PlannerError as error:
            if choice.finish_reason == "length":
                raise PlannerError(
                    f"{error} (the answer was cut off at {MAX_TOKENS} tokens)", raw=text
                ) from None
            raise
        usage = getattr(completion, "usage", None)
        token_usage = (
            TokenUsage(
                prompt_tokens=getattr(usage, "prompt_tokens", None),
                completion_tokens=getattr(usage, "completion_tokens", None),
            )
            if usage is not None
            else None
        )
        return replace(decision, usage=token_usage, latency_ms=latency_ms)

    async def aclose(self) -> None:
        if self._openai is not None:
            await self._openai.close()
            self._openai = None

    async def __aenter__(self) -> OpenAIPlanner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ── structured output ────────────────────────────────────────────────────

    async def _complete(self, messages: list[dict[str, Any]], schema: dict[str, Any]) -> Any:
        """One completion, stepping down the response formats a server rejects (remembered)."""
        level = self.formats.get(self.base_url, self.model)
        while True:
            try:
                completion = await self._send(messages, schema, level)
            except _FormatRejected as rejected:
                index = FORMAT_LEVELS.index(level)
                if index + 1 >= len(FORMAT_LEVELS):
                    raise rejected.error from None
                log.info(
                    "%s rejected response_format %s (%s); trying %s",
                    self.base_url,
                    level,
                    rejected,
                    FORMAT_LEVELS[index + 1],
                )
                level = FORMAT_LEVELS[index + 1]
                continue
            self.formats.remember(self.base_url, self.model, level)
            return completion

    # ── transport ────────────────────────────────────────────────────────────

    def _client(self) -> AsyncOpenAI:
        if self._openai is None:
            import openai  # lazily: importing it costs over a second

            self._openai = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key or NO_KEY,
                max_retries=0,
                timeout=openai.Timeout(self.read_timeout_s, connect=self.connect_timeout_s),
                # No socket outlives a turn: a planner nobody closes (a run that ends at
                # max_steps) leaks nothing. One connect per turn is small beside the model.
                default_headers={"Connection": "close"},
            )
        return self._openai

    async def _send(
        self, messages: list[dict[str, Any]], schema: dict[str, Any], level: FormatLevel
    ) -> Any:
        import openai

        client = self._client()
        kwargs = chat_body(self.model, messages, schema, level)
        at = f"{TRANSPORT_PREFIX} at {self.base_url}"
        waited = 0.0
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            try:
                return await client.chat.completions.create(**cast(Any, kwargs))
            except openai.APIStatusError as error:
                status = error.status_code
                message = _server_message(error)
                if status in (400, 422) and level != "text":
                    raise _FormatRejected(
                        PlannerTransportError(f"{at} rejected the request ({status}): {message}")
                    ) from None
                if status in (401, 403):
                    raise PlannerTransportError(
                        f"{at} refused the API key ({status}): {message}"
                    ) from None
                if status == 404:
                    raise PlannerTransportError(
                        f"{at} does not know model {self.model!r} (404): {message}"
                    ) from None
                if status != 429 and status < 500:
                    raise PlannerTransportError(
                        f"{at} rejected the request ({status}): {message}"
                    ) from None
                problem = f"answered {status}: {message}"
                retry_after = retry_after_s(error.response.headers)
            except openai.APITimeoutError as error:
                if type(error.__cause__).__name__ != "ConnectTimeout":
                    raise PlannerTransportError(
                        f"{at} did not answer within {self.read_timeout_s:g} s"
                    ) from None
                problem = f"did not accept a connection within {self.connect_timeout_s:g} s"
            except openai.APIConnectionError as error:
                problem = f"could not be reached ({_cause_text(error)})"
            except openai.OpenAIError as error:
                raise PlannerTransportError(f"{at} gave an unusable answer: {error}") from None
            if attempt >= self.max_attempts:
                raise PlannerTransportError(f"{at} {problem} (gave up after {attempt} attempts)")
            delay = self._backoff(attempt, retry_after)
            left = self.max_backoff_total_s - waited
            if delay > left:
                if retry_after is not None:
                    raise PlannerTransportError(
                        f"{at} {problem}; it asked to retry after {retry_after:g} s, more "
                        f"than the {self.max_backoff_total_s:g} s this planner waits"
                    )
                if left <= 0:
                    raise PlannerTransportError(
                        f"{at} {problem} (gave up after {attempt} attempts)"
                    )
                delay = left
            log.info("%s %s; retry %d in %.1f s", at, problem, attempt, delay)
            await self._sleep(delay)
            waited += delay

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        return float(self.backoff_base_s * 2 ** (attempt - 1))
