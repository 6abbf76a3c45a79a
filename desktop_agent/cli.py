"""The headless command line (DESIGN §5): run, runs, show, serve, stop-all, doctor, routine."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from desktop_agent.core.errors import DesktopAgentError, RefusedToStart
from desktop_agent.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StepFinished,
    TaskLoopEvent,
    event_to_json,
)
from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Risk, RunStatus, RunView
from desktop_agent.core.text import printable, printable_json, visible

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.settings import Settings

log = logging.getLogger("desktop_agent.cli")

EXIT_COMPLETED, EXIT_FAILED, EXIT_STOPPED, EXIT_REFUSED = 0, 1, 2, 3
EXIT_BY_STATUS = {
    RunStatus.COMPLETED: EXIT_COMPLETED,
    RunStatus.FAILED: EXIT_FAILED,
    RunStatus.STOPPED: EXIT_STOPPED,
    RunStatus.INTERRUPTED: EXIT_FAILED,
}


class UsageError(Exception):
    """A bad option or argument: one line on stderr, exit 3."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _positive_int(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range {low}..{high}")
        return value

    return parse


def _profile_name(text: str) -> str:
    from desktop_agent.planner.profiles import AUTO, PROFILE_NAMES

    name = text.strip().lower()
    if name != AUTO and name not in PROFILE_NAMES:
        raise argparse.ArgumentTypeError(
            f"unknown model profile {text!r} (one of: {', '.join((AUTO, *PROFILE_NAMES))})"
        )
    return name


