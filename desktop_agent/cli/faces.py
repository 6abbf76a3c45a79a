"""What the command line opens of the other faces, handed in from above (desktop_agent/launch):
the window, the MCP server, the eval, the calibration window, the local API. cli/ imports no
other face (pyproject's `independence` contract); the program's entry fills this in."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from desktop_agent.host.host import LocalApi

#: a sub-command: (its parsed command line, the data dir) → the exit code
Handler = Callable[[argparse.Namespace, Path], int]
#: a sub-command's grammar: (the sub-command set, the parser class) → its parser added
Grammar = Callable[[Any, type[argparse.ArgumentParser]], None]


class Faces(NamedTuple):
    """The other faces as the command line reaches them (a NamedTuple, not a dataclass:
    dataclasses imports inspect, which is not on stop-all's full path)."""

    #: the window, for a command line that names no command: (argv, the data dir it names
    #: or None) → the exit code
    app: Callable[[Sequence[str], str | None], int] | None = None
    #: the local API that `run`, `routine run`, `serve`, … serve beside their work
    local_api: LocalApi | None = None
    #: the sub-commands another face carries out (`mcp`, `eval`, `doctor` with its
    #: calibration window), in the command line's own handler's place
    commands: Mapping[str, Handler] = MappingProxyType({})
    #: the grammar of the sub-commands another face defines beyond the command line's (eval)
    grammar: tuple[Grammar, ...] = ()
