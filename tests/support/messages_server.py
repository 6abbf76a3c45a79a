"""A scripted Anthropic Messages API (`POST /v1/messages`) on loopback, for computer use.

The answers are transcribed from the anthropic SDK's own types (the installed package, 2.17,
anthropic/types/beta/): the envelope from beta_message.py (`BetaMessage`: id, type "message",
role "assistant", model, content, stop_reason — "end_turn", "tool_use", "refusal", … —,
stop_sequence, stop_details as beta_refusal_stop_details.py's {category, explanation, type},
usage as beta_usage.py's `BetaUsage` {input_tokens, output_tokens,
cache_creation_input_tokens, cache_read_input_tokens}); a text block from beta_text_block.py
{type "text", text, citations}; a tool_use from beta_tool_use_block.py {type "tool_use", id,
name "computer", input {"action": …}}. Errors are the API's envelope {type "error", error
{type, message}} with the status the SDK maps to its classes (anthropic/_exceptions.py:
RateLimitError 429, OverloadedError 529) and, for 429, `retry-after`.
tests/unit/planner/test_anthropic_computer.py validates every answer against
`anthropic.types.beta.BetaMessage`.

Script items: ``Message(content=[...], stop_reason=..., usage=(in, out))`` (``tool_use(...)``
and ``text(...)`` build its blocks), ``ApiError(status, message, retry_after)``, or the
ModelServer's ``Hang``. Each request body is kept in ``requests``, its headers in ``headers``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.model_server import ModelServer

_ids = itertools.count(1)
#: the error types of the API's envelope, by status (anthropic/_exceptions.py's classes)
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def tool_use(action: str, **fields: Any) -> dict[str, Any]:
    """A `computer` tool_use block whose input is `{"action": action, **fields}`."""
    return {
        "type": "tool_use",
        "id": f"toolu_{next(_ids):06d}",
        "name": "computer",
        "input": {"action": action, **fields},
    }


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words, "citations": None}


@dataclass(frozen=True)
class Message:
    """One 200 answer: its content blocks, stop reason and (input, output) tokens."""

    content: Sequence[dict[str, Any]]
    stop_reason: str | None = None
    usage: tuple[int, int] = (1200, 40)
    cache_read: int = 0
    stop_details: dict[str, Any] | None = None


@dataclass(frozen=True)
class ApiError:
    status: int
    message: str = "error"
    retry_after: str | None = None


def message_json(model: str, message: Message) -> dict[str, Any]:
    """The BetaMessage envelope around `message`."""
    stop = message.stop_reason or (
        "tool_use" if any(b.get("type") == "tool_use" for b in message.content) else "end_turn"
    )
    given, made = message.usage
    return {
        "id": f"msg_{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(message.content),
        "stop_reason": stop,
        "stop_sequence": None,
        "stop_details": message.stop_details,
        "usage": {
            "input_tokens": given,
            "output_tokens": made,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": message.cache_read,
        },
    }


def error_response(item: ApiError) -> web.Response:
    body = {
        "type": "error",
        "error": {"type": ERROR_TYPES.get(item.status, "api_error"), "message": item.message},
        "request_id": f"req_{next(_ids):06d}",
    }
    response = web.json_response(body, status=item.status)
    if item.retry_after is not None:
        response.headers["retry-after"] = item.retry_after
    return response


@dataclass
class MessagesServer(ModelServer):
    """ModelServer with `POST /v1/messages` (see the module docstring)."""

    models: Sequence[str] = ("claude-sonnet-4-5",)
    #: when the script is empty: called with each request body for its answer
    respond: Callable[[dict[str, Any]], Any] | None = None
    #: every answer sent, as sent (a test validates them against the SDK's types)
    answers: list[dict[str, Any]] = field(default_factory=list, init=False)
    #: the headers of each messages request (x-api-key, anthropic-beta, …), lower-cased names
    headers: list[dict[str, str]] = field(default_factory=list, init=False)
    #: the keys taken (None: any); another gets the API's 401 authentication_error
    api_keys: Sequence[str] | None = None

    def _refused(self, request: web.Request) -> web.Response | None:
        given = (request.headers.get("Authorization") or "").removeprefix("Bearer ")
        if self.api_keys is None or given in self.api_keys:
            return None
        return error_response(ApiError(401, "invalid x-api-key"))

    async def _models(self, request: web.Request) -> web.StreamResponse:
        return self._refused(request) or await super()._models(request)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages", self._messages)

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.headers.append({k.lower(): v for k, v in request.headers.items()})
        await self._record(body)
        if refused := self._refused(request):
            return refused
        item = self.next_item(body)
        if item is None:
            return error_response(ApiError(500, "script exhausted"))
        if isinstance(item, ApiError):
            return error_response(item)
        if not isinstance(item, Message):
            await asyncio.Event().wait()  # Hang: until the client goes away
        answer = message_json(body.get("model", ""), item)
        self.answers.append(answer)
        return web.json_response(answer)
