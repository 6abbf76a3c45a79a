"""OpenAIPlanner: the Planner port on an OpenAI-compatible chat-completions server."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from desktop_agent.core.errors import ConfigError, PlannerError, PlannerTransportError
from desktop_agent.core.models import Decision, TokenUsage
from desktop_agent.core.ports import DecideRequest
from desktop_agent.planner.grounder import ModelGrounder
from desktop_agent.planner.images import shown_image
from desktop_agent.planner.profiles import (
    AUTO,
    GROUNDING_MODES,
    GroundingMode,
    ModelProfile,
    decision_to_screenshot,
    model_space,
    resolve_profile,
)
from desktop_agent.planner.prompt import TRANSPORT_PREFIX, decision_schema
from desktop_agent.planner.registry import ChatFormat, chat_format

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)
_T = TypeVar("_T")

MAX_TOKENS = 1024
#: a whole answer must arrive within this (the client's read timeout is per read: a server
#: trickling one byte a second never trips it)
RESPONSE_DEADLINE_S = 180.0
#: a chat completion is a few KB; anything near this is not an answer
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
FormatLevel = Literal["json_schema", "json_object", "text"]
#: tried in this order; a server that rejects one (400/422) is asked with the next
FORMAT_LEVELS: tuple[FormatLevel, ...] = ("json_schema", "json_object", "text")
#: sent when no key is set: the client needs one, local servers ignore it
NO_KEY = "not-needed"


#: what to change when a server refuses a parameter (a 400 that names it)
ParamFix = Literal["no_temperature", "max_completion_tokens", "max_tokens", "no_reasoning_effort"]


class ResponseFormatMemory:
    """The structured-output level and parameter fixes each (base URL, model) needed.

    Remembered so neither is re-tried.

    One is shared by every planner of the process unless a test passes its own.
    """

    def __init__(self) -> None:
        self._levels: dict[tuple[str, str], FormatLevel] = {}
        self._fixes: dict[tuple[str, str], frozenset[ParamFix]] = {}

    def get(self, base_url: str, model: str) -> FormatLevel:
        return self._levels.get((base_url, model), FORMAT_LEVELS[0])

    def remember(self, base_url: str, model: str, level: FormatLevel) -> None:
        self._levels[(base_url, model)] = level

    def fixes(self, base_url: str, model: str) -> frozenset[ParamFix]:
        """The request parameters this server refused for this model, fixed so (see `chat_body`)."""
        return self._fixes.get((base_url, model), frozenset())

    def add_fix(self, base_url: str, model: str, fix: ParamFix) -> None:
        self._fixes[(base_url, model)] = self.fixes(base_url, model) | {fix}

    def clear(self) -> None:
        self._levels.clear()
        self._fixes.clear()


SHARED_FORMATS = ResponseFormatMemory()


class _FormatRejected(Exception):  # noqa: N818 - internal signal
    def __init__(self, error: PlannerTransportError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True, slots=True)
class Fix:
    """The server refused a parameter the request sent: send it fixed (remembered)."""

    fix: ParamFix


@dataclass(frozen=True, slots=True)
class Downgrade:
    """The server refused the response format: step down to the next one."""

    error: PlannerTransportError


@dataclass(frozen=True, slots=True)
class Retry:
    """Worth another attempt (a 429 or 5xx, no connection): after `after` s if it said."""

    problem: str
    after: float | None = None


@dataclass(frozen=True, slots=True)
class Fail:
    """No attempt will do better: say why."""

    error: PlannerTransportError


Outcome = Fix | Downgrade | Retry | Fail


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


class ErrorAnswer(Exception):  # noqa: N818 - the server's answer, not our failure
    """A 4xx/5xx answer, its body read through the same size cap as a completion.

    The openai SDK reads an error body whole before it raises APIStatusError (a server
    sending 64 MB would have them held against a 4 MB cap), so the planner's HTTP client
    reads it first, in a response hook, and raises this instead; the SDK never sees it.
    """

    def __init__(self, status_code: int, headers: Mapping[str, str], text: str) -> None:
        super().__init__(f"{status_code}: {text}")
        self.status_code = status_code
        self.headers = headers
        self.message = text


async def read_error_answer(response: Any, cap: int) -> None:
    """An httpx response hook: a 4xx/5xx answer raises ErrorAnswer, with at most `cap` bytes
    of its body read (none when Content-Length says it is more)."""
    if response.status_code < 400:
        return
    length = response.headers.get("content-length", "")
    body: bytes | None = None
    try:
        if not (length.isdigit() and int(length) > cap):
            body = await read_body(response, cap)
    except ValueError:  # an encoding we did not ask for: the message is not worth it
        body = b""
    finally:
        await response.aclose()
    text = _error_text(body or b"", body is None, cap)
    raise ErrorAnswer(response.status_code, response.headers, text)


#: what the planner's client accepts: encodings it inflates itself, `cap` bytes at most
ACCEPT_ENCODING = "gzip, deflate"


async def read_body(response: Any, cap: int) -> bytes | None:
    """The body of an httpx response decoded, or None when it is more than `cap` bytes.

    Read raw and inflated here, never more than the cap at a time: httpx's own decoding
    inflates each network chunk whole, so a small gzip "bomb" could still expand to GBs
    before any count saw it. ValueError for an encoding other than gzip or deflate.
    """
    inflater = _inflater(response.headers.get("content-encoding", ""))
    body = bytearray()
    async for chunk in response.aiter_raw():
        if inflater is None:
            body += chunk
        else:
            body += inflater.decompress(chunk, cap + 1 - len(body))
            if inflater.unconsumed_tail:
                return None  # it stopped at the cap with input left
        if len(body) > cap:
            return None
    return bytes(body)


def _inflater(encoding: str) -> Any:
    """A zlib decompressor for a Content-Encoding, None for none; ValueError otherwise."""
    import zlib

    name = encoding.strip().lower()
    if name in ("", "identity"):
        return None
    if name in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if name == "deflate":
        return zlib.decompressobj()
    raise ValueError(f"an answer encoded as {encoding!r}, which was not asked for")


def _error_text(body: bytes, cut: bool, cap: int) -> str:
    """The server's message: OpenAI-style `{"error": {"message": ...}}`, else the text."""
    message: Any = None
    if not cut:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict):
            inner = data.get("error", data)
            message = inner.get("message") if isinstance(inner, dict) else inner
    if not isinstance(message, str) or not message:
        message = body[:400].decode("utf-8", "replace")
    flat = " ".join(message.split())
    if cut:
        flat = f"{flat[:150]}… (an error body over the {cap:,} bytes an answer may take)".lstrip()
    return flat if len(flat) <= 200 else flat[:199] + "…"


