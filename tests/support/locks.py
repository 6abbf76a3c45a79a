"""Waiting until a process is blocked on a file lock (Linux: /proc/locks)."""

from __future__ import annotations

import time
from pathlib import Path

HAS_PROC_LOCKS = Path("/proc/locks").exists()


def wait_until_blocked_on(lock: Path, pid: int, timeout_s: float = 20.0) -> None:
    """Wait until `pid` waits for the flock on `lock` (a "->" line of /proc/locks)."""
    inode = f":{lock.stat().st_ino} "
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if "->" in fields and str(pid) in fields and inode in line + " ":
                return
        time.sleep(0.005)
    raise AssertionError(f"process {pid} never waited for the lock on {lock}")
