"""The API's routes (DESIGN §6): tasks, their SSE events, pause / resume / stop, approvals,
routines (docs/routines.md).

The SSE connection owns the run it starts: when the client goes away aiohttp
cancels the handler (handler_cancellation=True), closing the event generator
ends the run stopped / user_stop. A routine's POST answers with its run's stream too, so a
secret parameter lives only as long as the request.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

from aiohttp import web

from desktop_agent.api.schemas import (
    ID_PATTERN,
    AnswerApproval,
    AskApproval,
    BadRequest,
    CreateTask,
    ListQuery,
    NoBody,
    RunRoutine,
    parse_body,
    validate,
)
from desktop_agent.core.errors import AlreadyRunning, RefusedToStart, RunNotFound
from desktop_agent.core.events import TaskLoopEvent, event_line
from desktop_agent.core.models import ApprovalDecision, RunStatus, RunView
from desktop_agent.core.routine import (
    NAME_PATTERN,
    RoutineError,
    RoutineNotFound,
    routine_to_file,
)
from desktop_agent.host.starts import (
    NotQueued,
    QueuedRun,
    RoutineRequest,
    RunRequest,
)
from desktop_agent.instances.stop_all import PROOF_SCHEME

if TYPE_CHECKING:
    from desktop_agent.core.models import VisionSetting
    from desktop_agent.host import Host

log = logging.getLogger(__name__)

SSE_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}


def error_response(
    status: int, message: str, *, headers: dict[str, str] | None = None
) -> web.Response:
    """`{"error": "<one line>"}` with `status`."""
    line = " ".join(message.split()) or "error"
    return web.json_response({"error": line}, status=status, headers=headers)


def sse_frame(event: TaskLoopEvent) -> bytes:
    """`event: <type>` and `data: <the CLI's --json line>`, then a blank line."""
    return f"event: {event.type}\ndata: {event_line(event)}\n\n".encode()


class Refusal(Exception):  # noqa: N818 - an answer, not a fault
    """A request the API answers with a 4xx status and a one-line reason."""

    status = 400


class Conflict(Refusal):
    """The run is not in a state that allows the request."""

    status = 409


class NotFound(Refusal):
    status = 404


class Forbidden(Refusal):
    """Not served by this instance (a `desktop-agent run` process: controls only)."""

    status = 403


#: why a `desktop-agent run` process's API refuses to create, start or approve
CONTROLS_ONLY = (
    "this is a `desktop-agent run` process, whose approvals follow its own --approve: its "
    "API only lists, shows, stops, pauses and resumes runs; create and approve tasks "
    "through the app or `desktop-agent serve`"
)


class Routes:
    """The handlers, and what the API remembers between requests.

    Attributes:
        vision: the `vision` a POST asked for, kept until its run starts.
        controls_only: refuse (403) to create, start or approve runs: the process answers
            approvals its own way (`run --approve all`), which must not approve for others.
        asks_here: a person answers approvals here (the app's dialog): another process
            (`desktop-agent mcp`) may ask its questions through POST /api/approvals/ask.
    """

    def __init__(
        self,
        host: Host,
        *,
        controls_only: bool = False,
        asks_here: bool = False,
        pid: int | None = None,
    ) -> None:
        self.host = host
        self.controls_only = controls_only
        self.asks_here = asks_here
        #: the pid this instance is registered under (not asked when a control is forwarded)
        self.pid = os.getpid() if pid is None else pid
        self.vision: dict[str, VisionSetting] = {}
        self._streaming: set[str] = set()

    def install(self, app: web.Application) -> None:
        add = app.router.add_route
        add("POST", "/api/tasks", self.create_task)
        add("GET", "/api/tasks", self.list_tasks)
        add("POST", "/api/tasks/stop-all", self.stop_all)
        add("GET", "/api/tasks/{id}", self.get_task)
        add("GET", "/api/tasks/{id}/events", self.events)
        add("POST", "/api/tasks/{id}/{action:pause|resume|stop}", self.control)
        add("GET", "/api/approvals", self.list_approvals)
        add("POST", "/api/approvals/ask", self.ask_approval)  # before {id}: matched in order
        add("POST", "/api/approvals/{id}", self.answer_approval)
        add("GET", "/api/routines", self.list_routines)
        add("POST", "/api/routines/{name}/run", self.run_routine)

    async def list_routines(self, request: web.Request) -> web.StreamResponse:
        listed = await self.host.records.list_routines()
        return web.json_response(
            [
                {
                    **routine_to_file(r),
                    "grants": list(r.grants),
                    "schedule": r.schedule.to_json() if r.schedule else None,
                }
                for r in listed
            ]
        )

    async def run_routine(self, request: web.Request) -> web.StreamResponse:
        self._refuse_if_controls_only()
        name = request.match_info["name"]
        body = parse_body(await request.read(), RunRoutine)
        if not NAME_PATTERN.fullmatch(name):
            raise NotFound(f"no routine named {name[:64]!r}")
        # admitted now (a stop-all from here on reaches it); the routine is looked up inside
        handle = self.host.admit(RoutineRequest(name, body.params, handover=body.handover))
        try:
            return await self._stream(request, handle.events, handle.run_id)
        except RoutineNotFound:
            raise NotFound(f"no routine named {name[:64]!r}") from None
        except RoutineError as error:
            raise BadRequest(str(error)) from None

    def stop_streamed_runs(self) -> None:
        """Stop every run an SSE client of this server is watching (the server is closing)."""
        for run_id in list(self._streaming):
            self.host.stop(run_id)

    # ── tasks ────────────────────────────────────────────────────────────────

    def _refuse_if_controls_only(self) -> None:
        if self.controls_only:
            raise Forbidden(CONTROLS_ONLY)

    async def create_task(self, request: web.Request) -> web.StreamResponse:
        self._refuse_if_controls_only()
        body = parse_body(await request.read(), CreateTask)
        try:
            run = await self.host.store_queued(
                RunRequest(
                    body.goal,
                    base_url=body.base_url,
                    model=body.model,
                    max_steps=body.max_steps,
                    max_failures=body.max_failures,
                    allowed_tools=None if body.allowed_tools is None else tuple(body.allowed_tools),
                    model_profile=body.model_profile,
                    monitor=body.monitor,
                ),
            )
        except AlreadyRunning:
            raise
        except RefusedToStart as error:
            raise BadRequest(str(error)) from None
        if body.vision is not None:
            self.vision[run.id] = body.vision
        return web.json_response(
            run.to_json(), status=201, headers={"Location": f"/api/tasks/{run.id}"}
        )

    async def list_tasks(self, request: web.Request) -> web.StreamResponse:
        if len(request.query) != len(set(request.query)):
            raise BadRequest("a query parameter is given twice")
        query = validate(dict(request.query), ListQuery)
        runs = await self.host.records.list_runs(limit=query.limit, status=query.status)
        return web.json_response([run.to_json() for run in runs])

    async def get_task(self, request: web.Request) -> web.StreamResponse:
        run = await self._load(request)
        steps = await self.host.records.list_steps(run.id)
        return web.json_response({**run.to_json(), "steps": [step.to_json() for step in steps]})

    async def control(self, request: web.Request) -> web.StreamResponse:
        run_id = _run_id(request)
        action = request.match_info["action"]
        parse_body(await request.read(), NoBody)
        if action == "stop":
            await self._stop(request, run_id)
        elif not (self.host.pause if action == "pause" else self.host.resume)(run_id):
            run = await self._load(request)
            if run.status.is_terminal or run.status is RunStatus.QUEUED:
                raise Conflict(f"run {run_id} is not running ({run.status.value}); cannot {action}")
            await self._elsewhere(request, run_id, run.status, action)
        return web.json_response({"run_id": run_id, "requested": action})

    async def _stop(self, request: web.Request, run_id: str) -> None:
        if self.host.stop(run_id):  # running, paused, or still being found or prepared
            return
        # A queued run that is stopped never starts: admitted stopped (in this same step, so
        # no start of it can slip in between), the runner stores it stopped / user_stop,
        # "stopped before it started", as any run stopped on its way in.
        handle = self.host.admit(QueuedRun(run_id))
        handle.control.stop()
        self.vision.pop(run_id, None)
        try:
            async with aclosing(handle.events) as events:
                async for _ in events:
                    pass
        except NotQueued as refusal:
            run = refusal.run
            if run.status.is_terminal:
                status = run.status.value
                raise Conflict(f"run {run_id} is not running ({status}); nothing to stop") from None
            await self._elsewhere(request, run_id, run.status, "stop")

    async def _elsewhere(
        self, request: web.Request, run_id: str, status: RunStatus, action: str
    ) -> None:
        """The run is running or paused, not here: another instance on the data dir runs it.
        Forward the request to the instances (signed, as stop-all is); one that runs it
        answers. A request forwarded to this one is not forwarded again."""
        if from_instance(request):
            raise Conflict(f"run {run_id} is not run by this instance; cannot {action}")
        from desktop_agent.instances.registry import control_elsewhere

        pid = await control_elsewhere(self.host.data_dir, run_id, action, exclude_pid=self.pid)
        if pid is None:
            raise Conflict(
                f"run {run_id} is {status.value} in another process on this data dir, and no "
                f"instance took the {action} (POST /api/tasks/stop-all stops every run)"
            )
        log.info("%s of run %s forwarded to instance pid %d", action, run_id, pid)

    async def stop_all(self, request: web.Request) -> web.StreamResponse:
        parse_body(await request.read(), NoBody)
        return web.json_response({"stopped": self.host.stop_here()})

    # ── events ───────────────────────────────────────────────────────────────

    async def events(self, request: web.Request) -> web.StreamResponse:
        run_id = _run_id(request)
        if self.controls_only:  # a replay is a show; a start is not
            run = await self._load(request)
            if run.status.is_terminal:
                return await self._stream(request, self._replay(run.id), run.id)
            self._refuse_if_controls_only()
        # admitted now, before the store is read: a stop or a stop-all from here on reaches
        # it (the read and the model check happen inside the run)
        try:
            handle = self.host.admit(QueuedRun(run_id, self.vision.get(run_id)))
        except AlreadyRunning:
            raise Conflict(f"run {run_id} is running already") from None
        try:
            response = await self._stream(request, handle.events, run_id)
        except NotQueued as refusal:
            run = refusal.run
            if run.status.is_terminal:
                return await self._stream(request, self._replay(run.id), run.id)
            raise Conflict(f"run {run.id} is {run.status.value} in another process") from None
        self.vision.pop(run_id, None)  # kept when the start is refused: the client may retry
        return response

    async def _stream(
        self,
        request: web.Request,
        events: AsyncGenerator[TaskLoopEvent, None],
        run_id: str,
    ) -> web.StreamResponse:
        """Send the events as SSE; a client that goes away ends a live run (user_stop)."""
        response = web.StreamResponse(headers=SSE_HEADERS)
        self._streaming.add(run_id)
        try:
            async with aclosing(events) as stream:
                # The first event comes before any byte is sent, so a refusal is still a
                # plain 4xx answer, and the run's generator is running (a cancel closes it).
                first = await anext(stream, None)
                await response.prepare(request)
                if first is not None:
                    await response.write(sse_frame(first))
                async for event in stream:
                    await response.write(sse_frame(event))
        except ConnectionResetError:
            log.info("the client of run %s's events went away", run_id)
        except Exception:
            if not response.prepared:
                raise
            log.exception("the events of run %s failed mid-stream", run_id)
        finally:
            self._streaming.discard(run_id)
        return response

    # ── approvals ────────────────────────────────────────────────────────────

    async def list_approvals(self, request: web.Request) -> web.StreamResponse:
        return web.json_response([a.to_json() for a in self.host.pending_approvals])

    async def answer_approval(self, request: web.Request) -> web.StreamResponse:
        self._refuse_if_controls_only()
        approval_id = request.match_info["id"]
        body = parse_body(await request.read(), AnswerApproval)
        pending = {a.id: a for a in self.host.pending_approvals}
        approval = pending.get(approval_id)
        decision = body.answer
        if decision is not ApprovalDecision.DENY and self.host.asked_for_another_process(
            approval_id
        ):
            raise Forbidden(
                "this question came from another process (desktop-agent mcp): only the person "
                "at this desktop allows it, in the app's dialog; the API may deny it"
            )
        if decision is not ApprovalDecision.DENY and approval and approval.only_a_person_answers:
            raise Forbidden(
                "this call asks every time: only the person at this desktop allows it, in the "
                "app's approval dialog; the API may deny it"
            )
        if decision is ApprovalDecision.RUN and approval and not approval.offer_run_grant:
            decision = ApprovalDecision.ONCE  # a dangerous tool asks at every call
        if approval is None or not self.host.answer(approval_id, decision):
            raise NotFound(f"no pending approval {_shown_id(approval_id)}")
        return web.json_response(
            {"id": approval.id, "run_id": approval.run_id, "decision": decision.value}
        )

    async def ask_approval(self, request: web.Request) -> web.StreamResponse:
        """Another process's question, shown in this app's approval dialog; the answer when
        the user gives it (or deny when it times out). A caller that goes away closes the
        dialog (handler_cancellation)."""
        if not self.asks_here:
            raise Forbidden("nobody answers approvals here: this instance has no approval dialog")
        body = parse_body(await request.read(), AskApproval)
        decision = await self.host.ask_here(body.request())
        return web.json_response({"id": body.id, "decision": decision.value})

    # ── helpers ──────────────────────────────────────────────────────────────

    async def _replay(self, run_id: str) -> AsyncGenerator[TaskLoopEvent, None]:
        """A stored run's events, one by one (the host's records read them in batches)."""
        async for batch in self.host.records.replay(run_id):
            for event in batch:
                yield event

    async def _load(self, request: web.Request) -> RunView:
        run_id = _run_id(request)
        run = await self.host.records.get_run(run_id)
        if run is None:
            raise RunNotFound(f"no run {run_id!r}")
        return run


def from_instance(request: web.Request) -> bool:
    """Was `request` signed by another instance (`Authorization: Proof …`)? The server's guard
    let it through only if its proof was good (server.py `_authorized`): a run's stop, pause or
    resume it forwards is answered for this instance only, never forwarded again."""
    scheme, _, _ = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == PROOF_SCHEME.lower()


def _run_id(request: web.Request) -> str:
    run_id = request.match_info["id"]
    if not ID_PATTERN.fullmatch(run_id):
        raise RunNotFound(f"no run {_shown_id(run_id)}")
    return run_id


def _shown_id(value: str) -> str:
    shown = json.dumps(value[:64])
    return shown if len(value) <= 64 else shown[:-1] + '…"'
