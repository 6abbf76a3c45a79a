"""The sub-commands: run, runs, show, serve, stop-all, doctor, … (DESIGN §5)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_agent.cli.exits import EXIT_FAILED, EXIT_REFUSED
from desktop_agent.cli.gate import gate_for
from desktop_agent.cli.output import EXIT_BY_STATUS, json_line, print_events
from desktop_agent.cli.setup import log_to_file as log_to_file
from desktop_agent.cli.setup import prepare_data_dir as prepare_data_dir
from desktop_agent.cli.stop_all import cmd_stop_all
from desktop_agent.core.errors import DesktopAgentError, RefusedToStart
from desktop_agent.core.models import RunView
from desktop_agent.core.text import printable

if TYPE_CHECKING:
    from desktop_agent.agent import Agent
    from desktop_agent.settings import Settings

log = logging.getLogger("desktop_agent.cli")


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
            ("grounder_base_url", getattr(args, "grounder_url", None)),
            ("grounder_model", getattr(args, "grounder_model", None)),
            # a grounding model named on the command line is meant to be used
            (
                "grounding",
                getattr(args, "grounding", None)
                or ("grounder" if getattr(args, "grounder_model", None) else None),
            ),
        )
        if value is not None
    }
    if not overrides:
        return settings
    try:
        return Settings.model_validate({**settings.model_dump(), **overrides})
    except ValidationError as error:
        raise ConfigError("; ".join(validation_messages(error))) from None


def _cmd_run(args: argparse.Namespace, data_dir: Path) -> int:
    if not args.goal.strip():
        print("desktop-agent: the goal is empty", file=sys.stderr)
        return EXIT_REFUSED
    settings = _settings_for(args)
    return asyncio.run(_run(args, data_dir, settings))


async def _run(args: argparse.Namespace, data_dir: Path, settings: Settings) -> int:
    from desktop_agent.agent import Agent

    out = sys.stdout
    gate = gate_for(args.approve, args.allow_dangerous or ())
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
            final = await print_events(
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
        print(json_line([run.to_json() for run in runs]), flush=True)
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
            return await print_events(replay_run(repo, args.run_id), sys.stdout, as_json=args.json)
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
        await _grounding_check(settings, profile.grounding),
    ]


async def _grounding_check(settings: Settings, profile_default: str) -> Any:
    """How clicks are refined; with a grounding model, whether its server answers."""
    from desktop_agent.desktop.doctor import DoctorItem
    from desktop_agent.planner import check_reachable
    from desktop_agent.planner.profiles import resolve_profile
    from desktop_agent.settings import api_key_for

    mode = profile_default if settings.grounding == "auto" else settings.grounding
    how = f"{mode} ({settings.grounding})"
    if mode == "off":
        return DoctorItem("grounding", True, f"{how}: clicks go where the model says", "")
    if mode == "zoom":
        return DoctorItem("grounding", True, f"{how}: the model looks again on a crop", "")
    url = settings.grounder_base_url or settings.base_url
    key = await asyncio.to_thread(api_key_for, url, settings)
    try:
        await check_reachable(url, key)
    except DesktopAgentError as error:
        fix = "start the grounding model's server or set grounder_base_url / --grounder-url"
        return DoctorItem("grounding", False, f"{how}: {error}", fix)
    grounder = resolve_profile(settings.grounder_model, settings.grounder_profile)
    return DoctorItem(
        "grounding",
        True,
        f"{how}: {settings.grounder_model} at {url}, profile {grounder.name} "
        f"({grounder.point_format} answers, coordinates {grounder.coordinates})",
        "",
    )


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


COMMANDS: dict[str, Callable[[argparse.Namespace, Path], int]] = {
    "run": _cmd_run,
    "routine": _cmd_routine,
    "runs": _cmd_runs,
    "show": _cmd_show,
    "serve": _cmd_serve,
    "mcp": _cmd_mcp,
    "stop-all": cmd_stop_all,
    "doctor": _cmd_doctor,
}
