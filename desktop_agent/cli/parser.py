"""The command line's grammar: sub-commands, options and their checks (DESIGN §5)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from desktop_agent.cli.faces import Grammar
from desktop_agent.cli.words import tr


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
            said = tr("not a whole number: {text}", text=repr(text))
            raise argparse.ArgumentTypeError(said) from None
        if not low <= value <= high:
            said = tr("{value} is out of range {low}..{high}", value=value, low=low, high=high)
            raise argparse.ArgumentTypeError(said)
        return value

    return parse


def _profile_name(text: str) -> str:
    from desktop_agent.core.errors import ConfigError
    from desktop_agent.planner.profiles import profile_choice

    try:
        return profile_choice(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _monitor(text: str) -> str | int:
    from desktop_agent.core.models import parse_monitor

    try:
        return parse_monitor(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _tool_list(text: str) -> tuple[str, ...]:
    from desktop_agent.core.builtin_tools import BUILTIN_TOOLS

    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if not names:
        raise argparse.ArgumentTypeError(tr("no tools given"))
    known = {spec.name for spec in BUILTIN_TOOLS if spec.offered}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise argparse.ArgumentTypeError(
            tr(
                "unknown tool(s): {unknown}; known: {known}",
                unknown=", ".join(unknown),
                known=", ".join(sorted(known)),
            )
        )
    return names


def parse_args(argv: Sequence[str], grammar: Sequence[Grammar] = ()) -> argparse.Namespace:
    """The command line parsed (UsageError when it is wrong). The two commands that must start
    fastest are read by a parser of the global options (and that command) alone: `stop-all`,
    and the app (no command: its window paints before asyncio is loaded); the other commands'
    grammar imports the routines and the tools. `grammar`: the sub-commands of the other
    faces (cli/faces.py `Faces.grammar`: eval's)."""
    words = _command_words(argv)
    if not words:
        parser = _top_parser()[0]
    elif words == ["stop-all"]:
        parser = _stop_all_parser()
    else:
        parser = build_parser(grammar)
    return parser.parse_args(list(argv))


def _command_words(argv: Sequence[str]) -> list[str]:
    """`argv` without the global --data-dir option."""
    words, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word == "--data-dir":
            skip = True
        elif not word.startswith("--data-dir="):
            words.append(word)
    return words


def _top_parser() -> tuple[argparse.ArgumentParser, Any]:
    """The program's parser and its sub-command set."""
    parser = _Parser(prog="desktop-agent", description=tr("Carry out tasks on this desktop."))
    parser.add_argument("--data-dir", help=tr("where history, screenshots and the API token live"))
    return parser, parser.add_subparsers(dest="command", parser_class=_Parser)


def _add_stop_all(commands: Any) -> None:
    commands.add_parser("stop-all", help=tr("stop every run of every instance on this data dir"))


def _data_dir_everywhere(commands: Any) -> None:
    """Every sub-command takes --data-dir, before or after its name."""
    for sub in commands.choices.values():
        if not any(action.dest == "data_dir" for action in sub._actions):
            sub.add_argument("--data-dir", default=argparse.SUPPRESS)


def _stop_all_parser() -> argparse.ArgumentParser:
    parser, commands = _top_parser()
    _add_stop_all(commands)
    _data_dir_everywhere(commands)
    return parser


def build_parser(grammar: Sequence[Grammar] = ()) -> argparse.ArgumentParser:
    """The whole grammar: the command line's sub-commands, then `grammar`'s (another face's
    sub-commands, handed in from above: eval's)."""
    parser, commands = _top_parser()

    run = commands.add_parser("run", help=tr("one run, no window; events on stdout"))
    run.add_argument("goal", help=tr("what to do, in words"))
    run.add_argument(
        "--base-url", help=tr("OpenAI-compatible server, e.g. http://localhost:11434/v1")
    )
    run.add_argument("--model", help=tr("model name, e.g. qwen2.5vl"))
    run.add_argument("--api-key-env", help=tr("environment variable holding the API key"))
    run.add_argument("--max-steps", type=_positive_int(1, 500))
    run.add_argument("--max-failures", type=_positive_int(1, 50))
    run.add_argument("--allow", type=_tool_list, help=tr("allowed tools, comma-separated"))
    run.add_argument(
        "--approve",
        choices=("ask", "all", "none"),
        default="ask",
        help=tr(
            "ask on the terminal (default; no terminal: deny), all, or none (deny). "
            "'all' never approves a dangerous call (launch_app, a launcher key such as super+r, "
            "a paste, a line typed into a terminal, a password field, a sensitive button) "
            "unless its tool is named with --allow-dangerous"
        ),
    )
    run.add_argument(
        "--allow-dangerous",
        type=_tool_list,
        metavar="TOOL,TOOL,...",
        help=tr("with --approve all: also approve these tools' dangerous calls"),
    )
    run.add_argument("--vision", choices=("auto", "yes", "no"))
    run.add_argument("--model-profile", type=_profile_name, help=tr("model family (default auto)"))
    run.add_argument(
        "--monitor",
        type=_monitor,
        metavar="auto|all|N",
        help=tr("the monitor the model sees (default: the settings', auto: the active window's)"),
    )
    run.add_argument(
        "--grounding",
        choices=("auto", "off", "zoom", "grounder"),
        help=tr(
            "how a click by coordinates is refined (default: the settings'; auto: the "
            "model profile's)"
        ),
    )
    run.add_argument("--grounder-url", metavar="URL", help=tr("the grounding model's server"))
    run.add_argument(
        "--grounder-model",
        metavar="NAME",
        help=tr("a grounding model (implies --grounding grounder)"),
    )
    run.add_argument("--json", action="store_true", help=tr("one JSON object per line per event"))

    runs = commands.add_parser("runs", help=tr("run history, newest first"))
    runs.add_argument("--json", action="store_true")
    runs.add_argument("--limit", type=_positive_int(1, 100000), default=100)

    show = commands.add_parser("show", help=tr("replay a stored run's events"))
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true")

    serve = commands.add_parser("serve", help=tr("no window: serve the local API until stopped"))
    serve.add_argument("--port", type=_positive_int(0, 65535), default=0)

    mcp = commands.add_parser(
        "mcp", help=tr("serve the agent to an MCP client (stdio; --http: streamable HTTP)")
    )
    mcp.add_argument(
        "--http", action="store_true", help=tr("streamable HTTP on 127.0.0.1 (token as the API's)")
    )
    mcp.add_argument("--port", type=_positive_int(0, 65535), default=0)
    mcp.add_argument(
        "--client-approves",
        action="store_true",
        help=tr(
            "the client's user may answer questions about ordinary input calls (never about "
            "a call that asks every time: those go to this desktop's dialog)"
        ),
    )

    _add_stop_all(commands)
    doctor = commands.add_parser("doctor", help=tr("check display, capture, input, hotkey, model"))
    doctor.add_argument("--base-url", help=tr("the model server to check"))
    doctor.add_argument("--model", help=tr("the model to check"))
    doctor.add_argument("--vision", choices=("auto", "yes", "no"))
    doctor.add_argument(
        "--model-profile", type=_profile_name, help=tr("model family (default auto)")
    )
    doctor.add_argument(
        "--stop-shortcut",
        nargs="?",
        const="<Control><Alt>Escape",
        metavar="KEYS",
        help=tr(
            "on GNOME or KDE Plasma (Wayland): bind KEYS (GTK accelerator, default "
            "<Control><Alt>Escape) to `desktop-agent stop-all` as the desktop's own keyboard "
            "shortcut"
        ),
    )
    doctor.add_argument(
        "--calibrate",
        action="store_true",
        help=tr(
            "show targets on the screen, ask the model to click each, report the error in "
            "pixels and the coordinate space that fits; offers to save it"
        ),
    )
    from desktop_agent.cli.routines import add_parser as add_routine_parser

    add_routine_parser(commands, _Parser)
    for add_parser in grammar:
        add_parser(commands, _Parser)
    _data_dir_everywhere(commands)
    return parser
