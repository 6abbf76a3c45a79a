"""The MCP handlers: list the tools, and call one — a desktop tool as a one-step run, a task
tool on the Host and the history. Built on the `mcp` SDK's low-level `Server`."""

from __future__ import annotations

import asyncio
import base64
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.elicitation import elicit_with_validation
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from desktop_agent.core.errors import DesktopAgentError
from desktop_agent.core.events import StoppedEverything, TaskLoopEvent
from desktop_agent.core.models import (
    UNTRUSTED_KEY,
    ApprovalDecision,
    ApprovalRequest,
    Policy,
    Risk,
    RunStatus,
    RunView,
    StepKind,
    StopReason,
)
from desktop_agent.core.sentences import of_step
from desktop_agent.core.text import printable
from desktop_agent.core.tools import SCREEN_TOOL, describe_validation_error
from desktop_agent.host.host import RunRequest
from desktop_agent.mcp.calls import (
    OBSERVE_ONLY,
    CallOutcome,
    ElementMemory,
    follow,
    run_one_call,
)
from desktop_agent.mcp.gate import Asker, AskHuman, McpApprovalGate, SessionGrants
from desktop_agent.mcp.progress import ProgressOfRun
from desktop_agent.mcp.tools import (
    GetRunArgs,
    ListRunsArgs,
    McpTool,
    RunIdArgs,
    RunTaskArgs,
    mcp_tools,
)
from desktop_agent.planner.screen_text import SCREEN_TEXT_RULE, fenced, screen_text_block

if TYPE_CHECKING:
    from desktop_agent.host.host import Host

log = logging.getLogger(__name__)

SERVER_NAME = "desktop-agent"
STOPPED_BY_USER = "stopped by the user"
#: get_run's screenshots=true returns at most this many (the last ones)
MAX_RUN_SCREENSHOTS = 10
#: stdio has one client; on HTTP each MCP session has its own grants and element memory
STDIO_SESSION = "stdio"
#: the HTTP sessions whose grants and last screenshot are kept (the least recent go first)
MAX_SESSIONS = 64
#: how long stop_all waits for the other instances' counts (they are stopped either way)
STOP_ALL_WAIT_S = 5.0
#: why no screenshot goes to the client while screen_snapshot's policy denies it
SCREEN_POLICY_DENIES = (
    "the screen may not leave this process (policies.screen_snapshot = deny in the settings)"
)


class _OnceOrSession(BaseModel):
    answer: Literal["once", "session", "deny"]


class _OnceOnly(BaseModel):
    answer: Literal["once", "deny"]


_ANSWERS = {"once": ApprovalDecision.ONCE, "session": ApprovalDecision.RUN}


@dataclass
class _Session:
    grants: SessionGrants
    memory: ElementMemory = field(default_factory=ElementMemory)


