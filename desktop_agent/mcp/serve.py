"""`desktop-agent mcp`: the MCP server over stdio (default) or streamable HTTP on 127.0.0.1.

The process hosts its runs as `run` and `serve` do: the local API (controls only; it
registers as face "mcp", so `stop-all` and the app's hotkey reach its calls), the stop
hotkey, SIGINT/SIGTERM, the user-takeover watch. On HTTP the same bearer token and Host /
Origin rules as the local API hold (docs/api.md); stdio needs none (the client started us).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_agent.core.errors import ConfigError
from desktop_agent.host.person import app_asker, desktop_asker
from desktop_agent.mcp.gate import McpApprovalGate

if TYPE_CHECKING:
    from desktop_agent.host.host import LocalApi
    from desktop_agent.mcp.server import McpFace
    from desktop_agent.settings import Settings

log = logging.getLogger(__name__)

HTTP_PATH = "/mcp"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


async def serve_mcp(
    data_dir: Path,
    settings: Settings,
    *,
    http: bool = False,
    port: int = 0,
    stop_mark: str | None = None,
    local_api: LocalApi | None = None,
) -> int:
    """Serve until the client leaves (stdio: end of input) or a signal comes; exit code 0.

    `stop_mark`: the stop-all mark at the process's entry (`Host.open`). A client's calls come
    only once its `initialize` was answered, after this instance is registered, so a stop-all
    before that precedes every call: it stops nothing here (and revokes no grant yet given).
    `local_api`: the local API it serves, controls only (the top floor's, launch.py)."""
    from importlib.metadata import version

    from desktop_agent.host.host import Face, Host
    from desktop_agent.mcp.server import McpFace

    gate = McpApprovalGate(
        app_asker(data_dir),
        desktop_asker(data_dir),
        client_approves=settings.mcp_client_approves,
    )
    ended = asyncio.Event()
    # the client left or a signal came: every run ends, then the rest (Host.serving)
    serving_host = Host.serving(
        data_dir, settings, gate=gate, stop_mark=stop_mark, local_api=local_api
    )
    async with serving_host as host:
        await host.turn_on(Face("mcp", on_signal=ended.set))
        face = McpFace(host, gate, version=version("desktop-agent"))
        serving = asyncio.ensure_future(
            _serve_http(face, data_dir, port) if http else _serve_stdio(face)
        )
        waiter = asyncio.ensure_future(ended.wait())
        try:
            await asyncio.wait({serving, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pending in (serving, waiter):
                pending.cancel()
            await asyncio.gather(serving, waiter, return_exceptions=True)
        if not serving.cancelled() and serving.exception() is not None:
            raise serving.exception()  # type: ignore[misc]
    return 0


async def _serve_stdio(face: McpFace) -> None:
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    server = face.server
    # the handshake era (2025-11-25): elicitation is a request to the client in the middle
    # of a call, which the loop's gate can await; the 2026-07-28 era has none
    async with (
        _stdin_lines() as stdin,
        stdio_server(stdin=stdin) as (read, write),
        server.lifespan(server) as state,
    ):
        await serve_loop(
            server,
            read,
            write,
            lifespan_state=state,
            init_options=server.create_initialization_options(),
        )


#: the longest line (one JSON-RPC message) read from the client
MAX_LINE_BYTES = 64 * 1024 * 1024


class StdinLines:
    """The client's lines, read on the event loop: a stop cancels the read at once. (The
    SDK reads stdin in a worker thread, whose blocking read outlives a SIGTERM and keeps
    the process from ending while the client keeps the pipe open.)"""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


@contextlib.asynccontextmanager
async def _stdin_lines() -> AsyncIterator[Any]:
    """stdin as StdinLines; None (the SDK's own reader) where it is no pipe (a file) and on
    Windows (a console or anonymous pipe there is no overlapped handle the loop can read)."""
    if sys.platform == "win32":
        yield None
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer
        )
    except (OSError, ValueError):
        yield None
        return
    try:
        yield StdinLines(reader)
    finally:
        transport.close()


async def _serve_http(face: McpFace, data_dir: Path, port: int) -> None:
    import uvicorn

    from desktop_agent.instances.registry import ensure_token

    app = face.server.streamable_http_app(streamable_http_path=HTTP_PATH, host="127.0.0.1")
    token = ensure_token(data_dir)
    config = uvicorn.Config(
        guarded(app, token),
        host="127.0.0.1",
        port=port,
        log_config=None,
        access_log=False,
        lifespan="on",
    )
    server = _quiet_uvicorn()(config)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
    except OSError as error:
        listener.close()
        raise ConfigError(f"cannot serve MCP on 127.0.0.1:{port}: {error.strerror}") from None
    bound = listener.getsockname()[1]

    def serving() -> None:
        log.info("MCP over streamable HTTP on http://127.0.0.1:%d%s", bound, HTTP_PATH)
        print(f"serving MCP on http://127.0.0.1:{bound}{HTTP_PATH}", flush=True)

    server.serving = serving
    try:
        await server.serve(sockets=[listener])
    finally:
        server.should_exit = True
        listener.close()


def _quiet_uvicorn() -> type[Any]:
    import uvicorn

    class QuietUvicorn(uvicorn.Server):
        """uvicorn without signal handlers of its own: SIGINT / SIGTERM are the process's
        (they stop every run first); uvicorn's would replace them while it serves. Its
        `serving()` is called once it accepts connections."""

        serving: Callable[[], None] = staticmethod(lambda: None)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            # the address is told once the socket listens: a client that connects the moment
            # it reads the line was refused while uvicorn still started its app
            await super().startup(sockets)
            if self.started:
                self.serving()

    return QuietUvicorn


def guarded(app: Asgi, token: str) -> Asgi:
    """The local API's rules in front of the MCP endpoint: a loopback Host and no foreign
    Origin (403), then the bearer token (401), before the request reaches the SDK."""
    from desktop_agent.instances.loopback import is_loopback_host_header

    expected = token.encode("utf-8")

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]]
        hosts = [value for name, value in headers if name == "host"]
        origin = next((value for name, value in headers if name == "origin"), None)
        port = scope.get("server", (None, None))[1]
        own = {f"http://127.0.0.1:{port}", f"http://localhost:{port}"}
        if len(hosts) != 1 or not is_loopback_host_header(hosts[0]):
            await _refuse(send, 403, "Host is not a loopback name (127.0.0.1, localhost, [::1])")
            return
        if origin is not None and origin.lower() not in own:
            await _refuse(send, 403, "Origin is not this server's own")
            return
        authorization = next((value for name, value in headers if name == "authorization"), "")
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            given.strip().encode("utf-8", "replace"), expected
        ):
            await _refuse(
                send,
                401,
                "missing or wrong API token (send 'Authorization: Bearer <token>'; "
                "the token is in the data dir's api-token file)",
                extra=[(b"www-authenticate", b"Bearer")],
            )
            return
        await app(scope, receive, send)

    return guard


async def _refuse(
    send: Send, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    import json

    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *(extra or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})
