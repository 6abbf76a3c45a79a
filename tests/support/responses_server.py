"""A scripted OpenAI Responses API (`POST /v1/responses`) on loopback, for the computer tool.

The answers are transcribed from the openai SDK's own types (the installed package,
openai/types/responses/): the envelope from response.py (`Response`: id, object "response",
created_at, model, output, parallel_tool_calls, tool_choice, tools, status, usage as
response_usage.py's `ResponseUsage` with its required `input_tokens_details`
{cached_tokens, cache_write_tokens} and `output_tokens_details` {reasoning_tokens}); a
`computer_call` from response_computer_tool_call.py (id, call_id, `pending_safety_checks`
[{id, code, message}], status, type, and `actions` (computer_action_list.py, the GA tool's
batch) or `action` (the legacy tool's one)); a `message` from response_output_message.py
with response_output_text.py's `output_text` {text, annotations} or
response_output_refusal.py's `refusal`; a `reasoning` item from response_reasoning_item.py
(summary [{text, type "summary_text"}], encrypted_content). tests/unit/planner/
test_openai_computer.py validates every answer against `openai.types.responses.Response`.

Script items: ``Turn(output=[...], usage=(in, out))`` (``computer_call(...)``, ``message(...)``,
``refusal(...)``, ``reasoning(...)`` build its items), or the ModelServer's ``HttpError``
(with ``retry_after``: OpenAI's 429 sends ``retry-after``) and ``Hang``. Each request body is
kept in ``requests`` (and ``requests_file``), as the chat server's are.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.model_server import HttpError, ModelServer, _error, http_error

_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


def computer_call(
    actions: Sequence[dict[str, Any]] | None = None,
    *,
    action: dict[str, Any] | None = None,
    checks: Iterable[tuple[str, str]] = (),
    call_id: str | None = None,
) -> dict[str, Any]:
    """A `computer_call` item: the GA batch (`actions`) or the legacy single `action`;
    `checks` are (code, message) pairs of pending safety checks."""
    item: dict[str, Any] = {
        "id": _id("cu"),
        "type": "computer_call",
        "call_id": call_id or _id("call"),
        "pending_safety_checks": [
            {"id": _id("cu_sc"), "code": code, "message": message} for code, message in checks
        ],
        "status": "completed",
    }
    if actions is not None:
        item["actions"] = list(actions)
    if action is not None:
        item["action"] = action
    return item


def message(text: str) -> dict[str, Any]:
    return {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def refusal(text: str) -> dict[str, Any]:
    return {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": text}],
    }


def reasoning(summary: str) -> dict[str, Any]:
    return {
        "id": _id("rs"),
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": summary}],
        "encrypted_content": "opaque-" + summary[:8],
    }


@dataclass(frozen=True)
class Turn:
    """One 200 answer: its output items and (input, output) tokens."""

    output: Sequence[dict[str, Any]]
    usage: tuple[int, int] | None = (1000, 50)


def response_json(model: str, body: dict[str, Any], turn: Turn) -> dict[str, Any]:
    """The Responses envelope around `turn` (fields as response.py's `Response`)."""
    data: dict[str, Any] = {
        "id": _id("resp"),
        "object": "response",
        "created_at": time.time(),
        "model": model,
        "output": list(turn.output),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": body.get("tools", []),
        "status": "completed",
        "previous_response_id": body.get("previous_response_id"),
        "truncation": body.get("truncation"),
        "store": body.get("store", True),
    }
    if turn.usage is not None:
        given, made = turn.usage
        data["usage"] = {
            "input_tokens": given,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": made,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": given + made,
        }
    return data


@dataclass
class ResponsesServer(ModelServer):
    """ModelServer with `POST /v1/responses` (see the module docstring)."""

    models: Sequence[str] = ("computer-use-preview",)
    #: when the script is empty: called with each request body for its answer
    respond: Callable[[dict[str, Any]], Any] | None = None
    #: every answer sent, as sent (a test validates them against the SDK's types)
    answers: list[dict[str, Any]] = field(default_factory=list, init=False)

    #: the keys the server takes: another gets OpenAI's 401 (None: any key, or none)
    api_keys: Sequence[str] | None = None

    def _refused(self, request: web.Request) -> web.Response | None:
        """OpenAI's answer to a wrong key: 401, code invalid_api_key."""
        given = (request.headers.get("Authorization") or "").removeprefix("Bearer ")
        if self.api_keys is None or given in self.api_keys:
            return None
        return web.json_response(
            {
                "error": {
                    "message": "Incorrect API key provided.",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
            status=401,
        )

    async def _models(self, request: web.Request) -> web.StreamResponse:
        return self._refused(request) or await super()._models(request)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/responses", self._responses)

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.authorizations.append(request.headers.get("Authorization"))
        await self._record(body)
        if refused := self._refused(request):
            return refused
        item = self.next_item(body)
        if item is None:
            return _error(500, "script exhausted")
        if isinstance(item, HttpError):
            return http_error(item)
        if not isinstance(item, Turn):
            await asyncio.Event().wait()  # Hang: until the client goes away
        answer = response_json(body.get("model", ""), body, item)
        self.answers.append(answer)
        return web.json_response(answer)
