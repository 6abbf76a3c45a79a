"""One run on the terminal (`run`, `routine run`): the Host's start-up order, the events printed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop_agent.cli.exits import EXIT_FAILED, EXIT_REFUSED
from desktop_agent.cli.output import EXIT_BY_STATUS, TakeoverNotes, print_events
from desktop_agent.core.errors import RefusedToStart

if TYPE_CHECKING:
    from desktop_agent.host import Host
    from desktop_agent.host.requests import Ready, StartRequest


async def run_on_terminal(
    host: Host, request_for: Callable[[Ready], StartRequest], *, as_json: bool
) -> int:
    """Start `request_for(ready)` on `host` and print its events; the exit code.

    The order is the Host's (`Host.turn_on`): the takeover watch and the signals before the
    start (nothing is said of a run refused), the run admitted in that step (a stop from now
    on reaches it), then the controls-only API (its approvals follow its own --approve) and
    the stop hotkey, and only then may it act (`ready`)."""
    from desktop_agent.host import Face

    notes = TakeoverNotes(host, as_json=as_json)
    try:
        # every stop here (signal, hotkey, API) stops the run
        served = await host.turn_on(Face("run"), start=request_for)
    except RefusedToStart as error:
        # a refused run is forgotten: history holds only runs that started
        print(f"desktop-agent: {error}", file=sys.stderr)
        return EXIT_REFUSED
    assert served.run is not None, "turn_on admits the run it is given"
    final = await print_events(
        served.run.events(), sys.stdout, as_json=as_json, pause_line=notes.pause_line
    )
    if final is None:
        return EXIT_REFUSED  # TakeoverNotes said why on stderr (a refusal inside the run)
    return EXIT_BY_STATUS.get(final.status, EXIT_FAILED)
