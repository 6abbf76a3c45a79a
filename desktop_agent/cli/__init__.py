"""The headless command line (DESIGN §5): run, runs, show, serve, stop-all, doctor.

parser.py    the grammar (sub-commands, options); a usage error is one line, exit 3
commands.py  each sub-command
gate.py      approvals on the terminal (--approve ask | all | none)
output.py    the printers: a human or a JSON line per event; exit codes
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_agent.cli.console import has_no_console, output_to_log
from desktop_agent.cli.exits import (
    EXIT_COMPLETED,
    EXIT_FAILED,
    EXIT_REFUSED,
    EXIT_STOPPED,
)
from desktop_agent.cli.faces import Faces, Handler
from desktop_agent.cli.parser import UsageError, build_parser, parse_args
from desktop_agent.cli.words import speaking
from desktop_agent.core.errors import DesktopAgentError

if TYPE_CHECKING:
    from desktop_agent.cli.gate import AutoGate, TerminalGate
    from desktop_agent.cli.output import usage_text

__all__ = [
    "EXIT_COMPLETED",
    "EXIT_FAILED",
    "EXIT_REFUSED",
    "EXIT_STOPPED",
    "AutoGate",
    "TerminalGate",
    "build_parser",
    "main",
    "usage_text",
]


def __getattr__(name: str) -> Any:
    # the gates and the printers import the core's models: not on stop-all's path
    if name in {"AutoGate", "TerminalGate"}:
        from desktop_agent.cli import gate

        return getattr(gate, name)
    if name == "usage_text":
        from desktop_agent.cli.output import usage_text

        return usage_text
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(
    argv: Sequence[str],
    *,
    entry_mark: tuple[str, str] | None = None,
    faces: Faces | None = None,
) -> int:
    """Run a sub-command (or open the app) and give the exit code. Where the process has no
    console (the windowed Windows exe), what a sub-command prints goes to the log in its data
    dir (cli/console.py); the app shows its own errors.

    `entry_mark`: (data dir, its stop-all mark) as the process started (__main__.py
    `entry_stop_mark`); without it the mark is read once the data dir is known.
    `faces`: the other faces it opens — the app, `mcp`, `eval`, `doctor --calibrate`'s
    window, the local API that `run`, `serve`, … serve (cli/faces.py) — handed in by the
    program's entry (desktop_agent/launch); without them it opens none.

    It speaks the language the window would (the `language` setting, else the system's
    locale: language.py `cli_language`)."""
    from desktop_agent.language import cli_language

    faces = faces or Faces()

    with output_to_log(), speaking(cli_language()):
        try:
            args = parse_args(argv, faces.grammar)
        except UsageError as error:
            if has_no_console():
                _log_to_named_data_dir(argv)
            print(f"desktop-agent: {error}", file=sys.stderr)
            return EXIT_REFUSED
        if args.command is not None:
            args.local_api = faces.local_api
            return _command(args, entry_mark, faces)
    if faces.app is None:
        raise TypeError("no app was handed in: the program's entry opens it (launch.main)")
    # the app asks for nothing at its start: its window's runs are asked for once it is up
    return faces.app(list(argv), args.data_dir)


def _command(args: argparse.Namespace, entry_mark: tuple[str, str] | None, faces: Faces) -> int:
    try:
        from desktop_agent.cli.setup import log_to_file, prepare_data_dir

        data_dir = prepare_data_dir(args.data_dir)
        # where the stop-alls stood when this command was asked for: `run` and `routine run`
        # stop their run when one came since (host.py `Host.start`)
        args.stop_mark = _stop_mark_at_entry(data_dir, entry_mark)
        log_to_file(data_dir)
        return _handler(args.command, faces)(args, data_dir)
    except DesktopAgentError as error:
        print(f"desktop-agent: {error}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return EXIT_STOPPED


def _stop_mark_at_entry(data_dir: Path, entry_mark: tuple[str, str] | None) -> str:
    """The entry's mark when it was read for this data dir, else the mark now."""
    import os

    from desktop_agent.instances.stop_all import read_stop_mark

    if entry_mark is not None:
        named, mark = entry_mark
        if os.path.abspath(named) == os.path.abspath(data_dir):
            return mark
    return read_stop_mark(str(data_dir))


def _log_to_named_data_dir(argv: Sequence[str]) -> None:
    """Open the log of the data dir the command line names (else the default one), for a
    usage error said where there is no console."""
    from desktop_agent.cli.setup import log_to_file, prepare_data_dir

    named = None
    for word, following in zip(argv, [*argv[1:], None], strict=True):
        if word == "--data-dir":
            named = following
        elif word.startswith("--data-dir="):
            named = word.partition("=")[2]
    # no data dir to log to: the line is lost, the exit code still says it
    with contextlib.suppress(DesktopAgentError):
        log_to_file(prepare_data_dir(named))


def _handler(command: str, faces: Faces) -> Handler:
    if command in faces.commands:  # another face's (mcp, eval, doctor's window)
        return faces.commands[command]
    if command == "stop-all":  # without the other commands' imports
        from desktop_agent.cli.stop_all import cmd_stop_all

        return cmd_stop_all
    from desktop_agent.cli.commands import COMMANDS

    return COMMANDS[command]
