"""`desktop-agent eval`: run a task suite against a model (or a scripted planner) and report."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_STOPPED, EXIT_REFUSED = 0, 1, 2, 3
HERE_COUNTDOWN_S = 5


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_parser(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """The `eval` sub-command."""
    from desktop_agent.eval.planners import PLANNERS

    ev = commands.add_parser("eval", help="run a task suite on private desks and report")
    ev.add_argument("--suite", default="builtin", help="builtin (default) or a folder of *.toml")
    ev.add_argument("--tasks", type=_names, default=[], metavar="ID,…")
    ev.add_argument("--tags", type=_names, default=[], metavar="TAG,…")
    ev.add_argument("--repeat", type=int, default=1, metavar="N")
    ev.add_argument("--desk", choices=("private", "here"), default="private",
                    help="private: a fresh Xvfb desk per task; here: your screen")  # fmt: skip
    ev.add_argument("--jobs", type=int, default=1, metavar="N", help="private desks at once")
    ev.add_argument("--report", type=Path, help="write the JSON lines here (and FILE.md)")
    ev.add_argument("--json", action="store_true", help="one JSON line per task, then a summary")
    ev.add_argument("--planner", choices=sorted(PLANNERS),
                    help="a scripted planner instead of a model (the suite's checks)")  # fmt: skip
    ev.add_argument("--compare", nargs=2, type=Path, metavar=("A.json", "B.json"),
                    help="per-task changes between two reports; runs nothing")  # fmt: skip
    ev.add_argument("--keep", type=Path, help="keep each task's folder (files, screenshots) here")
    ev.add_argument("--base-url")
    ev.add_argument("--model")
    ev.add_argument("--model-profile")
    ev.add_argument("--grounding", choices=("auto", "off", "zoom", "grounder"))
    ev.add_argument("--vision", choices=("auto", "yes", "no"))
    ev.add_argument("--api-key-env")
    ev.add_argument("--approve", choices=("all", "none", "ask"), default="all",
                    help="the runs' approval policy; ask: you answer each question here "
                         "(with --jobs 1)")  # fmt: skip
    ev.add_argument("--allow-dangerous", metavar="TOOL,…")
    ev.add_argument("--yes", action="store_true", help="with --desk here: do not ask")


def _run_args(args: argparse.Namespace) -> tuple[str, ...]:
    extra: list[str] = []
    for option in ("model_profile", "grounding", "vision", "api_key_env", "allow_dangerous"):
        value = getattr(args, option)
        if value and not (option == "vision" and args.planner):
            extra += [f"--{option.replace('_', '-')}", value]
    return tuple(extra)


def _agree_to_use_this_screen(args: argparse.Namespace) -> bool:
    if args.yes:
        return True
    if not sys.stdin.isatty():
        return False
    print(
        "desktop-agent eval --desk here drives YOUR screen: it starts apps, types and clicks, "
        "one task at a time. Type 'yes' to go on: ",
        end="",
        flush=True,
    )
    if sys.stdin.readline().strip().lower() != "yes":
        return False
    for left in range(HERE_COUNTDOWN_S, 0, -1):
        print(f"starting in {left} s (Ctrl+C to cancel)", flush=True)
        time.sleep(1)
    return True


def _no_hotkey(why: str) -> None:
    print(f"desktop-agent: the stop hotkey is not on ({why}); Ctrl+C or `desktop-agent "
          "stop-all` end the eval", file=sys.stderr, flush=True)  # fmt: skip


def command(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.eval import report
    from desktop_agent.eval.progress import Progress
    from desktop_agent.eval.runner import RunOptions, TaskResult, run_suite
    from desktop_agent.eval.tasks import TaskFileError, load_suite, select

    if args.compare:
        try:
            print(report.compare(*args.compare), end="")
        except report.ReportError as error:
            print(f"desktop-agent: {error}", file=sys.stderr)
            return EXIT_REFUSED
        return EXIT_OK
    if args.jobs < 1 or args.repeat < 1:
        print("desktop-agent: --jobs and --repeat must be at least 1", file=sys.stderr)
        return EXIT_REFUSED
    if args.approve == "ask" and (args.jobs > 1 or not sys.stdin.isatty()):
        # one terminal answers one run's questions at a time, and only a person types them
        why = "--jobs 1" if args.jobs > 1 else "a terminal to answer on"
        print(f"desktop-agent: eval --approve ask needs {why}", file=sys.stderr)
        return EXIT_REFUSED
    if not args.planner and not args.base_url:
        print("desktop-agent: eval needs --base-url (a model) or --planner", file=sys.stderr)
        return EXIT_REFUSED
    try:
        tasks = select(load_suite(args.suite), args.tasks, args.tags)
    except TaskFileError as error:
        print(f"desktop-agent: {error}", file=sys.stderr)
        return EXIT_REFUSED
    if args.desk == "here" and not _agree_to_use_this_screen(args):
        print("desktop-agent: --desk here needs an explicit yes (type yes, or --yes)",
              file=sys.stderr)  # fmt: skip
        return EXIT_REFUSED
    from desktop_agent.instances.stop_all import read_stop_mark

    options = RunOptions(
        planner=args.planner,
        base_url=args.base_url,
        model=args.model,
        approve=args.approve,
        run_args=_run_args(args),
        desk=args.desk,
        keep=args.keep,
        stop_data_dir=data_dir,
        stop_mark=getattr(args, "stop_mark", None) or read_stop_mark(str(data_dir)),
    )
    # a signal (Ctrl+C, a kill), the person's stop hotkey and a stop-all end the whole eval
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: options.stop.set())

    # a bar on a terminal (stderr: stdout may be the report piped on); plain lines elsewhere,
    # none beside --json's own task lines
    # with --approve ask the runs' questions are on stderr: no status line drawn over them
    terminal = sys.stderr.isatty() and args.approve != "ask"
    bar = Progress(sys.stderr, len(tasks) * args.repeat, terminal=terminal)

    def done(result: TaskResult) -> None:
        try:
            if args.json:
                print(json.dumps({"type": "task", **result.as_json()}), flush=True)
            if terminal or not args.json:
                bar.finished(result)
        except BrokenPipeError:
            # nobody reads the eval any more (`eval --json | head -1`): it ends as if stopped;
            # the summary's print below meets the broken pipe and __main__ ends quietly
            options.stop.set()

    def started(task: str) -> None:
        if terminal:
            try:
                bar.started(task)
            except BrokenPipeError:
                options.stop.set()

    from desktop_agent.eval.hotkey import stop_hotkey
    from desktop_agent.settings import load_settings

    combo = load_settings().stop_hotkey
    with stop_hotkey(combo, options.stop, on_lost=_no_hotkey) as problem:
        if problem:
            _no_hotkey(problem)
        try:
            results = run_suite(
                tasks, options, jobs=args.jobs, repeat=args.repeat, on_start=started, on_done=done
            )
        finally:
            with contextlib.suppress(BrokenPipeError):  # a stderr nobody reads any more
                bar.close()
    if args.report:  # first: written whether or not stdout is still read
        report.write_json_lines(results, args.report)
        args.report.with_suffix(".md").write_text(report.markdown(results), encoding="utf-8")
    if args.json:
        print(json.dumps(report.summary(results)), flush=True)
    else:
        print(report.markdown(results), end="")
    ran = [r for r in results if not r.injection]
    if options.stop.is_set():
        return EXIT_STOPPED
    return EXIT_OK if all(report.passed(r) for r in ran) else EXIT_FAILED
