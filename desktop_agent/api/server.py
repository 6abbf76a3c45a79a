"""ApiServer: the local API of DESIGN §6 on aiohttp — loopback only, a bearer token, no 500 traces.

This module imports aiohttp at its top: front ends import it inside the
function that starts a server, so `desktop-agent --help` never pays for it.
"""

from __future__ import annotations

import hmac
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from desktop_agent.api.routes import Refusal, Routes, error_response
from desktop_agent.api.schemas import BadRequest
from desktop_agent.core.errors import (
    AlreadyRunning,
    ConfigError,
    DesktopAgentError,
    RefusedToStart,
    RunNotFound,
    StoreError,
)
from desktop_agent.instances.loopback import is_loopback_host_header
from desktop_agent.instances.registry import (
    IDENTITY_PATH,
    PROOF_SCHEME,
    Challenges,
    ensure_token,
    identity_proof,
    is_nonce,
    is_signed_route,
    register_instance,
    unregister_instance,
)

if TYPE_CHECKING:
    from desktop_agent.host import Host

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
MAX_BODY_BYTES = 1024 * 1024
#: how long close() lets answers in flight finish before cancelling them
SHUTDOWN_TIMEOUT_S = 2.0

Handler = Any


class ApiServer:
    """The API of one process, served on 127.0.0.1 in the caller's event loop.

    Attributes:
        host: the Host the routes go through.
        port: the port it listens on, once started.
    """

    def __init__(
        self,
        host: Host,
        *,
        pid: int | None = None,
        controls_only: bool = False,
        face: str = "",
    ) -> None:
        """`pid` is the process id to register under (tests run two servers in one process);
        `controls_only` serves list, show, stop, pause and resume only (a `run` process);
        `face` says what the process is in its instance file (app, run, serve, mcp): the
        app's API also shows other processes' approvals in its dialog."""
        self.host = host
        self.port: int | None = None
        self._pid = os.getpid() if pid is None else pid
        self._token = ""
        self._face = face
        self._routes = Routes(
            host, controls_only=controls_only, asks_here=face == "app", pid=self._pid
        )
        self._runner: web.AppRunner | None = None
        self._instance_file: Path | None = None
        self._challenges = Challenges()

    @property
    def data_dir(self) -> Path:
        return Path(self.host.data_dir)

    async def start(self, port: int = 0) -> int:
        """Make sure the token exists, listen on 127.0.0.1:`port` (0: a free one), register.

        Raises ConfigError when the data dir cannot be written or the port cannot be had.
        """
        if self._runner is not None:
            raise RuntimeError("the API server is started already")
        self._token = ensure_token(self.data_dir)
        app = web.Application(
            middlewares=[self._errors, self._guard], client_max_size=MAX_BODY_BYTES
        )
        self._routes.install(app)
        runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=SHUTDOWN_TIMEOUT_S)
        await runner.setup()
        try:
            await web.TCPSite(runner, HOST, port).start()
            self.port = int(runner.addresses[0][1])
            self._instance_file = register_instance(
                self.data_dir, self.port, pid=self._pid, face=self._face
            )
        except OSError as error:
            await runner.cleanup()
            reason = error.strerror or str(error)
            raise ConfigError(f"cannot serve the API on {HOST}:{port}: {reason}") from None
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        log.info("local API on http://%s:%d/api", HOST, self.port)
        return self.port

    async def close(self) -> None:
        """Unregister, end the runs this server streams (stopped / user_stop), stop listening."""
        runner, self._runner = self._runner, None
        if self._instance_file is not None and self.port is not None:
            unregister_instance(self._instance_file, self.port)
            self._instance_file = None
        if runner is None:
            return
        self._routes.stop_streamed_runs()
        await runner.cleanup()

    # ── middlewares ──────────────────────────────────────────────────────────

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Host and Origin (403), then the token (401), before any route runs."""
        refusal = self._refusal(request)
        if refusal is not None:
            return error_response(403, refusal)
        if request.path == IDENTITY_PATH:
            return self._prove_identity(request)
        if not self._authorized(request):
            return error_response(
                401,
                "missing or wrong API token (send 'Authorization: Bearer <token>'; "
                "the token is in the data dir's api-token file)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        response: web.StreamResponse = await handler(request)
        return response

    def _refusal(self, request: web.Request) -> str | None:
        hosts = request.headers.getall("Host", [])
        if len(hosts) != 1 or not is_loopback_host_header(hosts[0]):
            shown = hosts[0][:80] if hosts else "none"
            return f"Host {shown!r} is not a loopback name (127.0.0.1, localhost, [::1])"
        origin = request.headers.get("Origin")
        if origin is not None and origin.lower() not in self._own_origins():
            return f"Origin {origin[:80]!r} is not this API's own"
        return None

    def _prove_identity(self, request: web.Request) -> web.StreamResponse:
        """GET /api/instance/identity?nonce=<64 hex>: {"proof": HMAC(token, port, nonce)}.

        Answered without the token: it lets stop-all check that a listed port is really one
        of ours before it sends the token there (instances.identity_proof says why it is safe).
        """
        if request.method != "GET":
            return error_response(405, f"{request.method} is not allowed on {IDENTITY_PATH}")
        nonce = request.query.get("nonce", "")
        if not is_nonce(nonce):
            return error_response(400, "nonce: 64 lowercase hex digits are needed")
        assert self.port is not None  # requests come only once the server listens
        return web.json_response(
            {
                "proof": identity_proof(self._token, nonce, self.port),
                # stop-all signs its request with this instead of sending the token
                "challenge": self._challenges.issue(self._token, self.port),
            }
        )

    def _own_origins(self) -> frozenset[str]:
        return frozenset({f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}"})

    def _authorized(self, request: web.Request) -> bool:
        scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == PROOF_SCHEME.lower():
            # stop-all, an approval or a run's control from another instance: signed with
            # our challenge (the routes see it came from one: routes.from_instance)
            signed = is_signed_route(request.method, request.path)
            return signed and self._challenges.accept(
                self._token, self.port or 0, credentials, request.method, request.path
            )
        if scheme.lower() != "bearer" or not self._token:
            return False
        given = credentials.strip().encode("utf-8", "replace")
        return hmac.compare_digest(given, self._token.encode("utf-8"))

    @web.middleware
    async def _errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every failure becomes `{"error": "..."}`; nothing unexpected leaks a trace."""
        try:
            response: web.StreamResponse = await handler(request)
            return response
        except web.HTTPException as error:
            return _http_error(request, error)
        except BadRequest as error:
            return error_response(400, str(error))
        except Refusal as error:
            return error_response(error.status, str(error))
        except DesktopAgentError as error:
            return error_response(status_of(error), str(error))
        except Exception:
            # Logged without the request body: it may hold anything the client sent.
            log.exception("internal error answering %s %s", request.method, request.path[:200])
            return error_response(500, "internal error")


def status_of(error: DesktopAgentError) -> int:
    """The HTTP status of a refusal (DESIGN §1, §6)."""
    if isinstance(error, RunNotFound):
        return 404
    if isinstance(error, AlreadyRunning):
        return 409
    if isinstance(error, RefusedToStart):
        return 422
    if isinstance(error, StoreError):
        return 503
    return 400


def _http_error(request: web.Request, error: web.HTTPException) -> web.StreamResponse:
    path = request.path[:200]
    if error.status == 404:
        message = f"no route {request.method} {path}"
    elif error.status == 405:
        message = f"{request.method} is not allowed on {path}"
    elif error.status == 413:
        message = f"the body is larger than {MAX_BODY_BYTES // 1024} KiB"
    else:
        message = error.reason
    headers = {"Allow": error.headers["Allow"]} if "Allow" in error.headers else None
    return error_response(error.status, message, headers=headers)
