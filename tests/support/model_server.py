"""A scripted OpenAI-compatible model server on aiohttp, for tests on loopback.

It speaks what the planner talks to, and nothing more:

- ``POST /v1/chat/completions`` answers from a script of replies, in order;
- ``GET /v1/models`` lists the model names it knows (what ``check_reachable`` asks);
- ``POST /api/show`` answers like Ollama (``{"capabilities": [...]}``) when ``ollama`` is set,
  and ``GET /api/tags`` lists those models as Ollama does (``{"models": [{"name", "model",
  "details"}]}``: ollama/ollama api/types.go, ``ListResponse`` / ``ListModelResponse``;
  ``ShowResponse`` carries ``capabilities`` since Ollama 0.6); without ``ollama`` both 404;
- ``GET /api/v0/models`` answers like LM Studio (``{"data": [{"id", "type"}]}``) when
  ``lmstudio`` is set.

Every request's method, path and ``Authorization`` header is kept in ``heard`` (a probe
must send no key); a request whose client went away before its answer (its connection
closed: aiohttp cancels the handler) is kept in ``gone``; ``hold(path, ...)`` keeps the
requests to those paths unanswered until ``release()`` (a check the test catches in flight);
every request body is recorded (``requests`` for chat completions,
``show_requests``, ``lmstudio_requests``), and a test can wait on the count with
``wait_requests(n)``.

Script items (each a frozen dataclass, or the JSON form used by ``--script``):

The ``Authorization`` header of each chat request is kept in ``authorizations``.

``Reply(content, usage=(prompt, completion) | None, delay_s=0, finish_reason="stop")``
    a 200 completion; a dict ``content`` is sent as its JSON text. ``delay_s`` waits
    before answering; the wait ends at once if the client goes away or the server stops.
    JSON: ``{"content": "..."}`` or ``{"json": {...}}``, plus ``usage``, ``delay_s``.
``HttpError(status, message="...", retry_after=None)``
    an OpenAI-style error body ``{"error": {"message", "type"}}`` with that status
    and, when given, a ``Retry-After`` header (seconds as text).
    JSON: ``{"status": 429, "message": "...", "retry_after": "1"}``.
``Hang()``
    never answers: the handler waits until the client cancels or the server stops.
    JSON: ``{"hang": true}``.
``Disconnect()``
    drops the connection without an answer. JSON: ``{"disconnect": true}``.
``Trickle(reply, interval_s=0.05, for_s=3.0)``
    a 200 whose body arrives one space (JSON whitespace) every ``interval_s`` for ``for_s``
    seconds, then the reply: every read is quick, the whole answer is slow.
    JSON: ``{"trickle": {...reply...}, "interval_s": 0.05, "for_s": 3}``.
``Oversized(reply, size=100 MB, chunked=False)``
    a 200 whose body is ``size`` bytes: spaces (sent 1 MB at a time), then the reply. With
    ``chunked`` there is no Content-Length, so only counting the bytes can stop it. With
    ``status`` (e.g. 500) it is an error answer instead, its OpenAI-style error body after
    the padding. The bytes written so far are counted in the server's ``padding_sent``.
    JSON: ``{"oversized": {...reply...}, "size": 104857600, "chunked": false}``.

When the script runs out, ``respond(body)`` answers when set (a model that reacts to
the request it is shown), else ``then`` (a Reply, HttpError, ...); without ``then``
it answers 500 "script exhausted".

``reject_params`` maps a body parameter to an error message: a request that carries it is
refused with 400 and that message (before the script is consumed), as OpenAI's reasoning
models refuse ``temperature`` and ``max_tokens``. ``OPENAI_REASONING_REJECTS`` holds
OpenAI's own messages.

``reject_formats`` makes the server refuse (400, before the script is consumed) a
request whose ``response_format.type`` is in it, as real servers do: ``{"json_schema"}``
for a server without structured output, ``{"json_schema", "json_object"}`` for one
that only does plain text, ``{"json_object"}`` for one like LM Studio.

In an async test::

    async with ModelServer([Reply({"action": "done", "message": "ok"})]) as server:
        planner = OpenAIPlanner(base_url=server.base_url, model="qwen2.5vl", api_key=None)
        ...
        assert server.requests[0]["temperature"] == 0

From synchronous code (a CLI run in a subprocess, for instance), ``serve_in_thread``
runs one on its own event loop in a thread::

    with serve_in_thread(ModelServer(then=Reply({"action": "done"}))) as server:
        subprocess.run([..., "--base-url", server.base_url])

Or as a process of its own (``--script`` is a JSON file: ``{"replies": [...],
"then": {...}, "reject_formats": [...], "ollama": {"model": ["completion", "vision"]},
"lmstudio": [{"id": "m", "type": "vlm"}], "models": ["m"]}``)::

    python -m tests.support.model_server --script s.json --port-file port.txt \
        [--port 0] [--requests-file requests.jsonl]

It prints the port on stdout (one line, flushed), writes it to ``--port-file`` when
given, appends each chat request body as one JSON line to ``--requests-file``, and
runs until SIGTERM or SIGINT (on Windows: until Ctrl+C or the process is ended;
docs/windows-checklist.md drives the app's tools with it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TypeVar

from aiohttp import web


@dataclass(frozen=True)
class Reply:
    content: str | dict[str, Any]
    usage: tuple[int, int] | None = (100, 20)
    delay_s: float = 0.0
    finish_reason: str = "stop"


@dataclass(frozen=True)
class HttpError:
    status: int
    message: str = "server error"
    retry_after: str | None = None


@dataclass(frozen=True)
class Hang:
    pass


@dataclass(frozen=True)
class Disconnect:
    pass


@dataclass(frozen=True)
class Trickle:
    reply: Reply
    interval_s: float = 0.05
    for_s: float = 3.0


@dataclass(frozen=True)
class Oversized:
    reply: Reply
    size: int = 100 * 1024 * 1024
    chunked: bool = False
    status: int = 200


ScriptItem = Reply | HttpError | Hang | Disconnect | Trickle | Oversized

#: what api.openai.com answers a reasoning model (gpt-5, o3, o4-mini) sent these parameters
OPENAI_REASONING_REJECTS: dict[str, str] = {
    "max_tokens": "Unsupported parameter: 'max_tokens' is not supported with this model. "
    "Use 'max_completion_tokens' instead.",
    "temperature": "Unsupported value: 'temperature' does not support 0 with this model. "
    "Only the default (1) value is supported.",
}


def item_from_json(data: Mapping[str, Any]) -> ScriptItem:
    """A script item from its JSON form (see the module docstring)."""
    if data.get("hang"):
        return Hang()
    if data.get("disconnect"):
        return Disconnect()
    if "trickle" in data:
        inner = item_from_json(data["trickle"])
        assert isinstance(inner, Reply)
        return Trickle(inner, float(data.get("interval_s", 0.05)), float(data.get("for_s", 3.0)))
    if "oversized" in data:
        inner = item_from_json(data["oversized"])
        assert isinstance(inner, Reply)
        size = int(data.get("size", 100 * 1024 * 1024))
        return Oversized(inner, size, bool(data.get("chunked")), int(data.get("status", 200)))
    if "status" in data:
        retry = data.get("retry_after")
        return HttpError(
            int(data["status"]),
            str(data.get("message", "server error")),
            None if retry is None else str(retry),
        )
    usage = data.get("usage", (100, 20))
    content = data["json"] if "json" in data else data.get("content", "")
    return Reply(
        content=content,
        usage=None if usage is None else (int(usage[0]), int(usage[1])),
        delay_s=float(data.get("delay_s", 0.0)),
        finish_reason=str(data.get("finish_reason", "stop")),
    )


@dataclass
class ModelServer:
    """The server; see the module docstring. Start it with ``async with`` or ``start()``."""

    #: ScriptItems; a server that speaks more takes its own items too (a MessagesServer's
    #: Message and ApiError, a ResponsesServer's Turn), hence object (`then` and `add` too)
    script: Iterable[object] = ()
    then: object | None = None
    reject_formats: frozenset[str] | set[str] = frozenset()
    #: body parameter → the 400 message a request carrying it gets (see the module docstring)
    reject_params: Mapping[str, str] = field(default_factory=dict)
    #: Ollama's /api/show: model name → capabilities; None: the route answers 404
    ollama: Mapping[str, Sequence[str]] | None = None
    #: LM Studio's /api/v0/models entries ({"id", "type", ...}); None: the route answers 404
    lmstudio: Sequence[Mapping[str, Any]] | None = None
    #: names listed by GET /v1/models
    models: Sequence[str] = ("qwen2.5vl",)
    #: GET /v1/models and /api/show never answer: a server still checking, as slow as it gets
    hang_checks: bool = False
    host: str = "127.0.0.1"
    port: int = 0
    requests_file: Path | None = None
    #: when the script is empty, called with each request body for the reply (before `then`):
    #: a model that reacts to what it is shown, for end-to-end scenarios
    respond: Callable[[dict[str, Any]], ScriptItem] | None = None

    requests: list[dict[str, Any]] = field(default_factory=list, init=False)
    #: the Authorization header of each chat request (None when absent)
    authorizations: list[str | None] = field(default_factory=list, init=False)
    show_requests: list[dict[str, Any]] = field(default_factory=list, init=False)
    lmstudio_requests: int = field(default=0, init=False)
    models_requests: int = field(default=0, init=False)
    #: bytes of Oversized padding written so far (a client that stops reading stops it)
    padding_sent: int = field(default=0, init=False)
    #: (method, path, Authorization header or None) of every request, in order
    heard: list[tuple[str, str, str | None]] = field(default_factory=list, init=False)
    #: the paths of the requests whose client closed the connection before the answer
    gone: list[str] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._queue: list[object] = list(self.script)
        self._runner: web.AppRunner | None = None
        self._changed: asyncio.Condition | None = None
        self._held: set[str] = set()
        self._released: asyncio.Event | None = None

    # ── life ────────────────────────────────────────────────────────────────

    @property
    def url(self) -> str:
        """The server's root, e.g. http://127.0.0.1:41234 (Ollama and LM Studio routes)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, with /v1."""
        return f"{self.url}/v1"

    async def start(self) -> Self:
        self._changed = asyncio.Condition()
        app = web.Application(middlewares=[self._hear])
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/api/tags", self._tags)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/api/show", self._show)
        app.router.add_get("/api/v0/models", self._lmstudio)
        self.add_routes(app)
        # A cancelled client request cancels its handler (a Reply's delay, a Hang).
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=0.1
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    def add_routes(self, app: web.Application) -> None:
        """More routes of a server that speaks more (tests/support/responses_server.py)."""

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def add(self, *items: object) -> None:
        """Append replies to the script (from the server's own loop)."""
        self._queue.extend(items)

    def hold(self, *paths: str) -> None:
        """From now on the requests to `paths` wait unanswered until `release` (from the
        server's own loop); heard as they come."""
        self._held.update(paths)
        self._released = asyncio.Event()

    def release(self) -> None:
        """Answer the held requests (and the ones to come) as usual."""
        self._held.clear()
        if self._released is not None:
            self._released.set()

    @property
    def remaining(self) -> int:
        return len(self._queue)

    async def wait_requests(self, count: int, within_s: float = 10.0) -> None:
        """Wait until `count` chat requests have arrived (TimeoutError after `within_s`)."""
        assert self._changed is not None, "the server is not started"
        changed = self._changed

        async def reached() -> None:
            async with changed:
                await changed.wait_for(lambda: len(self.requests) >= count)

        await asyncio.wait_for(reached(), within_s)

    # ── routes ──────────────────────────────────────────────────────────────

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.authorizations.append(request.headers.get("Authorization"))
        await self._record(body)
        for param, message in self.reject_params.items():
            if param in body:
                return _error(400, message)
        kind = (body.get("response_format") or {}).get("type")
        if kind in self.reject_formats:
            return _error(400, f"response_format type {kind!r} is not supported by this server")
        item = self.next_item(body)
        if item is None:
            return _error(500, "script exhausted")
        if isinstance(item, HttpError):
            return http_error(item)
        if isinstance(item, Hang):
            await asyncio.Event().wait()
        if isinstance(item, Disconnect):
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        if isinstance(item, Trickle | Oversized):
            return await self._padded(request, body.get("model", ""), item)
        assert isinstance(item, Reply)
        if item.delay_s:
            await asyncio.sleep(item.delay_s)
        return web.json_response(_completion(body.get("model", ""), item))

    def next_item(self, body: dict[str, Any]) -> Any:
        """The answer to a request: the script's next, else `respond(body)`, else `then`."""
        if self._queue:
            return self._queue.pop(0)
        if self.respond is not None:
            return self.respond(body)
        return self.then

    async def _padded(
        self, request: web.Request, model: str, item: Trickle | Oversized
    ) -> web.StreamResponse:
        """A 200 (or an Oversized's status) whose completion (or error body) comes after a
        slow or a huge run of JSON whitespace."""
        status = item.status if isinstance(item, Oversized) else 200
        if status >= 400:
            tail = json.dumps({"error": {"message": "padded failure", "code": status}}).encode()
        else:
            tail = json.dumps(_completion(model, item.reply)).encode()
        response = web.StreamResponse(status=status, headers={"Content-Type": "application/json"})
        if isinstance(item, Oversized) and not item.chunked:
            response.content_length = item.size + len(tail)
        await response.prepare(request)
        if isinstance(item, Trickle):
            loop = asyncio.get_running_loop()
            until = loop.time() + item.for_s
            while loop.time() < until:
                await response.write(b" ")
                await asyncio.sleep(item.interval_s)
        else:
            block = b" " * (1024 * 1024)
            left = item.size
            while left > 0:
                await response.write(block[: min(left, len(block))])
                self.padding_sent += min(left, len(block))
                left -= len(block)
        await response.write(tail)
        await response.write_eof()
        return response

    async def _models(self, request: web.Request) -> web.StreamResponse:
        self.models_requests += 1
        if self.hang_checks:
            await asyncio.Event().wait()
        data = [{"id": name, "object": "model", "owned_by": "test"} for name in self.models]
        return web.json_response({"object": "list", "data": data})

    @web.middleware
    async def _hear(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.heard.append((request.method, request.path, request.headers.get("Authorization")))
        try:
            if request.path in self._held and self._released is not None:
                await self._released.wait()
            response: web.StreamResponse = await handler(request)
        except asyncio.CancelledError:
            self.gone.append(request.path)  # handler_cancellation: the client went away
            raise
        return response

    async def _tags(self, request: web.Request) -> web.StreamResponse:
        if self.ollama is None:
            return web.Response(status=404, text="404 page not found")
        listed = [
            {
                "name": name,
                "model": name,
                "modified_at": "2025-05-01T10:00:00Z",
                "size": 6_000_000_000,
                "digest": "0" * 64,
                "details": {"format": "gguf", "family": "test", "families": ["test"]},
            }
            for name in self.ollama
        ]
        return web.json_response({"models": listed})

    async def _show(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.show_requests.append(body)
        if self.hang_checks:
            await asyncio.Event().wait()
        if self.ollama is None:
            return web.Response(status=404, text="404 page not found")
        name = body.get("model") or body.get("name") or ""
        capabilities = self.ollama.get(name)
        if capabilities is None:
            return web.json_response({"error": f"model '{name}' not found"}, status=404)
        return web.json_response(
            {"details": {"format": "gguf"}, "capabilities": list(capabilities)}
        )

    async def _lmstudio(self, request: web.Request) -> web.Response:
        self.lmstudio_requests += 1
        if self.lmstudio is None:
            return web.json_response({"error": "Unexpected endpoint or method."}, status=404)
        return web.json_response({"object": "list", "data": [dict(m) for m in self.lmstudio]})

    async def _record(self, body: dict[str, Any]) -> None:
        self.requests.append(body)
        if self.requests_file is not None:
            with self.requests_file.open("a", encoding="utf-8") as out:
                out.write(json.dumps(body) + "\n")
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()


def _error(status: int, message: str) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": "invalid_request_error", "code": status}},
        status=status,
    )


def http_error(item: HttpError) -> web.Response:
    """An HttpError item's answer, with its Retry-After when it has one."""
    response = _error(item.status, item.message)
    if item.retry_after is not None:
        response.headers["Retry-After"] = item.retry_after
    return response


def _completion(model: str, reply: Reply) -> dict[str, Any]:
    content = reply.content
    text = content if isinstance(content, str) else json.dumps(content)
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": reply.finish_reason,
            }
        ],
    }
    if reply.usage is not None:
        prompt, completion = reply.usage
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    return body


