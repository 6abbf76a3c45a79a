"""The session's thread guard: a non-daemon thread still running after the last test fails the
run (Python would join it at exit: a leak that can wedge CI), and a watchdog ends an exit that
hangs anyway."""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import time

import pytest

#: how long the process may take to exit after the last test before it is ended
EXIT_GRACE_S = 60.0
#: how long threads that are ending get to end before they count as leaked
JOIN_GRACE_S = 5.0


def leaked_threads(grace_s: float | None = None) -> list[threading.Thread]:
    """Non-daemon threads (other than the main one) still alive after `grace_s` (default
    JOIN_GRACE_S); idle ThreadPoolExecutor workers are left out (the interpreter ends them at
    exit)."""
    deadline = time.monotonic() + (JOIN_GRACE_S if grace_s is None else grace_s)
    left: list[threading.Thread] = []
    for thread in threading.enumerate():
        if thread is threading.main_thread() or thread.daemon:
            continue
        if thread.name.startswith("ThreadPoolExecutor"):
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            left.append(thread)
    return left


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After every test and fixture: a leaked non-daemon thread fails the run, named. Not
    under mutmut: its process keeps the threads of its earlier pytest runs (the stats run's
    input threads), which would fail its clean run of core/runner.py's tests."""
    if "MUTANT_UNDER_TEST" in os.environ:
        return
    left = leaked_threads()
    if left:
        names = ", ".join(thread.name for thread in left)
        sys.stderr.write(f"\nFAILED: non-daemon threads still running after the tests: {names}\n")
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """If exit still hangs, every thread's stack is printed and the process ends failed. Not
    under mutmut (`./scripts/mutation`): it runs pytest again and again in its own process, which
    the watchdog would end a minute after the first run (mutmut sets MUTANT_UNDER_TEST:
    mutmut/mutation/trampoline.py, set_mutant_under_test)."""
    if "MUTANT_UNDER_TEST" in os.environ:
        return
    faulthandler.dump_traceback_later(EXIT_GRACE_S, exit=True)