def _cause_text(error: BaseException) -> str:
    cause = error.__cause__
    if cause is None:
        return "connection error"
    text = " ".join(str(cause).split())
    name = type(cause).__name__
    return f"{name}: {text}" if text else name


def chat_body(
    model: str,
    messages: list[dict[str, Any]],
    schema: dict[str, Any],
    level: FormatLevel,
    profile: ModelProfile | None = None,
    fixes: frozenset[ParamFix] = frozenset(),
) -> dict[str, Any]:
    """The body of one chat-completions request (what the benchmark measures)."""
    profile = profile or resolve_profile(model)
    body: dict[str, Any] = {"model": model, "messages": messages}
    if profile.temperature and "no_temperature" not in fixes:
        body["temperature"] = 0
    token_param = profile.token_param
    if "max_completion_tokens" in fixes:
        token_param = "max_completion_tokens"
    elif "max_tokens" in fixes:
        token_param = "max_tokens"
    body[token_param] = profile.max_output_tokens
    if profile.reasoning_effort and "no_reasoning_effort" not in fixes:
        body["reasoning_effort"] = profile.reasoning_effort
    if level == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "decision", "schema": schema, "strict": False},
        }
    elif level == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


def param_fix(message: str, body: Mapping[str, Any]) -> ParamFix | None:
    """The fix for a 400 that names a parameter the request sent, else None.

    OpenAI's reasoning models answer e.g. "Unsupported parameter: 'max_tokens' is not supported
    with this model. Use 'max_completion_tokens' instead." or "Unsupported value: 'temperature'
    does not support 0 with this model": those are not a refused response_format.
    """
    text = message.lower()
    if "max_tokens" in body and "max_tokens" in text.replace("max_completion_tokens", ""):
        return "max_completion_tokens"
    if "temperature" in body and "temperature" in text:
        return "no_temperature"
    if "reasoning_effort" in body and ("reasoning_effort" in text or "reasoning.effort" in text):
        return "no_reasoning_effort"
    if "max_completion_tokens" in body and "max_completion_tokens" in text:
        return "max_tokens"
    return None


