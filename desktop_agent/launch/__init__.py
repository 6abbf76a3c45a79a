"""The top floor: which face a command line opens, and what the faces are handed.

Above the faces (docs/architecture.md, the `layers` contract): the faces import nothing of
each other nor of this; the host imports no face. The command line's parser reads every
command line, and the sub-commands of another face are handed to it from here
(cli/faces.py `Faces`): no command opens the app, `mcp` the MCP face, `eval` the eval,
`doctor --calibrate` the calibration window (launch/commands.py). What one face serves for
another is handed down from here too: the local API (`local_api`) that `run`, `routine run`,
`serve`, `mcp`, `doctor --calibrate` and the app serve beside their own work.

Importing this package is cheap (no face is imported until it is opened).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from desktop_agent.cli.faces import Faces
    from desktop_agent.host.host import ApiServing, Host


async def local_api(host: Host, *, controls_only: bool, face: str) -> ApiServing:
    """The local API's server for `host` (host.py `LocalApi`): its imports (aiohttp's, ~0.2 s)
    on a worker thread, not on the host's loop, where stops and the runs' events go on."""
    import asyncio
    import importlib

    await asyncio.to_thread(importlib.import_module, "desktop_agent.api.server")
    from desktop_agent.api.server import ApiServer

    return ApiServer(host, controls_only=controls_only, face=face)


def main(argv: Sequence[str], *, entry_mark: tuple[str, str] | None = None) -> int:
    """A sub-command (or the app): the command line's `main` (cli/__init__.py), handed the
    other faces."""
    from desktop_agent.cli import main as cli_main

    return cli_main(argv, entry_mark=entry_mark, faces=faces())


def faces() -> Faces:
    """The other faces as the command line opens them (each imported when it is opened)."""
    from types import MappingProxyType

    from desktop_agent.cli.faces import Faces
    from desktop_agent.launch.commands import cmd_doctor, cmd_eval, cmd_mcp, eval_grammar

    return Faces(
        app=open_app,
        local_api=local_api,
        commands=MappingProxyType({"mcp": cmd_mcp, "eval": cmd_eval, "doctor": cmd_doctor}),
        grammar=(eval_grammar,),
    )


def open_app(argv: Sequence[str], data_dir: str | Path | None) -> int:
    """The app on `data_dir`, handed the local API."""
    from desktop_agent.app import run_app

    return run_app(list(argv), data_dir=data_dir, local_api=local_api)
