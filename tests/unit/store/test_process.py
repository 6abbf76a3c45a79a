"""Process identities: who owns an active run, and whether that process still lives."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from desktop_agent.store.process import (
    ProcessIdentity,
    current_process,
    is_alive,
    process_identity,
)


def test_this_process_is_alive_with_a_start_time() -> None:
    me = current_process()
    assert me.pid == os.getpid()
    assert is_alive(me)
    if sys.platform.startswith("linux"):
        assert me.started.isdigit()
        assert process_identity(os.getpid()) == me


def test_a_reaped_process_is_gone(dead_pid: int) -> None:
    assert process_identity(dead_pid) is None
    assert not is_alive(ProcessIdentity(dead_pid, "1"))
    assert not is_alive(ProcessIdentity(dead_pid))


def test_a_live_process_with_another_start_time_is_a_reused_pid(
    live_process: subprocess.Popen[bytes],
) -> None:
    real = process_identity(live_process.pid)
    assert real is not None and is_alive(real)
    assert is_alive(ProcessIdentity(live_process.pid))  # start unknown: the pid decides
    if sys.platform.startswith("linux"):
        assert not is_alive(ProcessIdentity(live_process.pid, real.started + "0"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="zombies are a POSIX thing")
def test_a_zombie_counts_as_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    # Wait for the exit without reaping, so the child stays a zombie.
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    try:
        os.kill(child.pid, 0)  # the pid still answers
        assert process_identity(child.pid) is None
        assert not is_alive(ProcessIdentity(child.pid))
    finally:
        child.wait()


def test_pids_that_cannot_be_processes_are_gone() -> None:
    assert process_identity(0) is None
    assert process_identity(-5) is None
