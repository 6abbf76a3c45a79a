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

from desktop_agent.core.routine import Routine, RoutineError, Schedule, check_name
from desktop_agent.core.text import printable

if TYPE_CHECKING:
    from desktop_agent.store import SqliteRunRepository

EXIT_OK, EXIT_FAILED, EXIT_REFUSED = 0, 1, 3


def _assignment(what: str) -> Callable[[str], tuple[str, str]]:
    def parse(text: str) -> tuple[str, str]:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise argparse.ArgumentTypeError(f"{what}: give NAME=VALUE, not {text!r}")
        return name.strip(), value

    return parse


def add_parser(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """The `routine` sub-command and its own sub-commands."""
    routine = commands.add_parser("routine", help="save a run as a routine; run it again")
    actions = routine.add_subparsers(dest="routine_command", parser_class=parser_class,
                                     required=True)  # fmt: skip

    save = actions.add_parser("save", help="save a completed run as a routine")
    save.add_argument("run_id")
    save.add_argument("name")
    save.add_argument("--param", action="append", default=[], type=_assignment("--param"),
                      metavar="NAME=TURN",
                      help="make the text typed at TURN (as `show RUN_ID` numbers the turns) a "
                      "parameter; repeat a NAME for one text typed in several places")  # fmt: skip
    save.add_argument("--grant", default="", metavar="TOOL,TOOL,...",
                      help="allow these tools without asking in this routine's runs")  # fmt: skip
    save.add_argument("--replace", action="store_true", help="overwrite a routine of that name")

    listing = actions.add_parser("list", help="the saved routines, their parameters, schedules")
    listing.add_argument("--json", action="store_true")

    export = actions.add_parser("export", help="write a routine as one readable JSON file")
    export.add_argument("name")
    export.add_argument("file", type=Path)

    imported = actions.add_parser("import", help="read a routine file into the history store")
    imported.add_argument("file", type=Path)
    imported.add_argument("--name", help="save it under this name")
    imported.add_argument("--replace", action="store_true")

    delete = actions.add_parser("delete", help="forget a routine (and its schedule)")
    delete.add_argument("name")

    run = actions.add_parser("run", help="run a routine: no model while the screen matches")
    run.add_argument("name")
    run.add_argument("--set", action="append", default=[], type=_assignment("--set"),
                     metavar="NAME=VALUE", help="a parameter's text for this run")  # fmt: skip
    run.add_argument("--json", action="store_true", help="one JSON object per line per event")
    run.add_argument("--approve", choices=("ask", "all", "none"), default="ask",
                     help="as for `run`; the routine's grants answer for their tools")  # fmt: skip
    run.add_argument("--allow-dangerous", default="", metavar="TOOL,TOOL,...")
    run.add_argument("--no-agent", action="store_true",
                     help="never hand over to the model: a mismatch ends the run "
                     "routine_mismatch")  # fmt: skip
    run.add_argument("--scheduled", action="store_true",
                     help="started by the OS: nobody answers; it refuses to start if it "
                     "would ask")  # fmt: skip

    schedule = actions.add_parser("schedule", help="start a routine at a time of day (OS timer)")
    schedule.add_argument("name")
    schedule.add_argument("--at", required=True, metavar="HH:MM")
    schedule.add_argument("--weekdays", action="store_true", help="Monday to Friday only")

    unschedule = actions.add_parser("unschedule", help="remove a routine's OS timer")
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
            raise RoutineError(f"--param {name}={turn}: TURN is a turn number (see `show`)")
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
    print(printable(f"saved routine {routine.name}: {_outline(routine)}"), flush=True)
    if args.replace:
        _drop_schedule(routine.name, data_dir)
    return EXIT_OK


def _drop_schedule(name: str, data_dir: Path) -> None:
    """A routine replaced is not scheduled (the store's row is the new routine's): its name's
    OS timer goes too, so it never starts a routine nobody scheduled."""
    if _unschedule_os(name, data_dir):
        print(f"the routine it replaced was scheduled: its timer is removed; schedule this "
              f"one with `routine schedule {name} --at HH:MM`", flush=True)  # fmt: skip


def _outline(routine: Routine) -> str:
    params = ", ".join(
        f"{p.name}" + (" (secret)" if p.secret else f"={p.default!r}") for p in routine.params
    )
    grants = f"; grants {', '.join(routine.grants)}" if routine.grants else ""
    when = ""
    if routine.schedule:
        days = "weekdays" if routine.schedule.weekdays else "daily"
        when = f"; scheduled {days} at {routine.schedule.at}"
    return f"{len(routine.steps)} steps; parameters: {params or 'none'}{grants}{when}"


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
        print("no routines yet (save one: desktop-agent routine save RUN_ID NAME)")
    return EXIT_OK


def _export(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.host import routines as service

    _with_repo(lambda repo: service.export_to(repo, args.name, args.file), data_dir)
    print(f"wrote {args.file}", flush=True)
    return EXIT_OK


def _import(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.host import routines as service

    routine = _with_repo(
        lambda repo: service.import_from(
            repo, _registry(), args.file, name=args.name, replace=args.replace
        ),
        data_dir,
    )
    print(printable(f"imported routine {routine.name}: {_outline(routine)}"), flush=True)
    if args.replace:
        _drop_schedule(routine.name, data_dir)
    return EXIT_OK


def _delete(args: argparse.Namespace, data_dir: Path) -> int:
    check_name(args.name)
    # the OS entries of the name go whatever the store says (a timer it forgot still fires)
    _unschedule_os(args.name, data_dir)
    if not _with_repo(lambda repo: repo.delete_routine(args.name), data_dir):
        raise RoutineError(f"no routine named {args.name!r}")
    print(f"deleted routine {args.name}", flush=True)
    return EXIT_OK


def _unschedule_os(name: str, data_dir: Path) -> list[Path]:
    """Remove the OS entries of routine `name` (saying which); the files removed."""
    from desktop_agent.desktop import schedule as os_schedule

    removed, problem = os_schedule.uninstall(name, data_dir)
    for path in removed:
        print(f"removed {path}", flush=True)
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
        print(f"wrote {path}", flush=True)
    if problem:
        print(f"desktop-agent: the schedule is written but not active: {problem}", file=sys.stderr)
        return EXIT_FAILED
    days = "Monday to Friday" if when.weekdays else "every day"
    print(f"routine {args.name} starts {days} at {when.at}", flush=True)
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
    print(f"routine {args.name} is not scheduled", flush=True)
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
    host = await Host.open(
        data_dir, settings, gate=gate, stop_mark=getattr(args, "stop_mark", None)
    )
    try:
        routine = await host.records.get_routine(args.name)
        if args.scheduled and routine.schedule is None:
            # a timer the store does not know of: left from a routine deleted or replaced
            raise RoutineError(
                f"routine {routine.name} is not scheduled, so no timer should start it: remove "
                f"the one that did with `desktop-agent routine unschedule {routine.name}`"
            )
        if args.scheduled:
            asked = host.records.routine_questions(routine, values)
            if asked:
                print(printable(f"desktop-agent: routine {routine.name} would ask, and nobody is "
                                f"there to answer: {'; '.join(asked)}"),
                      file=sys.stderr, flush=True)  # fmt: skip
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
    finally:
        await host.close()


def _ask_secrets(routine: Routine, values: dict[str, str]) -> dict[str, str]:
    """Each secret parameter not given with --set, asked on the terminal (never echoed, never
    saved); RoutineError without a terminal."""
    asked = {}
    for name in routine.secrets():
        if name in values:
            continue
        if sys.stdin is None or not sys.stdin.isatty():  # None: the windowed exe
            raise RoutineError(
                f"routine {routine.name} needs {name} (a password field's text): give it with "
                f"--set {name}=… or run it on a terminal"
            )
        asked[name] = getpass.getpass(f"{name} for routine {routine.name} (not saved): ")
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