@dataclass(frozen=True, slots=True)
class Completion:
    """The parts of a chat completion the planner reads (parsed from the capped body)."""

    text: str
    refusal: str | None
    finish_reason: str | None
    usage: TokenUsage | None
    has_choice: bool


def usage_from_json(usage: Any, prompt_key: str, completion_key: str) -> TokenUsage | None:
    """A body's usage object → TokenUsage under the server's key names (None without one;
    a count that is not an integer is unknown)."""
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get(prompt_key), usage.get(completion_key)
    return TokenUsage(
        prompt_tokens=prompt if isinstance(prompt, int) else None,
        completion_tokens=completion if isinstance(completion, int) else None,
    )


def completion_from_json(data: Any) -> Completion:
    """A chat-completions response body → Completion (tolerant of missing fields)."""
    if not isinstance(data, dict):
        raise TypeError("the body is not a JSON object")
    choices = data.get("choices") or []
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    message = message if isinstance(message, dict) else {}
    content = message.get("content")
    if isinstance(content, list):  # some servers send content parts
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    token_usage = usage_from_json(data.get("usage"), "prompt_tokens", "completion_tokens")
    refusal = message.get("refusal")
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    return Completion(
        text=content if isinstance(content, str) else "",
        refusal=refusal if isinstance(refusal, str) and refusal else None,
        finish_reason=finish if isinstance(finish, str) else None,
        usage=token_usage,
        has_choice=choice is not None,
    )