# ── in a thread ─────────────────────────────────────────────────────────────


_Server = TypeVar("_Server", bound=ModelServer)


@contextlib.contextmanager
def serve_in_thread(server: _Server, timeout: float = 10.0) -> Iterator[_Server]:
    """Run `server` on an event loop of its own in a daemon thread while the block runs.

    Read `server.requests` after the block, or while it runs for a snapshot.
    """
    loop = asyncio.new_event_loop()
    started = threading.Event()
    thread = threading.Thread(target=loop.run_forever, name="model-server", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout)
        started.set()
        yield server
    finally:
        if started.is_set():
            asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        loop.close()


# ── as a process ────────────────────────────────────────────────────────────


def server_from_script(data: Mapping[str, Any]) -> ModelServer:
    """A ModelServer from the JSON form of a script file."""
    then = data.get("then")
    return ModelServer(
        script=[item_from_json(item) for item in data.get("replies", [])],
        then=item_from_json(then) if then is not None else None,
        reject_formats=frozenset(data.get("reject_formats", [])),
        reject_params=dict(data.get("reject_params", {})),
        ollama=data.get("ollama"),
        lmstudio=data.get("lmstudio"),
        models=tuple(data.get("models", ("qwen2.5vl",))),
    )


def _write_port(path: str, port: int) -> None:
    tmp = Path(path + ".tmp")
    tmp.write_text(str(port), encoding="utf-8")
    tmp.replace(path)


async def _serve(args: argparse.Namespace, data: Mapping[str, Any]) -> None:
    server = server_from_script(data)
    server.port = args.port
    server.requests_file = Path(args.requests_file) if args.requests_file else None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(signum, stop.set)
        except NotImplementedError:  # Windows: Ctrl+C ends asyncio.run with KeyboardInterrupt
            break
    async with server:
        if args.port_file:
            _write_port(args.port_file, server.port)
        print(server.port, flush=True)
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A scripted OpenAI-compatible model server.")
    parser.add_argument("--script", help="a JSON script file (see the module docstring)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", help="write the port here once listening")
    parser.add_argument("--requests-file", help="append each chat request body here (JSONL)")
    args = parser.parse_args(argv)
    data = json.loads(Path(args.script).read_text(encoding="utf-8")) if args.script else {}
    asyncio.run(_serve(args, data))


if __name__ == "__main__":
    main()
