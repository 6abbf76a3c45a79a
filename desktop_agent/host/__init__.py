"""The host: what every face (the window, `run`, `serve`, `mcp`, the API) shares.

    host.py         Host: runs (admitted at the click, owned to their end), the event stream,
                    stop-everything, the local API, the stop hotkey, signals, takeover; a
                    face's Host from opening to closing (serving) and the one start-up order
                    of what it turns on (turn_on, as a Face says)
    requests.py     what a face asks to start (a goal, a queued run; StartRequest: each
                    request's own `parts`) and the one task_spec that makes a run's TaskSpec
    starts.py       how every run starts: a goal, a routine or a stored queued run, admitted
                    in one synchronous call; the store read and the model check inside it
    routines.py     a routine's run (RoutineRequest, its player, its handover) and saving a
                    run as a routine
    records.py      Records: the history and the routines as a face reads and edits them
    engine.py       Engine: an asyncio loop on a thread of its own (the app's host lives there)
    calibration.py  ScreenCalibration: the screenshot and the model's answers of a calibration
    display.py      whether a window can open here

The model check (model_check.py) and the takeover pause (takeover.py) sit below the Agent,
which uses them; the instances of this machine (instances/) below the Host.

`Host` and friends are imported on first use: the app's first paint needs only display.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop_agent.host.host import (
        Face,
        Host,
        HostedRun,
        QueuedRun,
        RoutineRequest,
        RunRequest,
        Served,
        new_run_id,
    )

__all__ = [
    "Face",
    "Host",
    "HostedRun",
    "QueuedRun",
    "RoutineRequest",
    "RunRequest",
    "Served",
    "new_run_id",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from desktop_agent.host import host

        return getattr(host, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
