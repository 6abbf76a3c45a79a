"""Waiting until a process is blocked on a file lock (Linux: /proc/locks)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

HAS_PROC_LOCKS = Path("/proc/locks").exists()


def wait_until_blocked_on(lock: Path, pid: int, timeout_s: float = 20.0) -> None:
    """Wait until `pid` waits for the flock on `lock` (a "->" line of /proc/locks).

    The test is skipped when /proc/locks does not show the held lock itself: a kernel
    (or sandbox) that lists no locks gives nothing to wait on.
    """
    inode = f":{lock.stat().st_ino} "
    deadline = time.monotonic() + timeout_s
    held_seen = False
    while time.monotonic() < deadline:
        for line in Path("/proc/locks").read_text().splitlines():
            if inode not in line + " ":
                continue
            fields = line.split()
            if "->" not in fields:
                held_seen = True
            elif str(pid) in fields:
                return
        time.sleep(0.005)
    if not held_seen:
        pytest.skip("/proc/locks does not list file locks here")
    raise AssertionError(f"process {pid} never waited for the lock on {lock}")