class McpFace:
    """The MCP server of one process: its tools over the Host's runs, the history and the gate.

    Attributes:
        host: the process's engine side: it owns the runs (each call's too), the store, the
            stops; every run of this process is one of its runs.
        gate: the runs' PermissionGate (asks the app, else the client, else denies).
    """

    def __init__(self, host: Host, gate: McpApprovalGate, *, version: str = "") -> None:
        self.host = host
        self.gate = gate
        self.tools = mcp_tools()
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=version,
            instructions=(
                "Acts on the user's desktop. Every action goes through the agent's gate and may "
                "ask the user first; the user's stop hotkey ends any call at once."
            ),
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )
        self.server.add_request_handler("server/discover", types.RequestParams, _no_discover)

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_listed(tool) for tool in self.tools.values()])

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = self.tools.get(params.name)
        if tool is None:
            return _error(f"unknown tool {params.name!r}; the tools are: {', '.join(self.tools)}")
        arguments = dict(params.arguments or {})
        try:
            if tool.kind == "desktop":
                return await self._desktop(ctx, tool, arguments)
            return await self._task(ctx, tool, arguments)
        except ValidationError as error:
            return _error(f"invalid arguments for {tool.name}: {describe_validation_error(error)}")
        except DesktopAgentError as error:
            return _error(str(error))

    # ── desktop tools: one-step runs ─────────────────────────────────────────

    async def _desktop(
        self, ctx: ServerRequestContext[Any], tool: McpTool, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        if tool.builtin == OBSERVE_ONLY:
            tool.args_model.model_validate(arguments)  # takes nothing
            if self._screen_policy() is Policy.DENY:
                return _error(f"screenshot was not taken: {SCREEN_POLICY_DENIES}")
        session = self._session(ctx)
        asker = Asker(session.grants, _elicitor(ctx))
        outcome = await run_one_call(
            self.host,
            self.gate,
            tool.builtin,
            arguments,
            asker,
            session.memory,
            on_event=_progress_sender(ctx),
        )
        shown = outcome.observation if tool.builtin == OBSERVE_ONLY else None
        if shown is not None and outcome.run is not None:
            why = await self._screen_handed_out(
                outcome.run.id, "the screen as it is now", shown.screenshot_path
            )
            if why:
                return _error(f"screenshot was not handed out: {why} (run {outcome.run.id})")
            session.memory.remember(shown.elements)
        if asker.unasked and outcome.run is not None:
            return _error(
                f"{tool.name} was not run: it needs the approval of a person at this desktop "
                "and nobody could be asked there (no desktop app on this data dir, no display "
                "for the agent's own dialog; this client answers only ordinary calls, and only "
                f"with `desktop-agent mcp --client-approves`) (run {outcome.run.id})"
            )
        return _call_result(tool.name, outcome)

    def _session(self, ctx: ServerRequestContext[Any]) -> _Session:
        headers = getattr(ctx.request, "headers", None)
        key = (headers.get("mcp-session-id") if headers is not None else None) or STDIO_SESSION
        session = self._sessions.get(key)
        if session is None:
            permissions = self.host.permissions
            session = self._sessions[key] = _Session(SessionGrants(lambda: permissions.revocations))
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)  # its grants go with it: it asks again
        self._sessions.move_to_end(key)
        return session

    # ── task tools ───────────────────────────────────────────────────────────

    async def _task(
        self, ctx: ServerRequestContext[Any], tool: McpTool, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        args = tool.args_model.model_validate(arguments)
        if isinstance(args, RunTaskArgs):
            return await self._run_task(ctx, args)
        if isinstance(args, ListRunsArgs):
            runs = await self.host.records.list_runs(limit=args.limit)
            lines = [_run_line(run) for run in runs] or ["no runs yet"]
            return _text("\n".join(lines), {"runs": [run.to_json() for run in runs]})
        if isinstance(args, GetRunArgs):
            return await self._get_run(args)
        if isinstance(args, RunIdArgs):
            host = self.host
            done = host.pause(args.run_id) if tool.name == "pause_run" else host.resume(args.run_id)
            verb = "pause" if tool.name == "pause_run" else "resume"
            if not done:
                return _error(f"run {args.run_id} is not running in this server; cannot {verb}")
            return _text(f"{verb} asked of run {args.run_id}")
        return await self._stop_all()

    async def _run_task(
        self, ctx: ServerRequestContext[Any], args: RunTaskArgs
    ) -> types.CallToolResult:
        session = self._session(ctx)
        request = RunRequest(
            goal=args.goal,
            max_steps=args.max_steps,
            allowed_tools=None if args.allowed_tools is None else tuple(args.allowed_tools),
            model_profile=args.model_profile,
            monitor=args.monitor,
        )
        take_back = self.gate.lend(request.run_id, Asker(session.grants, _elicitor(ctx)))
        try:
            hosted = self.host.start(request)
            send = _progress_sender(ctx, ProgressOfRun())
            outcome = await follow(self.host, hosted, send)
        finally:
            take_back()
        session.grants.after(outcome.run)
        final = outcome.run
        if final is None:
            return _error(printable(f"run_task was refused: {outcome.refused}"))
        summary = (
            f"run {final.id} {final.status.value}"
            + (f" / {final.stop_reason.value}" if final.stop_reason else "")
            + f" after {final.step_count} turn(s)"
        )
        if _stopped_by_user(final):
            summary = f"{STOPPED_BY_USER}: {summary}"
        summary = printable(summary)
        if final.message:
            # the model's last words may quote the screen (a title, a page's text): data
            summary += "\n" + _screen_data("The run's last message", "message", [final.message])
        return _text(
            summary,
            {
                "run_id": final.id,
                "status": final.status.value,
                "stop_reason": final.stop_reason.value if final.stop_reason else None,
                "summary": final.message,
                UNTRUSTED_KEY: ["summary"] if final.message else [],
            },
            error=final.status is not RunStatus.COMPLETED,
        )

    async def _get_run(self, args: GetRunArgs) -> types.CallToolResult:
        run = await self.host.records.get_run(args.run_id)
        if run is None:
            return _error(f"no run {args.run_id!r}")
        steps = await self.host.records.list_steps(run.id)
        lines: list[str] = []
        for step in steps:
            detail = step.error or step.summary
            tool = f" {step.tool}" if step.tool else ""
            said = of_step(step)
            # an action in plain words (its JSON is in the structured content)
            what = step.short_args(60) if said is None or said.generic else f"({said})"
            lines.append(
                f"{step.index:>3} {step.kind.value}{tool} {what} "
                f"{step.status.value}" + (f" - {detail}" if detail else "")
            )
        # a step's summary and error quote the screen (a window's title, an element's name)
        steps_text = f"{_run_line(run)}\n{_screen_data(f'Steps of run {run.id}', 'steps', lines)}"
        content: list[types.ContentBlock] = [types.TextContent(text=steps_text)]
        if args.screenshots:
            shots = [s.screenshot for s in steps if s.kind is StepKind.OBSERVE and s.screenshot]
            shots = shots[-MAX_RUN_SCREENSHOTS:]
            what = f"the last {len(shots)} screenshot(s) of run {run.id}"
            why = await self._screen_handed_out(run.id, what, shots[-1]) if shots else ""
            if why:
                return _error(f"get_run gave no screenshots: {why}")
            for path in shots:
                image = _image_file(self.host.data_dir, path)
                if image is not None:
                    content.append(image)
        return types.CallToolResult(
            content=content,
            structured_content={**run.to_json(), "steps": [step.to_json() for step in steps]},
        )

    # ── the screen leaves this process only as screen_snapshot's policy says ───

    def _screen_policy(self) -> Policy:
        return self.host.permissions.policy(SCREEN_TOOL, Risk.SAFE)

    async def _screen_handed_out(self, run_id: str, what: str, screenshot: str | None) -> str:
        """ "" when `what` may go to the client: allowed, or a person at this desktop allowed it
        (the policy asks; never the client: it is the one that would get it); else why not."""
        policy = self._screen_policy()
        if policy is Policy.ALLOW:
            return ""
        if policy is Policy.DENY:
            return SCREEN_POLICY_DENIES
        approval = ApprovalRequest(
            id=f"{run_id}-screen",
            run_id=run_id,
            index=1,
            tool=SCREEN_TOOL,
            args={},
            reason=f"the MCP client asks for {what}",
            risk=Risk.SAFE,
            offer_run_grant=False,
            timeout_s=self.host.settings.approval_timeout_s,
            screenshot=screenshot,
            caution=f"{what} would go to the MCP client (policies.screen_snapshot asks)",
        )
        answer = await self.gate.ask_person(approval)
        if answer is None:
            return (
                "the screen goes out only with the approval of a person at this desktop, "
                "and nobody could be asked there"
            )
        if answer is ApprovalDecision.DENY:
            return "denied by the user"
        return ""

    async def _stop_all(self) -> types.CallToolResult:
        """Stop everything (here and in every instance on the data dir), as the hotkey does;
        the count once the others answered."""
        told: asyncio.Future[StoppedEverything] = asyncio.get_running_loop().create_future()

        def on_event(event: TaskLoopEvent) -> None:
            if isinstance(event, StoppedEverything) and not told.done():
                told.set_result(event)

        unsubscribe = self.host.subscribe(on_event)
        try:
            here = self.host.stop_everything()
            try:
                async with asyncio.timeout(STOP_ALL_WAIT_S):
                    done = await told
                stopped = done.here + done.elsewhere
            except TimeoutError:
                stopped = here
        finally:
            unsubscribe()
        return _text(f"stopped {stopped} run(s)", {"stopped": stopped})


async def _no_discover(ctx: ServerRequestContext[Any], params: types.RequestParams) -> None:
    """This server speaks the handshake era (2025-11-25), on stdio and HTTP alike: there an
    approval is asked of the client's user in the middle of the call (elicitation/create),
    which the loop's gate awaits. The 2026-07-28 era has no server-to-client request; a
    client that probes for it (`server/discover`) is told no and falls back to `initialize`.
    """
    raise MCPError(types.METHOD_NOT_FOUND, "this server speaks the 2025-11-25 handshake era")


# ── results ──────────────────────────────────────────────────────────────────


def _listed(tool: McpTool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema(),
        annotations=types.ToolAnnotations(
            read_only_hint=tool.read_only,
            destructive_hint=tool.destructive or None,
        ),
    )


def _call_result(name: str, outcome: CallOutcome) -> types.CallToolResult:
    run, action = outcome.run, outcome.action
    if run is None:  # a one-step call's planner is at hand: only a fault refuses it
        return _error(printable(f"{name} was not run: {outcome.refused}"))
    if _stopped_by_user(run):
        return _error(f"{STOPPED_BY_USER}: {name} did not finish (run {run.id})")
    if run.status is not RunStatus.COMPLETED:
        why = (action.error if action is not None else None) or run.message or run.status.value
        not_run = action is None or action.status.value in ("denied", "skipped")
        verb = "was not run" if not_run else "failed"
        # why may quote the screen (a question's caution names a title, a text on it)
        head = printable(f"{name} {verb} (run {run.id}); why:")
        return _error(f"{head}\n{_screen_data(f'Why {name} {verb}', 'result', [why])}")
    if name == "screenshot" and outcome.observation is not None:
        shown = outcome.observation
        block = screen_text_block(shown)
        elements = f"{SCREEN_TEXT_RULE}\n{block}" if block else "(no elements listed)"
        return types.CallToolResult(
            content=[
                types.ImageContent(
                    data=base64.b64encode(shown.image).decode("ascii"), mime_type=shown.mime
                ),
                types.TextContent(text=printable(elements, keep_newlines=True)),
            ],
            structured_content={
                "run_id": run.id,
                "width": shown.width,
                "height": shown.height,
                "elements": len(shown.elements),
            },
        )
    summary = action.summary if action is not None else run.message
    if not summary:
        return _text(f"{name} done", {"run_id": run.id})
    # what an action did quotes the screen ('focused window "…"')
    return _text(_screen_data("What the action did", "result", [summary]), {"run_id": run.id})


def _screen_data(heading: str, label: str, lines: list[str]) -> str:
    """`lines`, which quote the screen, fenced as data under the standing rule that
    instructions there are not the user's (planner/screen_text.py, as every planner
    backend does): the MCP client is a model too."""
    return printable(f"{SCREEN_TEXT_RULE}\n{fenced(heading, label, lines)}", keep_newlines=True)


def _text(
    text: str, structured: dict[str, Any] | None = None, *, error: bool = False
) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured, is_error=error
    )


