"""The sub-commands: run, runs, show, serve, stop-all, doctor, … (DESIGN §5)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_agent.cli.exits import EXIT_REFUSED, EXIT_STOPPED
from desktop_agent.cli.gate import gate_for
from desktop_agent.cli.output import TakeoverNotes, json_line, padded, print_events
from desktop_agent.cli.running import run_on_terminal
from desktop_agent.cli.setup import log_to_file as log_to_file
from desktop_agent.cli.setup import prepare_data_dir as prepare_data_dir
from desktop_agent.cli.stop_all import cmd_stop_all
from desktop_agent.cli.words import tr, translator
from desktop_agent.core.models import RunView
from desktop_agent.core.text import printable

if TYPE_CHECKING:
    from desktop_agent.core.model_servers import Discovery
    from desktop_agent.model_check import ModelCheck
    from desktop_agent.settings import Settings

    #: the one model check as the doctor asks it (model_check.py `check_model`'s call)
    Check = Callable[..., Awaitable[ModelCheck]]

log = logging.getLogger("desktop_agent.cli")
#: the doctor's line of the API key check (its name, as the other checks' names, not translated)
API_KEY = "api key"
T = TypeVar("T")


def settings_for(args: argparse.Namespace) -> Settings:
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
            ("monitor", getattr(args, "monitor", None)),
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
        print("desktop-agent: " + tr("the goal is empty"), file=sys.stderr)
        return EXIT_REFUSED
    settings = settings_for(args)
    return asyncio.run(_run(args, data_dir, settings))


async def _run(args: argparse.Namespace, data_dir: Path, settings: Settings) -> int:
    from desktop_agent.host import Host, RunRequest

    gate = gate_for(args.approve, args.allow_dangerous or ())
    # a stop-all since the process started (it could not find this one) stops the run
    mark = getattr(args, "stop_mark", None)
    api = getattr(args, "local_api", None)  # the top floor's (desktop_agent/launch.py)
    async with Host.serving(data_dir, settings, gate=gate, stop_mark=mark, local_api=api) as host:
        return await run_on_terminal(
            host,
            lambda ready: RunRequest(
                args.goal,
                vision=args.vision,
                max_steps=args.max_steps,
                max_failures=args.max_failures,
                allowed_tools=args.allow,
                model_profile=getattr(args, "model_profile", None),
                monitor=getattr(args, "monitor", None),
                ready=ready,
            ),
            as_json=args.json,
        )


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
        print(json_line([run.to_json() for run in runs]), flush=True)
        return 0
    for run in runs:
        created = run.created_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        status = tr(run.status.value)
        if run.stop_reason:
            status += "/" + tr(run.stop_reason.value)
        turns = tr("{count} turns", count=f"{run.step_count:>3}")
        print(printable(f"{run.id}  {created}  {padded(status, 24)} {turns}  {run.goal}"))
    if not runs:
        print(tr("no runs yet"))
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
    """The host with no window: the local API (its runs, approvals through it), the stop
    hotkey, the takeover watch, until SIGINT / SIGTERM."""
    from desktop_agent.settings import load_settings

    async def go() -> int:
        from desktop_agent.host import Face, Host
        from desktop_agent.host.person import person_asker

        stopped = asyncio.Event()
        face = Face("serve", api="full", port=args.port, on_signal=stopped.set)
        api = getattr(args, "local_api", None)  # the top floor's (desktop_agent/launch.py)
        # a question only a person answers: the app's person, else the dialog's own
        # process, else denied; never an API client (host/person.py)
        person = person_asker(data_dir)
        async with Host.serving(
            data_dir, load_settings(), local_api=api, ask_person=person
        ) as host:
            TakeoverNotes(host, as_json=True)
            # the user's own input pauses the API's runs too; resumed through the API
            await host.turn_on(face)
            token_file = data_dir / "api-token"
            url = f"http://127.0.0.1:{host.api_port}/api"
            print(tr("serving the local API on {url} (token: {file})", url=url, file=token_file))
            sys.stdout.flush()
            await stopped.wait()
        return 0

    return asyncio.run(go())


def doctor_settings(args: argparse.Namespace) -> Settings:
    """The settings `doctor` checks: the file's, with the command line's overrides."""
    settings = settings_for(args)
    if getattr(args, "model_profile", None):
        settings = settings.model_copy(update={"model_profile": args.model_profile})
    return settings


def _cmd_doctor(args: argparse.Namespace, data_dir: Path) -> int:
    """`doctor` (its checks, or `--stop-shortcut`); `--calibrate` opens a window, which the
    program's entry hands in (desktop_agent/launch `cmd_doctor`) in this one's place."""
    from desktop_agent.desktop.doctor import run_doctor

    if args.calibrate:
        raise TypeError("doctor --calibrate opens a window: the program's entry does (launch)")
    settings = doctor_settings(args)
    stop_mark = getattr(args, "stop_mark", None)
    if getattr(args, "stop_shortcut", None):
        return _stop_shortcut(args.stop_shortcut)
    items = list(run_doctor())
    if settings.injection_guard == "off":
        items.append(_injection_guard_off())
    items.append(_ocr_check(guard=settings.injection_guard == "on"))
    return asyncio.run(_doctor_asks(settings, data_dir, items, stop_mark))


def _stop_shortcut(binding: str) -> int:
    """`doctor --stop-shortcut`: the desktop's own shortcut to stop-all (Wayland has no key
    grab for a program); 1 with the reason on one line when it cannot be set."""
    from desktop_agent.desktop.stop_shortcut import ShortcutError, set_stop_shortcut

    try:
        print(set_stop_shortcut(binding))
    except ShortcutError as error:
        said = tr("the stop shortcut was not set: {error}", error=error)
        print(f"desktop-agent: {said}", file=sys.stderr)
        return 1
    return 0


def _injection_guard_off() -> Any:
    from desktop_agent.desktop.doctor import DoctorItem

    return DoctorItem(
        "injection",
        False,
        tr(
            "the injection guard is off: text on the screen that gives orders to an AI is not "
            "asked about, and under a blanket approval the model may act on it unasked"
        ),
        tr('set injection_guard = "on" in settings.toml'),
    )


def _ocr_check(*, guard: bool) -> Any:
    """The OCR program the injection guard reads pixel-only regions with (desktop/ocr.py):
    its path and version. Missing, or not answering `--version`, while the guard is on where
    OCR reads: a FAIL with the fix, as a missing xclip and the guard turned off are (the guard
    then never judges a notification's order: docs/architecture.md). Where nothing would be
    read anyway (the guard off, Windows) the line says so and passes."""
    from desktop_agent.desktop.doctor import DoctorItem
    from desktop_agent.desktop.ocr import OCR_PROGRAM, find_ocr_program, ocr_used_here

    found = find_ocr_program()
    if found.path is None:
        said = tr("{program} not found on PATH", program=OCR_PROGRAM)
        fix = tr(
            "install {program} (Debian/Ubuntu: sudo apt install tesseract-ocr), or put it on PATH",
            program=OCR_PROGRAM,
        )
    elif found.version:
        said = tr("{version} at {path}", version=found.version, path=found.path)
        fix = ""
    else:
        said = tr("{path} does not run ({error})", path=found.path, error=found.error)
        fix = tr(
            "check that `{path} --version` runs, or reinstall it (Debian/Ubuntu: sudo apt "
            "install --reinstall tesseract-ocr)",
            path=found.path,
        )
    if not guard:
        return DoctorItem(
            "ocr", True, tr("{said}; not used while the injection guard is off", said=said)
        )
    if not ocr_used_here():
        why = tr(
            "{said}; not used on Windows: UI Automation lists no region that only its pixels show",
            said=said,
        )
        return DoctorItem("ocr", True, why)
    if found.version:
        return DoctorItem("ocr", True, said)
    blind = tr(
        "{said}: text in notifications and images is not read by the injection guard",
        said=said,
    )
    return DoctorItem("ocr", False, blind, fix)


async def _doctor_asks(
    settings: Settings, data_dir: Path, items: list[Any], stop_mark: str | None
) -> int:
    """The doctor's questions to the model servers (its model, grounding and the servers on
    this machine), asked through a Host of its own, which holds them as it holds the app's
    (host.py `Host._held`): a stop gives up the request in flight and nothing is asked after —
    SIGINT/SIGTERM, and a stop-all since this process started (`stop_mark`: another process's
    `desktop-agent stop-all`, an instance's stop hotkey or Stop all), caught through its mark
    while it asks. Stopped: exit 2, what was found so far printed."""
    from functools import partial

    from desktop_agent.core.errors import StopRequested
    from desktop_agent.host import Face, Host

    # no run, no API, no hotkey, no takeover watch: the signals alone (Host.turn_on)
    face = Face("doctor", api="", hotkey=False, takeover=False)
    async with Host.serving(data_dir, settings, stop_mark=stop_mark) as host:
        await host.turn_on(face)
        asked_at = host.stops  # the stops since the process started are caught up on its mark
        try:
            try:
                check = partial(host.check_model, asked_at=asked_at)
                items += await _model_checks(settings, check)
            finally:
                _print_items(items)
            found = await host.find_model_servers(asked_at=asked_at)
        except StopRequested:
            said = tr("stopped: the model server is asked nothing more")
            print(f"desktop-agent: {said}", file=sys.stderr)
            return EXIT_STOPPED
    _print_servers_found(found)
    return 0 if all(item.ok for item in items) else 1


def _print_items(items: list[Any]) -> None:
    for item in items:
        mark = padded(tr("ok") if item.ok else tr("FAIL"), 4)
        # a detail may quote the model server's answer: shown, never acted on
        print(printable(f"{mark} {item.name:<10} {item.detail}"))
        if not item.ok and item.fix:
            print(f"     {'':<10} " + tr("fix: {fix}", fix=item.fix))


def _print_servers_found(found: Discovery) -> None:
    """The doctor's last word: the model servers on this machine and the exact options to
    use one, or the ways to get one."""
    from desktop_agent.core.model_servers import CONTEXT, run_options, ways_to_get_one

    words = translator(CONTEXT)
    print()
    if found.servers:
        ports = ", ".join(str(port) for port in found.ports)
        print(tr("model servers on this machine (127.0.0.1, ports {ports}):", ports=ports))
        for line in found.lines(words):
            # names are the servers' own: shown, never acted on by the terminal
            print(printable(f"  {line}"))
    else:
        print(found.lines(words)[0])
    best = found.best()
    if best is not None:
        command = f'desktop-agent run "GOAL" {run_options(*best)}'
        print(printable(tr("use it: {command}", command=command)))
        return
    if found.servers:
        print(f"  {found.advice(words)}")
    print(tr("ways to get one:"))
    for way in ways_to_get_one(sys.platform):
        print(tr("  {title}: {note}", title=words(way.title), note=words(way.note)))
        for command in way.commands:
            print(f"      {command}")


async def _model_checks(settings: Settings, check: Check | None = None) -> list[Any]:
    """The doctor's model, profile, vision and grounding lines; `check`: the one model check
    (the doctor's Host's, held; by default model_check.py's own)."""
    from desktop_agent.desktop.doctor import DoctorItem

    if check is None:
        from desktop_agent.model_check import check_model

        check = check_model
    checked = await check(settings, discover=False)  # the doctor lists them at the end
    if checked.unreachable is not None:
        fix = tr("start the model server or set --base-url")
        return [DoctorItem("model", False, str(checked.unreachable), fix)]
    verdict = checked.verdict
    assert verdict is not None
    from desktop_agent.planner.backends import backend_named
    from desktop_agent.planner.profiles import resolve_profile

    profile = resolve_profile(
        settings.model, settings.model_profile, settings.model_coordinates, settings.base_url
    )
    backend = backend_named(profile.backend)
    return [
        DoctorItem(
            "model",
            True,
            tr("{model} at {url}", model=settings.model, url=settings.base_url),
            "",
        ),
        DoctorItem(
            "profile",
            True,
            tr(
                "{profile} ({setting}): {note}; coordinates {coordinates}; backend {backend}: "
                "{protocol}",
                profile=profile.name,
                setting=settings.model_profile,
                note=profile.note,
                coordinates=profile.coordinates,
                backend=backend.name,
                protocol=backend.protocol_for(settings.model),
            ),
            "",
        ),
        DoctorItem(
            "vision",
            verdict.can_see,
            f"{verdict.detail} ({verdict.source})",
            tr('set vision = "yes" in settings.toml or pass --vision yes if the model can see'),
        ),
        await _grounding_check(settings, profile.grounding, check),
        *([await _key_check(settings, backend)] if backend.chat is None else []),
    ]


async def _key_check(settings: Settings, backend: Any) -> Any:
    """A model's own API (a cloud provider's computer tool) needs its key: checked with the
    cheapest request there is (GET /models; the backend's own check where it has one: its
    provider's key and path), as the run would send it."""
    import asyncio

    from desktop_agent.desktop.doctor import DoctorItem
    from desktop_agent.planner.capabilities import key_check
    from desktop_agent.settings import ProviderKey, api_key_for

    own = ProviderKey(*backend.own_key) if backend.own_key else None
    key = await asyncio.to_thread(api_key_for, settings.base_url, settings, os.environ, own)
    problem = await backend.key_problem(settings.base_url, key)
    if problem is None:
        problem = await key_check(settings.base_url, key)
    elif own is not None:
        fix = tr("store the key in Settings or in the {variable} variable", variable=own.env)
        accepted = tr("accepted ({request})", request="GET /v1/models")
        return DoctorItem(API_KEY, not problem, problem or accepted, fix)
    fix = tr("set the API key in Settings (kept in the keyring) or in the OPENAI_API_KEY variable")
    accepted = tr("accepted ({request})", request="GET /models")
    return DoctorItem(API_KEY, not problem, problem or accepted, fix)


async def _grounding_check(settings: Settings, profile_default: str, check: Check) -> Any:
    """How clicks are refined; with a grounding model, whether its server answers and has it
    (the one model check, so the grounder's server gets a key by the one rule)."""
    from desktop_agent.desktop.doctor import DoctorItem
    from desktop_agent.planner.profiles import resolve_profile

    mode = profile_default if settings.grounding == "auto" else settings.grounding
    how = f"{mode} ({settings.grounding})"
    if mode == "off":
        said = tr("{how}: clicks go where the model says", how=how)
        return DoctorItem("grounding", True, said, "")
    if mode == "zoom":
        said = tr("{how}: the model looks again on a crop", how=how)
        return DoctorItem("grounding", True, said, "")
    url = settings.grounder_base_url or settings.base_url
    # vision "yes": a run does not ask whether its grounder can see either
    checked = await check(
        settings, base_url=url, model=settings.grounder_model, vision="yes", discover=False
    )
    refusal = checked.refusal()
    if refusal is not None:
        fix = (
            tr("start the grounding model's server or set grounder_base_url / --grounder-url")
            if checked.unreachable is not None
            else tr("load the grounding model on its server or set grounder_model")
        )
        return DoctorItem("grounding", False, f"{how}: {refusal}", fix)
    grounder = resolve_profile(settings.grounder_model, settings.grounder_profile)
    return DoctorItem(
        "grounding",
        True,
        tr(
            "{how}: {model} at {url}, profile {profile} ({format} answers, coordinates "
            "{coordinates})",
            how=how,
            model=settings.grounder_model,
            url=url,
            profile=grounder.name,
            format=grounder.point_format,
            coordinates=grounder.coordinates,
        ),
        "",
    )


def _cmd_routine(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.cli.routines import command

    return command(args, data_dir)


#: the command line's own sub-commands; `mcp` and `eval`, and doctor's calibration window, are
#: other faces', handed in from above (cli/faces.py, desktop_agent/launch)
COMMANDS: dict[str, Callable[[argparse.Namespace, Path], int]] = {
    "run": _cmd_run,
    "routine": _cmd_routine,
    "runs": _cmd_runs,
    "show": _cmd_show,
    "serve": _cmd_serve,
    "stop-all": cmd_stop_all,
    "doctor": _cmd_doctor,
}