def _tool_list(text: str) -> tuple[str, ...]:
    from desktop_agent.core.builtin_tools import BUILTIN_TOOLS

    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if not names:
        raise argparse.ArgumentTypeError("no tools given")
    known = {spec.name for spec in BUILTIN_TOOLS if spec.offered}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown tool(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="desktop-agent", description="Carry out tasks on this desktop.")
    parser.add_argument("--data-dir", help="where history, screenshots and the API token live")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    run = commands.add_parser("run", help="one run, no window; events on stdout")
    run.add_argument("goal", help="what to do, in words")
    run.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://localhost:11434/v1")
    run.add_argument("--model", help="model name, e.g. qwen2.5vl")
    run.add_argument("--api-key-env", help="environment variable holding the API key")
    run.add_argument("--max-steps", type=_positive_int(1, 500))
    run.add_argument("--max-failures", type=_positive_int(1, 50))
    run.add_argument("--allow", type=_tool_list, help="allowed tools, comma-separated")
    run.add_argument(
        "--approve",
        choices=("ask", "all", "none"),
        default="ask",
        help="ask on the terminal (default; no terminal: deny), all, or none (deny). "
        "'all' never approves a dangerous call (launch_app, a launcher key such as super+r, "
        "a paste, a line typed into a terminal, a password field, a sensitive button) "
        "unless its tool is named with --allow-dangerous",
    )
    run.add_argument(
        "--allow-dangerous",
        type=_tool_list,
        metavar="TOOL,TOOL,...",
        help="with --approve all: also approve these tools' dangerous calls",
    )
    run.add_argument("--vision", choices=("auto", "yes", "no"))
    run.add_argument("--model-profile", type=_profile_name, help="model family (default auto)")
    run.add_argument("--json", action="store_true", help="one JSON object per line per event")

    runs = commands.add_parser("runs", help="run history, newest first")
    runs.add_argument("--json", action="store_true")
    runs.add_argument("--limit", type=_positive_int(1, 100000), default=100)

    show = commands.add_parser("show", help="replay a stored run's events")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true")

    serve = commands.add_parser("serve", help="no window: serve the local API until stopped")
    serve.add_argument("--port", type=_positive_int(0, 65535), default=0)

    mcp = commands.add_parser(
        "mcp", help="serve the agent to an MCP client (stdio; --http: streamable HTTP)"
    )
    mcp.add_argument(
        "--http", action="store_true", help="streamable HTTP on 127.0.0.1 (token as the API's)"
    )
    mcp.add_argument("--port", type=_positive_int(0, 65535), default=0)

    commands.add_parser("stop-all", help="stop every run of every instance on this data dir")
    doctor = commands.add_parser("doctor", help="check display, capture, input, hotkey, model")
    doctor.add_argument("--base-url", help="the model server to check")
    doctor.add_argument("--model", help="the model to check")
    doctor.add_argument("--vision", choices=("auto", "yes", "no"))
    doctor.add_argument("--model-profile", type=_profile_name, help="model family (default auto)")
    doctor.add_argument(
        "--calibrate",
        action="store_true",
        help="show targets on the screen, ask the model to click each, report the error in "
        "pixels and the coordinate space that fits; offers to save it",
    )
    from desktop_agent.routines.cli import add_parser as add_routine_parser

    add_routine_parser(commands, _Parser)
    # every sub-command takes --data-dir, before or after its name
    for sub in commands.choices.values():
        if not any(action.dest == "data_dir" for action in sub._actions):
            sub.add_argument("--data-dir", default=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str]) -> int:
    try:
        args = build_parser().parse_args(list(argv))
    except UsageError as error:
        print(f"desktop-agent: {error}", file=sys.stderr)
        return EXIT_REFUSED
    if args.command is None:
        from desktop_agent.app import run_app

        return run_app(list(argv), data_dir=args.data_dir)
    try:
        data_dir = _prepare_data_dir(args.data_dir)
        _log_to_file(data_dir)
        handler = _COMMANDS[args.command]
        return handler(args, data_dir)
    except DesktopAgentError as error:
        print(f"desktop-agent: {error}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return EXIT_STOPPED


def _prepare_data_dir(value: str | None) -> Path:
    from desktop_agent.core.errors import ConfigError
    from desktop_agent.settings import make_data_dir, resolve_data_dir

    data_dir = resolve_data_dir(value)
    try:
        make_data_dir(data_dir)
        probe = data_dir / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise ConfigError(f"data dir {data_dir} cannot be written: {error.strerror}") from None
    return data_dir


def _log_to_file(data_dir: Path) -> None:
    """Notices go to <data dir>/desktop-agent.log (rotated, 0600), never to stderr (DESIGN §5)."""
    from desktop_agent.logs import log_to_file

    log_to_file(data_dir)


def _settings_for(args: argparse.Namespace) -> Settings:
    from pydantic import ValidationError

    from desktop_agent.core.errors import ConfigError
    from desktop_agent.settings import Settings, load_settings, validation_messages

    settings = load_settings()
    overrides = {
        key: value
        for key, value in (
            ("base_url", getattr(args, "base_url", None)),
            ("model", getattr(args, "model", None)),
            ("api_key_env", getattr(args, "api_key_env", None)),
            ("vision", getattr(args, "vision", None)),
            ("model_profile", getattr(args, "model_profile", None)),
        )
        if value is not None
    }
    if not overrides:
        return settings
    try:
        return Settings.model_validate({**settings.model_dump(), **overrides})
    except ValidationError as error:
        raise ConfigError("; ".join(validation_messages(error))) from None


# ── run ──────────────────────────────────────────────────────────────────────


def _cmd_run(args: argparse.Namespace, data_dir: Path) -> int:
    if not args.goal.strip():
        print("desktop-agent: the goal is empty", file=sys.stderr)
        return EXIT_REFUSED
    settings = _settings_for(args)
    return asyncio.run(_run(args, data_dir, settings))


async def _run(args: argparse.Namespace, data_dir: Path, settings: Settings) -> int:
    from desktop_agent.agent import Agent

    out = sys.stdout
    gate = _gate_for(args.approve, args.allow_dangerous or ())
    agent = await Agent.open(data_dir, settings, gate=gate)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(agent.close)
        # every stop (signal, hotkey, API) is a stop_all here; one that comes before the run
        # exists still keeps the run from acting
        stops_before = agent.runner.stop_all_count
        _stop_on_signals(agent, stack)
        port = await _serve_api(agent, stack)
        _stop_on_hotkey(agent, settings, stack)
        takeover = _TakeoverNotes(agent, port, as_json=args.json)
        try:
            # admitted at once (stop reaches it); the model is checked inside the run, and a
            # refused run is forgotten: history holds only runs that started
            handle = await agent.launch(
                args.goal,
                vision=args.vision,
                max_steps=args.max_steps,
                max_failures=args.max_failures,
                allowed_tools=args.allow,
                stops_seen=stops_before,
            )
        except RefusedToStart as error:
            print(refusal_line(error), file=sys.stderr)
            return EXIT_REFUSED
        try:
            final = await _print_events(
                handle.events, out, as_json=args.json, pause_line=takeover.pause_line
            )
        except RefusedToStart as error:
            print(refusal_line(error), file=sys.stderr)
            return EXIT_REFUSED
    return EXIT_BY_STATUS.get(final.status, EXIT_FAILED) if final else EXIT_FAILED


def refusal_line(error: RefusedToStart) -> str:
    """A refused run's one line; an unreachable server's ends with the options of a model
    found on this machine, or how to get one."""
    found = getattr(error, "found", None)
    advice = f"; {found.advice()}" if found is not None else ""
    return f"desktop-agent: {error}{advice}"


async def _serve_api(agent: Agent, stack: AsyncExitStack, *, face: str = "run") -> int:
    from desktop_agent.api.server import ApiServer

    # a run's API serves controls only: its approvals follow its own --approve (an MCP
    # server's, its own gate)
    server = ApiServer(agent, controls_only=True, face=face)
    port = await server.start()
    stack.push_async_callback(server.close)
    log.info("local API on 127.0.0.1:%d (controls only)", port)
    return port


def _stop_on_signals(agent: Agent, stack: AsyncExitStack) -> None:
    """SIGINT / SIGTERM stop every run of this process."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, agent.stop_all)
        stack.callback(loop.remove_signal_handler, signum)


def _stop_on_hotkey(agent: Agent, settings: Settings, stack: AsyncExitStack) -> None:
    """The global stop hotkey stops every run here and in every other instance on the data dir.

    A hotkey another program (or instance) holds is a notice in the log, not an error:
    the instance that holds it stops this one through the local API.
    """
    if not os.environ.get("DISPLAY") and sys.platform != "win32":
        log.info("no display: the global stop hotkey is off")
        return
    loop = asyncio.get_running_loop()
    reaching_others: set[asyncio.Task[int]] = set()

    def on_hotkey() -> None:
        log.info("stop hotkey pressed")
        agent.stop_all()
        from desktop_agent.api.instances import stop_all_instances

        task = loop.create_task(stop_all_instances(agent.data_dir, exclude_pid=os.getpid()))
        reaching_others.add(task)
        task.add_done_callback(reaching_others.discard)

    async def finish_reaching_others() -> None:
        if reaching_others:
            await asyncio.gather(*reaching_others, return_exceptions=True)

    try:
        from desktop_agent.desktop.hotkey import start_global_hotkey

        handle = start_global_hotkey(settings.stop_hotkey, on_hotkey, loop)
    except Exception as error:  # noqa: BLE001 - the run goes on without a hotkey
        log.warning("global stop hotkey %s unavailable: %s", settings.stop_hotkey, error)
        return
    log.info("global stop hotkey %s is on", settings.stop_hotkey)
    stack.push_async_callback(finish_reaching_others)
    stack.callback(handle.stop)


class _TakeoverNotes:
    """The user's own input pauses the run (setting `pause_on_user_input`); the human output
    says so and how to resume through the local API. With --json, stdout stays events only:
    the hint goes to stderr."""

    def __init__(self, agent: Agent, port: int, *, as_json: bool) -> None:
        self._agent = agent
        self._port = port
        self._as_json = as_json
        self._takeover = agent.watch_user_input()
        if self._takeover is not None:
            self._takeover.add_listener(self)

    def resume_hint(self, run_id: str) -> str:
        from desktop_agent.api.instances import TOKEN_FILE

        token = self._agent.data_dir / TOKEN_FILE
        return (
            f"resume: curl -X POST -H \"Authorization: Bearer $(cat '{token}')\" "
            f"http://127.0.0.1:{self._port}/api/tasks/{run_id}/resume"
        )

    def pause_line(self, run: RunView) -> str:
        """The human line of a run_paused event."""
        if self._takeover is None or run.id not in self._takeover.paused_by_user:
            return "     paused"
        return f"     paused: you took over the mouse or keyboard; {self.resume_hint(run.id)}"

    def took_over(self, run_ids: tuple[str, ...]) -> None:
        if self._as_json:
            for run_id in run_ids:
                print(f"desktop-agent: paused: you took over; {self.resume_hint(run_id)}",
                      file=sys.stderr, flush=True)  # fmt: skip

    def unavailable(self, why: str) -> None:
        print(
            f"desktop-agent: your own input will not pause the run: {why}",
            file=sys.stderr,
            flush=True,
        )


async def _print_events(
    events: AsyncIterator[TaskLoopEvent],
    out: TextIO,
    *,
    as_json: bool,
    pause_line: Callable[[RunView], str] | None = None,
) -> RunView | None:
    final: RunView | None = None
    async with aclosing(events) as stream:  # type: ignore[type-var]
        async for event in stream:
            if as_json:
                line = _json_line(event_to_json(event))
            elif isinstance(event, RunPaused) and pause_line is not None:
                line = printable(pause_line(event.run))
            else:
                line = _human(event)
            if line:
                out.write(line + "\n")
                out.flush()
            if isinstance(event, RunFinished):
                final = event.run
    return final


def _json_line(value: object) -> str:
    """One JSON line; characters that would act on a terminal are \\u escapes (same value)."""
    return printable_json(json.dumps(value, ensure_ascii=False))


def _human(event: TaskLoopEvent) -> str:
    """One line for a person: the screen's and the model's text cannot steer the terminal."""
    return printable(_human_line(event))


def _human_line(event: TaskLoopEvent) -> str:
    if isinstance(event, RunStarted):
        run = event.run
        return f"run {run.id}: {run.goal!r} with {run.model} (max {run.max_steps} steps)"
    if isinstance(event, StepFinished):
        step = event.step
        duration = f"{step.duration_ms:.0f} ms" if step.duration_ms is not None else "-"
        detail = step.error or step.summary
        return (
            f"{step.index:>4} {step.kind.value:<7} {(step.tool or '-'):<15} "
            f"{step.short_args(36):<36} {step.status.value:<7} {duration:>8}  {detail}"
        )
    if isinstance(event, RunPaused):
        return "     paused"
    if isinstance(event, RunResumed):
        return "     resumed"
    if isinstance(event, ApprovalRequested):
        # what will be typed, as the person asked must see it (the stored row hides it)
        shown = json.dumps(event.approval.to_show)
        return f"     approval asked: {event.approval.tool} {shown}"
    if isinstance(event, ApprovalResolved):
        timed_out = " (timed out)" if event.by == "timeout" else ""
        return f"     approval: {event.decision.value}{timed_out}"
    if isinstance(event, RunFinished):
        return _summary(event.run)
    return ""


def _summary(run: RunView) -> str:
    elapsed = ""
    if run.started_at and run.finished_at:
        elapsed = f" in {(run.finished_at - run.started_at).total_seconds():.1f} s"
    reason = f" / {run.stop_reason.value}" if run.stop_reason else ""
    message = f": {run.message}" if run.message else ""
    return (
        f"run {run.id} {run.status.value}{reason} after {run.step_count} turn(s){elapsed}"
        f"; {usage_text(run)}{message}"
    )


def usage_text(run: RunView) -> str:
    """The run's model tokens and cost, e.g. "1,234 + 56 tokens (estimated), $0.0012"."""
    about = " (estimated)" if run.tokens_estimated else ""
    cost = "cost unknown" if run.cost is None else f"${run.cost:.4f}"
    return f"{run.prompt_tokens:,} + {run.completion_tokens:,} tokens{about}, {cost}"


# ── approvals on the terminal ────────────────────────────────────────────────


class AutoGate:
    """Answers every approval the same way (--approve all / none), except that a dangerous
    call — a dangerous tool (launch_app), or a call that asks every time (a launcher key,
    a paste, a line into a terminal, a password field, a sensitive target) — is allowed
    only for a tool named in `dangerous_allowed` (--allow-dangerous), else denied."""

    def __init__(self, answer: ApprovalDecision, dangerous_allowed: Sequence[str] = ()) -> None:
        self.answer = answer
        self.dangerous_allowed = frozenset(dangerous_allowed)

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        dangerous = approval.risk is Risk.DANGEROUS or bool(approval.caution)
        if dangerous and approval.tool not in self.dangerous_allowed:
            return ApprovalDecision.DENY
        return self.answer


#: an answer sooner than this after the question was shown was not typed in answer to it
MIN_ANSWER_S = 0.5


class TerminalGate:
    """Asks on the terminal: once / for this run / deny. No terminal → deny.

    Only what the user types after the question is shown answers it: the terminal's pending
    input is thrown away once the question is out (a line typed ahead, maybe by the agent
    itself into this very terminal, approves nothing), a line that comes within
    `min_answer_s` of the question is thrown away too (keystrokes still on their way from
    the agent's last action: nobody reads a question that fast), and the answer is read
    from the terminal itself, never from a buffer filled before. The loop's timeout denies
    too; reading uses the event loop's reader, so a stop or a timeout cancels the question
    at once.
    """

    def __init__(
        self,
        stdin: TextIO = sys.stdin,
        prompt_out: TextIO = sys.stderr,
        *,
        min_answer_s: float = MIN_ANSWER_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stdin = stdin
        self._out = prompt_out
        self.min_answer_s = min_answer_s
        self._clock = clock

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        if not self._stdin.isatty():
            return ApprovalDecision.DENY
        choices = "[o]nce / [r]un / [d]eny" if approval.offer_run_grant else "[o]nce / [d]eny"
        # the arguments and the reason are the model's: shown, never acted on by the terminal
        arguments = visible(json.dumps(approval.to_show, ensure_ascii=False))
        caution = f"  asks every time: {approval.caution}\n" if approval.caution else ""
        self._out.write(
            f"\nallow {approval.tool} {arguments}?\n"
            f"  reason: {printable(approval.reason)}\n{caution}  {choices} "
            f"(denies in {approval.timeout_s:.0f} s): "
        )
        self._out.flush()
        line = await self._answer(self._stdin.fileno())
        answer = (line or "").strip().lower()[:1]
        if answer == "o":
            return ApprovalDecision.ONCE
        if answer == "r" and approval.offer_run_grant:
            return ApprovalDecision.RUN
        return ApprovalDecision.DENY

    async def _answer(self, fd: int) -> str | None:
        """The first line typed on `fd` at least `min_answer_s` after the question was shown
        (what was typed before is thrown away); None when the terminal is gone."""
        discard_pending_input(fd)
        asked_at = self._clock()
        while True:
            line = await _read_line(fd)
            if line is None or self._clock() - asked_at >= self.min_answer_s:
                return line
            discard_pending_input(fd)
            self._out.write("\n  (that came before the question could be read; answer again): ")
            self._out.flush()


def discard_pending_input(fd: int) -> None:
    """Throw away what was typed on the terminal `fd` and not read yet (POSIX: the tty's
    input queue; Windows: the console's key buffer)."""
    if sys.platform == "win32":
        import msvcrt

        while msvcrt.kbhit():
            msvcrt.getwch()
        return
    import termios

    termios.tcflush(fd, termios.TCIFLUSH)


async def _read_line(fd: int) -> str | None:
    """The next line typed on `fd`, read from the fd itself (os.read: no stream buffer can
    hold a line typed before the question); None when the terminal is gone."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[str | None] = loop.create_future()
    received = bytearray()

    def on_readable() -> None:
        if ready.done():
            return
        try:
            chunk = os.read(fd, 1024)
        except OSError:  # the terminal went away: no answer, which denies
            chunk = b""
        if not chunk:
            ready.set_result(None)
            return
        received.extend(chunk)
        if b"\n" in received:
            ready.set_result(received.split(b"\n", 1)[0].decode("utf-8", "replace"))

    loop.add_reader(fd, on_readable)
    try:
        return await ready
    finally:
        loop.remove_reader(fd)


def _gate_for(mode: str, dangerous_allowed: Sequence[str] = ()) -> AutoGate | TerminalGate:
    if mode == "all":
        return AutoGate(ApprovalDecision.ONCE, dangerous_allowed)
    if mode == "none":
        return AutoGate(ApprovalDecision.DENY)
    return TerminalGate()


# ── runs, show, serve, stop-all, doctor ──────────────────────────────────────


def _cmd_runs(args: argparse.Namespace, data_dir: Path) -> int:
    async def go() -> list[RunView]:
        from desktop_agent.store import SqliteRunRepository

        repo = SqliteRunRepository.open(data_dir)
        try:
            return await repo.list_runs(limit=args.limit)
        finally:
            repo.close()

    runs = asyncio.run(go())
    if args.json:
        print(_json_line([run.to_json() for run in runs]), flush=True)
        return 0
    for run in runs:
        created = run.created_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        reason = f"/{run.stop_reason.value}" if run.stop_reason else ""
        status = run.status.value + reason
        print(printable(f"{run.id}  {created}  {status:<24} {run.step_count:>3} turns  {run.goal}"))
    if not runs:
        print("no runs yet")
    return 0


def _cmd_show(args: argparse.Namespace, data_dir: Path) -> int:
    async def go() -> RunView | None:
        from desktop_agent.core.replay import replay_run
        from desktop_agent.store import SqliteRunRepository

        repo = SqliteRunRepository.open(data_dir)
        try:
            return await _print_events(replay_run(repo, args.run_id), sys.stdout, as_json=args.json)
        finally:
            repo.close()

    asyncio.run(go())
    return 0


def _cmd_serve(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.settings import load_settings

    async def go() -> int:
        from desktop_agent.agent import Agent
        from desktop_agent.api.server import ApiServer

        agent = await Agent.open(data_dir, load_settings())
        async with AsyncExitStack() as stack:
            stack.push_async_callback(agent.close)
            server = ApiServer(agent, face="serve")
            port = await server.start(args.port)
            stack.push_async_callback(server.close)
            token_file = data_dir / "api-token"
            print(f"serving the local API on http://127.0.0.1:{port}/api (token: {token_file})")
            sys.stdout.flush()
            # the user's own input pauses the API's runs too; resumed through the API
            agent.watch_user_input()
            stopped = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, stopped.set)
            await stopped.wait()
            agent.stop_all()
        return 0

    return asyncio.run(go())


def _cmd_mcp(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.mcp.serve import serve_mcp

    return asyncio.run(serve_mcp(data_dir, _settings_for(args), http=args.http, port=args.port))


def _cmd_stop_all(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.api.instances import stop_all_instances

    stopped = asyncio.run(stop_all_instances(data_dir))
    print(f"stopped {stopped} run(s)", flush=True)
    return 0


def _cmd_doctor(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.desktop.doctor import run_doctor

    settings = _settings_for(args)
    if getattr(args, "model_profile", None):
        settings = settings.model_copy(update={"model_profile": args.model_profile})
    if args.calibrate:
        return _calibrate(settings)
    items = list(run_doctor())
    items.extend(asyncio.run(_model_checks(settings)))
    for item in items:
        mark = "ok  " if item.ok else "FAIL"
        # a detail may quote the model server's answer: shown, never acted on
        print(printable(f"{mark} {item.name:<10} {item.detail}"))
        if not item.ok and item.fix:
            print(f"     {'':<10} fix: {item.fix}")
    _print_servers_found(settings)
    return 0 if all(item.ok for item in items) else 1


def _print_servers_found(settings: Settings) -> None:
    """The doctor's last word: the model servers on this machine and the exact options to
    use one, or the ways to get one."""
    from desktop_agent.core.model_servers import run_options, ways_to_get_one
    from desktop_agent.planner.discovery import discover

    found = asyncio.run(discover(settings.probe_ports))
    print()
    if found.servers:
        ports = ", ".join(str(port) for port in found.ports)
        print(f"model servers on this machine (127.0.0.1, ports {ports}):")
        for line in found.lines():
            # names are the servers' own: shown, never acted on by the terminal
            print(printable(f"  {line}"))
    else:
        print(found.lines()[0])
    best = found.best()
    if best is not None:
        print(printable(f'use it: desktop-agent run "GOAL" {run_options(*best)}'))
        return
    if found.servers:
        print(f"  {found.advice()}")
    print("ways to get one:")
    for way in ways_to_get_one(sys.platform):
        print(f"  {way.title}: {way.note}")
        for command in way.commands:
            print(f"      {command}")


async def _model_checks(settings: Settings) -> list[Any]:
    from desktop_agent.desktop.doctor import DoctorItem
    from desktop_agent.planner import check_reachable, resolve_vision
    from desktop_agent.settings import api_key_for

    api_key = await asyncio.to_thread(api_key_for, settings.base_url, settings)
    try:
        await check_reachable(settings.base_url, api_key)
    except DesktopAgentError as error:
        return [DoctorItem("model", False, str(error), "start the model server or set --base-url")]
    verdict = await resolve_vision(
        base_url=settings.base_url, model=settings.model, api_key=api_key, setting=settings.vision
    )
    from desktop_agent.planner.profiles import resolve_profile

    profile = resolve_profile(settings.model, settings.model_profile, settings.model_coordinates)
    return [
        DoctorItem("model", True, f"{settings.model} at {settings.base_url}", ""),
        DoctorItem(
            "profile",
            True,
            f"{profile.name} ({settings.model_profile}): {profile.note}; coordinates "
            f"{profile.coordinates}, answers as {profile.grammar}",
            "",
        ),
        DoctorItem(
            "vision",
            verdict.can_see,
            f"{verdict.detail} ({verdict.source})",
            'set vision = "yes" in settings.toml or pass --vision yes if the model can see',
        ),
    ]


def _calibrate(settings: Settings) -> int:
    """`doctor --calibrate`: the calibration window; the report on stdout; Save writes
    `model_coordinates` into the settings file (the file's own values, not this command's
    overrides)."""
    from desktop_agent.app import _display_problem
    from desktop_agent.settings import (
        Settings,
        api_key_for,
        load_settings,
        save_settings,
        settings_path,
    )

    problem = _display_problem(os.environ)
    if problem:
        print(f"desktop-agent: {problem}", file=sys.stderr)
        return EXIT_REFUSED
    import qasync
    from PySide6.QtWidgets import QApplication

    from desktop_agent.ui.calibration import calibrate_in_window

    def save(space: str) -> None:
        path = settings_path()
        stored = load_settings(path, env={})
        data = {**stored.model_dump(), "model_coordinates": space}
        written = save_settings(Settings.model_validate(data), path)
        print(f'saved model_coordinates = "{space}" in {written}', flush=True)

    def show(text: str) -> None:
        print(text, flush=True)
        print("press Save in the window to keep its finding; Close or Escape ends", flush=True)

    app = QApplication.instance() or QApplication(["desktop-agent"])
    api_key = api_key_for(settings.base_url, settings)
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        report = runner.run(calibrate_in_window(settings, api_key, save=save, on_report=show))
    return 0 if report is not None else 1


def _cmd_routine(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.routines.cli import command

    return command(args, data_dir)


_COMMANDS: dict[str, Callable[[argparse.Namespace, Path], int]] = {
    "run": _cmd_run,
    "routine": _cmd_routine,
    "runs": _cmd_runs,
    "show": _cmd_show,
    "serve": _cmd_serve,
    "mcp": _cmd_mcp,
    "stop-all": _cmd_stop_all,
    "doctor": _cmd_doctor,
}