def _error(text: str) -> types.CallToolResult:
    return _text(text, error=True)


def _stopped_by_user(run: RunView) -> bool:
    return run.status is RunStatus.STOPPED and run.stop_reason is StopReason.USER_STOP


def _run_line(run: RunView) -> str:
    reason = f"/{run.stop_reason.value}" if run.stop_reason else ""
    return printable(f"{run.id}  {run.status.value}{reason}  {run.step_count} turn(s)  {run.goal}")


def _image_file(data_dir: Path, relative: str) -> types.ImageContent | None:
    path = Path(data_dir) / relative
    mime = "image/png" if path.suffix == ".png" else "image/jpeg"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return types.ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime)


# ── asking the client's user, telling it the progress ────────────────────────


def approval_message(approval: ApprovalRequest) -> str:
    """The question the client shows its user: the call, why it asks, what to answer. Its
    quoted parts are escaped (`ApprovalRequest.question`): only our own lines break."""
    # as it will run (a known password field's text stays hidden: the client is not the app)
    choices = (
        "once, session (this tool, for the rest of this MCP session) or deny"
        if approval.offer_run_grant
        else "once or deny"
    )
    return f"{approval.question}\nAnswer {choices}; it is denied in {approval.timeout_s:.0f} s."


def _elicitor(ctx: ServerRequestContext[Any]) -> AskHuman | None:
    """Elicitation to this request's client, when it can be asked; else None."""
    session = ctx.session
    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    if not session.check_client_capability(wanted):
        return None

    async def ask(approval: ApprovalRequest) -> ApprovalDecision | None:
        schema: type[BaseModel] = _OnceOrSession if approval.offer_run_grant else _OnceOnly
        result = await elicit_with_validation(
            session, approval_message(approval), schema, related_request_id=ctx.request_id
        )
        if result.action != "accept":
            return ApprovalDecision.DENY
        answer = getattr(result.data, "answer", "deny")
        return _ANSWERS.get(answer, ApprovalDecision.DENY)

    return ask


def _progress_sender(ctx: ServerRequestContext[Any], progress: ProgressOfRun | None = None) -> Any:
    """A run's events as progress notifications to the client that asked for them."""
    notices = progress or ProgressOfRun()

    async def send(event: TaskLoopEvent) -> None:
        notice = notices(event)
        if notice is None:
            return
        try:
            await ctx.session.report_progress(notice.progress, notice.total, notice.message)
        except Exception:  # noqa: BLE001 - a client that cannot be told must not end the run
            log.debug("progress could not be sent", exc_info=True)

    return send
