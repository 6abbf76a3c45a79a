"""The headless command line (DESIGN §5): run, runs, show, serve, stop-all, doctor.

parser.py    the grammar (sub-commands, options); a usage error is one line, exit 3
commands.py  each sub-command
gate.py      approvals on the terminal (--approve ask | all | none)
output.py    the printers: a human or a JSON line per event; exit codes
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from desktop_agent.cli.gate import AutoGate, TerminalGate
from desktop_agent.cli.output import (
    EXIT_COMPLETED,
    EXIT_FAILED,
    EXIT_REFUSED,
    EXIT_STOPPED,
    usage_text,
)
from desktop_agent.cli.parser import UsageError, build_parser
from desktop_agent.core.errors import DesktopAgentError

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
        from desktop_agent.cli.commands import COMMANDS, log_to_file, prepare_data_dir

        data_dir = prepare_data_dir(args.data_dir)
        log_to_file(data_dir)
        handler = COMMANDS[args.command]
        return handler(args, data_dir)
    except DesktopAgentError as error:
        print(f"desktop-agent: {error}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return EXIT_STOPPED