class OpenAIPlanner:
    """Asks an OpenAI-compatible server for the next action, one chat completion per turn.

    The model's profile (planner/profiles.py) decides the request parameters, the chat format
    (its backend: planner/backends/) and the coordinate space; the Decision returned is always
    in screenshot pixels.
    Transport errors (429, 5xx, connection failures) are retried with backoff,
    honouring Retry-After, at most `max_attempts` times and `max_backoff_total_s`
    seconds of waiting; a read timeout is not retried. A response must arrive whole within
    `response_deadline_s` and be at most `max_response_bytes`. A cancelled `decide` (a user
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
        profile: str = AUTO,
        coordinates: str = AUTO,
        response_deadline_s: float | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        grounding: str = "off",
        grounder: OpenAIPlanner | None = None,
        grounder_zoom: bool = True,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.profile = resolve_profile(model, profile, coordinates, base_url)
        #: the prompt and answer grammar this model is spoken to in (its profile's backend)
        self.format = self._chat_format()
        self._api_key = api_key
        self.read_timeout_s = read_timeout_s
        self.connect_timeout_s = connect_timeout_s
        if response_deadline_s is None:
            # by default never shorter than a read: a slow model answering at once gets through
            response_deadline_s = max(RESPONSE_DEADLINE_S, read_timeout_s * 1.5)
        self.response_deadline_s = response_deadline_s
        self.max_response_bytes = max_response_bytes
        self.max_attempts = max(1, max_attempts)
        self.max_backoff_total_s = max_backoff_total_s
        self.backoff_base_s = backoff_base_s
        self.formats = formats if formats is not None else SHARED_FORMATS
        self._sleep = sleep
        self._clock = clock
        self._openai: AsyncOpenAI | None = None
        self._grounding_model = grounder
        #: the run's Grounder (core port) when its points are refined, else None
        self.grounder: ModelGrounder | None = self._make_grounder(grounding, grounder_zoom)

    def _chat_format(self) -> ChatFormat:
        """The chat format of the profile's backend (a native API's planner names its own)."""
        return chat_format(self.profile.backend)

    def _make_grounder(self, grounding: str, zoom: bool) -> ModelGrounder | None:
        mode = self.profile.grounding if grounding == AUTO else grounding
        if mode not in GROUNDING_MODES:
            raise ConfigError(
                f"unknown grounding {grounding!r} (one of: auto, {', '.join(GROUNDING_MODES)})"
            )
        if mode == "off":
            return None
        if mode == "grounder":
            if self._grounding_model is None:
                raise ConfigError(
                    "grounding = grounder needs a grounding model: set grounder_model (and "
                    "grounder_base_url) in the settings, or --grounder-model"
                )
            return ModelGrounder(
                mode="grounder", locate_with=self._grounding_model, zoom=zoom, clock=self._clock
            )
        return ModelGrounder(mode=cast(GroundingMode, mode), zoom_with=self, clock=self._clock)

    # ── the port ─────────────────────────────────────────────────────────────

    async def decide(self, request: DecideRequest) -> Decision:
        decision = await self.decide_in_model_space(request)
        observation = request.observation
        return decision_to_screenshot(decision, self.profile, observation.width, observation.height)

    async def decide_in_model_space(self, request: DecideRequest) -> Decision:
        """The model's Decision with its points as the model gave them (calibration reads these)."""
        observation = request.observation
        image = await shown_image(observation, self.profile)
        space = model_space(self.profile, observation.width, observation.height)
        messages = self.format.messages(request, image.url, space)
        schema = decision_schema(request.tools)
        started = self._clock()
        completion = await self._complete(messages, schema)
        latency_ms = round((self._clock() - started) * 1000, 3)
        if not completion.has_choice:
            raise PlannerError(f"{TRANSPORT_PREFIX} at {self.base_url} sent no answer (no choices)")
        text = completion.text
        if not text and completion.refusal:
            raise PlannerError(f"the model refused: {completion.refusal}", raw=completion.refusal)
        try:
            decision = self.format.parse(text, request.tools)
        except RecursionError:
            # any format's reader (json, ast) recurses per level of a deeply nested answer
            raise PlannerError(
                "the answer nests too deeply to read; answer in the format asked", raw=text
            ) from None
        except PlannerError as error:
            if completion.finish_reason == "length":
                limit = self.profile.max_output_tokens
                raise PlannerError(
                    f"{error} (the answer was cut off at {limit} tokens)", raw=text
                ) from None
            raise
        return replace(decision, usage=completion.usage, latency_ms=latency_ms)

    async def complete_text(self, messages: list[dict[str, Any]]) -> Completion:
        """One plain completion of `messages` (a grounding question): the same transport,
        retries and limits as a turn, no response_format; PlannerError when none came."""
        completion = await self._send(messages, {}, "text")
        if not completion.has_choice:
            raise PlannerTransportError(
                f"{TRANSPORT_PREFIX} at {self.base_url} sent no answer (no choices)"
            )
        if not completion.text and completion.refusal:
            raise PlannerError(f"the model refused: {completion.refusal}", raw=completion.refusal)
        return completion

    async def aclose(self) -> None:
        if self._openai is not None:
            await self._openai.close()
            self._openai = None
        if self._grounding_model is not None:
            await self._grounding_model.aclose()

    async def __aenter__(self) -> OpenAIPlanner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ── structured output ────────────────────────────────────────────────────

    async def _complete(self, messages: list[dict[str, Any]], schema: dict[str, Any]) -> Completion:
        """One completion, stepping down the response formats a server rejects (remembered)."""
        # a format of the model's own text asks for no JSON at all
        structured = self.format.structured
        level = self.formats.get(self.base_url, self.model) if structured else "text"
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
            if structured:
                self.formats.remember(self.base_url, self.model, level)
            return completion

    # ── transport ────────────────────────────────────────────────────────────

    def _client(self) -> AsyncOpenAI:
        if self._openai is None:
            import openai  # lazily: importing it costs over a second

            cap = self.max_response_bytes

            async def bounded_errors(response: Any) -> None:
                await read_error_answer(response, cap)

            self._openai = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key or NO_KEY,
                max_retries=0,
                timeout=openai.Timeout(self.read_timeout_s, connect=self.connect_timeout_s),
                # No socket outlives a turn: a planner nobody closes (a run that ends at
                # max_steps) leaks nothing. One connect per turn is small beside the model.
                # only encodings read_body inflates within the cap (httpx would also ask
                # for br and zstd when their packages are installed)
                default_headers={"Connection": "close", "Accept-Encoding": ACCEPT_ENCODING},
                http_client=openai.DefaultAsyncHttpxClient(
                    event_hooks={"response": [bounded_errors]}
                ),
            )
        return self._openai

    async def _read_capped(self, client: AsyncOpenAI, kwargs: dict[str, Any]) -> Completion:
        """One chat completion, its body read through `read_json`'s cap."""
        # the body goes as it is, as the request's extra body (it takes precedence over the
        # parameters): openai's transform of typed parameters walks every message and the
        # whole schema each turn (1.8 ms) to change nothing in a body of plain JSON
        params = {key: value for key, value in kwargs.items() if key != "model"}
        opened = client.chat.completions.with_streaming_response.create(
            model=kwargs["model"], messages=[], extra_body=params
        )
        return await self.read_json(opened, completion_from_json)

    async def read_json(self, opened: Any, parse: Callable[[Any], _T]) -> _T:
        """The JSON body of a streamed SDK response (`with_streaming_response.create(…)`),
        at most `max_response_bytes` of it, read by `parse` (TypeError: not an answer).

        The body is streamed and counted, so a 100 MB answer is refused after the first
        few MB instead of being held in memory whole.
        """
        at = f"{TRANSPORT_PREFIX} at {self.base_url}"
        cap = self.max_response_bytes
        async with opened as response:
            length = response.headers.get("content-length")
            if length and length.isdigit() and int(length) > cap:
                raise PlannerTransportError(
                    f"{at} sent an answer of {int(length):,} bytes, more than the "
                    f"{cap:,} bytes a turn may take"
                )
            try:
                body = await read_body(response.http_response, cap)
            except ValueError as error:
                raise PlannerTransportError(f"{at} gave an unusable answer: {error}") from None
            except Exception as error:  # noqa: BLE001 - httpx or httpx2 read errors, by version
                if "Timeout" in type(error).__name__:
                    raise PlannerTransportError(
                        f"{at} did not answer within {self.read_timeout_s:g} s"
                    ) from None
                raise PlannerTransportError(
                    f"{at} broke off its answer ({type(error).__name__}: {error})"
                ) from None
            if body is None:
                raise PlannerTransportError(
                    f"{at} sent more than the {cap:,} bytes a turn may take"
                )
        try:
            return parse(json.loads(body))
        except RecursionError:
            raise PlannerTransportError(f"{at} gave an answer nested too deeply") from None
        except (ValueError, TypeError) as error:
            raise PlannerTransportError(f"{at} gave an unusable answer: {error}") from None

    async def _send(
        self, messages: list[dict[str, Any]], schema: dict[str, Any], level: FormatLevel
    ) -> Completion:
        def body(fixes: frozenset[ParamFix]) -> dict[str, Any]:
            return chat_body(self.model, messages, schema, level, self.profile, fixes)

        return await self.exchange(body, self._read_capped, level)

    async def exchange(
        self,
        body: Callable[[frozenset[ParamFix]], dict[str, Any]],
        read: Callable[[AsyncOpenAI, dict[str, Any]], Awaitable[_T]],
        level: FormatLevel = "text",
    ) -> _T:
        """One request (`body` made with the parameter fixes this server needed, `read` sends
        it), with the retries, backoff and deadline of a turn; PlannerTransportError when
        none answered."""
        import openai

        fixes = self.formats.fixes(self.base_url, self.model)
        kwargs = body(fixes)
        at = f"{TRANSPORT_PREFIX} at {self.base_url}"
        # made before the deadline starts: the first turn's `import openai` (over a second,
        # several on a loaded machine) is this process's time, not the server's
        client = self._client()
        waited = 0.0
        attempt = 0
        while True:
            attempt += 1
            try:
                async with asyncio.timeout(self.response_deadline_s):
                    return await read(client, kwargs)
            except TimeoutError:
                raise PlannerTransportError(
                    f"{at} did not finish its answer within {self.response_deadline_s:g} s"
                ) from None
            except (ErrorAnswer, openai.OpenAIError) as error:
                outcome = self._classify(error, at, kwargs, fixes, level)
            if isinstance(outcome, Fix):
                # a refused parameter, not a refused response_format: fix it and ask again
                log.info("%s refused a parameter; retrying with %s", at, outcome.fix)
                self.formats.add_fix(self.base_url, self.model, outcome.fix)
                fixes = self.formats.fixes(self.base_url, self.model)
                kwargs = body(fixes)
                attempt -= 1
            elif isinstance(outcome, Downgrade):
                raise _FormatRejected(outcome.error) from None
            elif isinstance(outcome, Fail):
                raise outcome.error from None
            else:
                delay = self._retry_delay(at, outcome, attempt, waited)
                log.info("%s %s; retry %d in %.1f s", at, outcome.problem, attempt, delay)
                await self._sleep(delay)
                waited += delay

    def _classify(
        self,
        error: Exception,
        at: str,
        kwargs: Mapping[str, Any],
        fixes: frozenset[ParamFix],
        level: FormatLevel,
    ) -> Outcome:
        """What to do about one failed request (httpx's way: the error is classified once,
        the retry decision follows from its class)."""
        import openai

        if isinstance(error, ErrorAnswer):
            status, message = error.status_code, error.message
            fix = param_fix(message, kwargs) if status in (400, 422) else None
            if fix is not None and fix not in fixes:
                return Fix(fix)
            if status in (400, 422) and level != "text" and fix is None:
                return Downgrade(
                    PlannerTransportError(f"{at} rejected the request ({status}): {message}")
                )
            if status in (401, 403):
                return Fail(
                    PlannerTransportError(f"{at} refused the API key ({status}): {message}")
                )
            if status == 404:
                return Fail(
                    PlannerTransportError(
                        f"{at} does not know model {self.model!r} (404): {message}"
                    )
                )
            if status != 429 and status < 500:
                return Fail(
                    PlannerTransportError(f"{at} rejected the request ({status}): {message}")
                )
            return Retry(f"answered {status}: {message}", retry_after_s(error.headers))
        if isinstance(error, openai.APITimeoutError):
            if type(error.__cause__).__name__ != "ConnectTimeout":
                return Fail(
                    PlannerTransportError(f"{at} did not answer within {self.read_timeout_s:g} s")
                )
            return Retry(f"did not accept a connection within {self.connect_timeout_s:g} s")
        if isinstance(error, openai.APIConnectionError):
            return Retry(f"could not be reached ({_cause_text(error)})")
        return Fail(PlannerTransportError(f"{at} gave an unusable answer: {error}"))

    def _retry_delay(self, at: str, retry: Retry, attempt: int, waited: float) -> float:
        """How long to wait before the next attempt; PlannerTransportError when there is
        none (attempts or the backoff budget used up, or the server asks for longer)."""
        problem, retry_after = retry.problem, retry.after
        if attempt >= self.max_attempts:
            raise PlannerTransportError(f"{at} {problem} (gave up after {attempt} attempts)")
        delay = self._backoff(attempt, retry_after)
        left = self.max_backoff_total_s - waited
        if delay <= left:
            return delay
        if retry_after is not None:
            raise PlannerTransportError(
                f"{at} {problem}; it asked to retry after {retry_after:g} s, more "
                f"than the {self.max_backoff_total_s:g} s this planner waits"
            )
        if left <= 0:
            raise PlannerTransportError(f"{at} {problem} (gave up after {attempt} attempts)")
        return left

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        return float(self.backoff_base_s * 2 ** (attempt - 1))
