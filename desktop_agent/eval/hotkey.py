"""The person's stop hotkey, heard on their own display, ends the whole eval."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from desktop_agent.core.text import one_line

log = logging.getLogger(__name__)


@contextmanager
def stop_hotkey(
    combo: str, stop: threading.Event, on_lost: Callable[[str], None] | None = None
) -> Iterator[str]:
    """While inside, `combo` pressed on this process's display sets `stop`.

    This process's DISPLAY is the person's own screen; the tasks' runs live on private desks
    (their own X servers), where the person's keys never arrive, so the run's own hotkey
    cannot hear them: the eval listens for them (desktop.hotkey, the listener `run` uses).
    Yields "" once it is listening, else why it cannot (one line); `on_lost(why)` is told if
    the listener ends while inside (the X server went away).
    """
    from desktop_agent.desktop.hotkey import HotkeyUnavailable, start_global_hotkey

    # the listener delivers a press on an asyncio loop (call_soon_threadsafe); the eval is
    # threads, so the loop is a small one of its own
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="eval stop hotkey", daemon=True)
    thread.start()

    def changed(armed: bool, why: str) -> None:
        if not armed and on_lost is not None:
            on_lost(why)

    handle = None
    try:
        try:
            handle = start_global_hotkey(combo, stop.set, loop, on_change=changed)
        except HotkeyUnavailable as error:
            log.warning("eval: the stop hotkey %s is not on: %s", combo, error)
            problem = one_line(error)
        else:
            log.info("eval: the stop hotkey %s is on", combo)
            problem = ""
        yield problem
    finally:
        if handle is not None:
            handle.stop()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
