"""`desktop-agent routine …`: save, list, export, import, run, schedule and unschedule routines."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_agent.cli.words import tr
from desktop_agent.core.routine import Routine, RoutineError, Schedule, check_name
from desktop_agent.core.text import printable

if TYPE_CHECKING:
    from desktop_agent.store import SqliteRunRepository

EXIT_OK, EXIT_FAILED, EXIT_REFUSED = 0, 1, 3


def _assignment(what: str) -> Callable[[str], tuple[str, str]]:
    def parse(text: str) -> tuple[str, str]:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            said = tr("{option}: give NAME=VALUE, not {text}", option=what, text=repr(text))
            raise argparse.ArgumentTypeError(said)
        return name.strip(), value

    return parse


def add_parser(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """The `routine` sub-command and its own sub-commands."""
    routine = commands.add_parser("routine", help=tr("save a run as a routine; run it again"))
    actions = routine.add_subparsers(dest="routine_command", parser_class=parser_class,
                                     required=True)  # fmt: skip

    save = actions.add_parser("save", help=tr("save a completed run as a routine"))
    save.add_argument("run_id")
    save.add_argument("name")
    save.add_argument("--param", action="append", default=[], type=_assignment("--param"),
                      metavar="NAME=TURN",
                      help=tr("make the text typed at TURN (as `show RUN_ID` numbers the turns) a "
                      "parameter; repeat a NAME for one text typed in several places"))  # fmt: skip
    save.add_argument("--grant", default="", metavar="TOOL,TOOL,...",
                      help=tr("allow these tools without asking in this routine's "
                              "runs"))  # fmt: skip
    save.add_argument("--replace", action="store_true", help=tr("overwrite a routine of that name"))

    listing = actions.add_parser("list", help=tr("the saved routines, their parameters, schedules"))
    listing.add_argument("--json", action="store_true")

    export = actions.add_parser("export", help=tr("write a routine as one readable JSON file"))
    export.add_argument("name")
    export.add_argument("file", type=Path)

    imported = actions.add_parser("import", help=tr("read a routine file into the history store"))
    imported.add_argument("file", type=Path)
    imported.add_argument("--name", help=tr("save it under this name"))
    imported.add_argument("--replace", action="store_true")

    delete = actions.add_parser("delete", help=tr("forget a routine (and its schedule)"))
    delete.add_argument("name")

    run = actions.add_parser("run", help=tr("run a routine: no model while the screen matches"))
    run.add_argument("name")
    run.add_argument("--set", action="append", default=[], type=_assignment("--set"),
                     metavar="NAME=VALUE", help=tr("a parameter's text for this run"))  # fmt: skip
    run.add_argument("--json", action="store_true", help=tr("one JSON object per line per event"))
    run.add_argument("--approve", choices=("ask", "all", "none"), default="ask",
                     help=tr("as for `run`; the routine's grants answer for their "
                             "tools"))  # fmt: skip
    run.add_argument("--allow-dangerous", default="", metavar="TOOL,TOOL,...")
    run.add_argument("--no-agent", action="store_true",
                     help=tr("never hand over to the model: a mismatch ends the run "
                     "routine_mismatch"))  # fmt: skip
    run.add_argument("--scheduled", action="store_true",
                     help=tr("started by the OS: nobody answers; it refuses to start if it "
                     "would ask"))  # fmt: skip

    schedule = actions.add_parser(
        "schedule", help=tr("start a routine at a time of day (OS timer)")
    )
    schedule.add_argument("name")
    schedule.add_argument("--at", required=True, metavar="HH:MM")
    schedule.add_argument("--weekdays", action="store_true", help=tr("Monday to Friday only"))

    unschedule = actions.add_parser("unschedule", help=tr("remove a routine's OS timer"))
    unschedule.add_argument("name")
    for sub in actions.choices.values():
        sub.add_argument("--data-dir", default=argparse.SUPPRESS)


def command(args: argparse.Namespace, data_dir: Path) -> int:
    handler = _HANDLERS[args.routine_command]
    try:
        return handler(args, data_dir)
    except RoutineError as error:
        print(f"desktop-agent: {error}", file=sys.stderr)
        return EXIT_REFUSED


def _tools(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _with_repo(work: Callable[[SqliteRunRepository], Any], data_dir: Path) -> Any:
    async def go() -> Any:
        from desktop_agent.store import SqliteRunRepository

        repo = await asyncio.to_thread(SqliteRunRepository.open, data_dir)
        try:
            return await work(repo)
        finally:
            await asyncio.to_thread(repo.close)

    return asyncio.run(go())


def _registry() -> Any:
    from desktop_agent.core.builtin_tools import builtin_registry

    return builtin_registry()


def _save(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.host import routines as service

    params: dict[str, list[int]] = {}
    for name, turn in args.param:
        if not turn.strip().isdigit():
            given = f"--param {name}={turn}"
            raise RoutineError(tr("{given}: TURN is a turn number (see `show`)", given=given))
        params.setdefault(name, []).append(int(turn))
    routine = _with_repo(
        lambda repo: service.save_from_run(
            repo,
            _registry(),
            args.run_id,
            args.name,
            params,
            grants=_tools(args.grant),
            replace=args.replace,
        ),  # fmt: skip
        data_dir,
    )
    said = tr("saved routine {name}: {outline}", name=routine.name, outline=_outline(routine))
    print(printable(said), flush=True)
    if args.replace:
        _drop_schedule(routine.name, data_dir)
    return EXIT_OK


def _drop_schedule(name: str, data_dir: Path) -> None:
    """A routine replaced is not scheduled (the store's row is the new routine's): its name's
    OS timer goes too, so it never starts a routine nobody scheduled."""
    if _unschedule_os(name, data_dir):
        said = tr("the routine it replaced was scheduled: its timer is removed; schedule this "
                  "one with `routine schedule {name} --at HH:MM`", name=name)  # fmt: skip
        print(said, flush=True)


def _outline(routine: Routine) -> str:
    params = ", ".join(
        tr("{name} (secret)", name=p.name) if p.secret else f"{p.name}={p.default!r}"
        for p in routine.params
    )
    grants = tr("; grants {tools}", tools=", ".join(routine.grants)) if routine.grants else ""
    when = ""
    if routine.schedule:
        at = routine.schedule.at
        if routine.schedule.weekdays:
            when = tr("; scheduled weekdays at {time}", time=at)
        else:
            when = tr("; scheduled daily at {time}", time=at)
    return tr(
        "{count} steps; parameters: {parameters}{grants}{when}",
        count=len(routine.steps),
        parameters=params or tr("none"),
        grants=grants,
        when=when,
    )


def _list(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.core.routine import routine_to_file

    routines: list[Routine] = _with_repo(lambda repo: repo.list_routines(), data_dir)
    if args.json:
        rows = [
            {
                **routine_to_file(r),
                "grants": list(r.grants),
                "schedule": r.schedule.to_json() if r.schedule else None,
            }
            for r in routines
        ]
        print(json.dumps(rows, ensure_ascii=False), flush=True)
        return EXIT_OK
    for routine in routines:
        print(printable(f"{routine.name}  {routine.goal!r}  {_outline(routine)}"))
    if not routines:
        print(tr("no routines yet (save one: desktop-agent routine save RUN_ID NAME)"))
    return EXIT_OK


def _export(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.host import routines as service

    _with_repo(lambda repo: service.export_to(repo, args.name, args.file), data_dir)
    print(tr("wrote {file}", file=args.file), flush=True)
    return EXIT_OK


def _import(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.host import routines as service

    routine = _with_repo(
        lambda repo: service.import_from(
            repo, _registry(), args.file, name=args.name, replace=args.replace
        ),
        data_dir,
    )
    said = tr("imported routine {name}: {outline}", name=routine.name, outline=_outline(routine))
    print(printable(said), flush=True)
    if args.replace:
        _drop_schedule(routine.name, data_dir)
    return EXIT_OK


def _delete(args: argparse.Namespace, data_dir: Path) -> int:
    check_name(args.name)
    # the OS entries of the name go whatever the store says (a timer it forgot still fires)
    _unschedule_os(args.name, data_dir)
    if not _with_repo(lambda repo: repo.delete_routine(args.name), data_dir):
        raise RoutineError(tr("no routine named {name}", name=repr(args.name)))
    print(tr("deleted routine {name}", name=args.name), flush=True)
    return EXIT_OK


def _unschedule_os(name: str, data_dir: Path) -> list[Path]:
    """Remove the OS entries of routine `name` (saying which); the files removed."""
    from desktop_agent.desktop import schedule as os_schedule

    removed, problem = os_schedule.uninstall(name, data_dir)
    for path in removed:
        print(tr("removed {file}", file=path), flush=True)
    if problem:
        print(f"desktop-agent: {problem}", file=sys.stderr)
    return removed


def _schedule(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.desktop import schedule as os_schedule

    when = Schedule(os_schedule.parse_time(args.at), args.weekdays)
    check_name(args.name)
    os_schedule.check(args.name, when, data_dir)
    _with_repo(lambda repo: repo.update_routine(args.name, schedule=when), data_dir)
    written, problem = os_schedule.install(args.name, when, data_dir)
    for path in written:
        print(tr("wrote {file}", file=path), flush=True)
    if problem:
        said = tr("the schedule is written but not active: {problem}", problem=problem)
        print(f"desktop-agent: {said}", file=sys.stderr)
        return EXIT_FAILED
    if when.weekdays:
        said = tr("routine {name} starts Monday to Friday at {time}", name=args.name, time=when.at)
    else:
        said = tr("routine {name} starts every day at {time}", name=args.name, time=when.at)
    print(said, flush=True)
    return EXIT_OK


def _unschedule(args: argparse.Namespace, data_dir: Path) -> int:
    check_name(args.name)
    # the OS entries first, and whatever the store says: a routine deleted or replaced
    # before this fix left its timer behind
    _unschedule_os(args.name, data_dir)

    async def forget(repo: SqliteRunRepository) -> None:
        if await repo.get_routine(args.name) is not None:
            await repo.update_routine(args.name, schedule=None)

    _with_repo(forget, data_dir)
    print(tr("routine {name} is not scheduled", name=args.name), flush=True)
    return EXIT_OK


# ── run ──────────────────────────────────────────────────────────────────────


def _run(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.settings import load_settings

    return asyncio.run(_run_routine(args, data_dir, load_settings()))


async def _run_routine(args: argparse.Namespace, data_dir: Path, settings: Any) -> int:
    from desktop_agent.cli.gate import AutoGate, gate_for
    from desktop_agent.cli.running import run_on_terminal
    from desktop_agent.core.models import ApprovalDecision
    from desktop_agent.host import Host, RoutineRequest

    values = dict(args.set)
    if args.scheduled:
        gate: Any = AutoGate(ApprovalDecision.DENY)  # nobody is there to answer
    else:
        gate = gate_for(args.approve, _tools(args.allow_dangerous))
    # a stop-all since the process started (it could not find this one) stops the run
    mark = getattr(args, "stop_mark", None)
    api = getattr(args, "local_api", None)  # the top floor's (desktop_agent/launch.py)
    async with Host.serving(data_dir, settings, gate=gate, stop_mark=mark, local_api=api) as host:
        routine = await host.records.get_routine(args.name)
        if args.scheduled and routine.schedule is None:
            # a timer the store does not know of: left from a routine deleted or replaced
            raise RoutineError(
                tr(
                    "routine {name} is not scheduled, so no timer should start it: remove the "
                    "one that did with `desktop-agent routine unschedule {name}`",
                    name=routine.name,
                )
            )
        if args.scheduled:
            asked = host.records.routine_questions(routine, values)
            if asked:
                said = tr("routine {name} would ask, and nobody is there to answer: {questions}",
                          name=routine.name, questions="; ".join(asked))  # fmt: skip
                print(printable(f"desktop-agent: {said}"), file=sys.stderr, flush=True)
                return EXIT_REFUSED
        else:
            values.update(_ask_secrets(routine, values))
        # the routine is looked up again inside the run: a refusal (deleted meanwhile) comes
        # as StartRefused, said on stderr
        return await run_on_terminal(
            host,
            lambda ready: RoutineRequest(
                routine.name,
                values,
                handover=not (args.no_agent or args.scheduled),
                scheduled=args.scheduled,
                ready=ready,
            ),
            as_json=args.json,
        )


def _ask_secrets(routine: Routine, values: dict[str, str]) -> dict[str, str]:
    """Each secret parameter not given with --set, asked on the terminal (never echoed, never
    saved); RoutineError without a terminal."""
    asked = {}
    for name in routine.secrets():
        if name in values:
            continue
        if sys.stdin is None or not sys.stdin.isatty():  # None: the windowed exe
            raise RoutineError(
                tr(
                    "routine {routine} needs {name} (a password field's text): give it with "
                    "--set {name}=… or run it on a terminal",
                    routine=routine.name,
                    name=name,
                )
            )
        question = tr("{name} for routine {routine} (not saved):", name=name, routine=routine.name)
        asked[name] = getpass.getpass(question + " ")
    return asked


_HANDLERS: dict[str, Callable[[argparse.Namespace, Path], int]] = {
    "save": _save,
    "list": _list,
    "export": _export,
    "import": _import,
    "delete": _delete,
    "run": _run,
    "schedule": _schedule,
    "unschedule": _unschedule,
}
