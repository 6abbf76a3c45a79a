"""Session-wide guard: a thread left running can never wedge the test process at exit."""

from __future__ import annotations

import faulthandler
import sys
import threading

import pytest

#: how long the process may take to exit after the last test before it is ended
EXIT_GRACE_S = 60.0


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Past the last test, report non-daemon threads still alive (Python joins them at exit)
    and arm a watchdog: if exit still hangs, every thread's stack is printed and the process
    ends with a failure instead of waiting forever."""
    left = [
        thread
        for thread in threading.enumerate()
        if thread is not threading.main_thread() and not thread.daemon and thread.is_alive()
    ]
    # idle executor workers end at exit; name the rest so a leak is seen, not guessed at
    named = [thread.name for thread in left if not thread.name.startswith("ThreadPoolExecutor")]
    if named:
        print(f"\nthreads still running after the tests: {', '.join(named)}", file=sys.stderr)
    faulthandler.dump_traceback_later(EXIT_GRACE_S, exit=True)
