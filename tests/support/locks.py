"""Knowing that a process has reached a file lock, on every OS (no /proc/locks needed).

`announce_lock_waits(on_wait)` makes desktop_agent.instances.registry call `on_wait(lock path)`
right before it takes one of its locks: after its unlocked look (at the token, at an
instance file) and before it blocks. A test that holds the lock and waits for the
announcement knows the other side has looked and is waiting, and can change the files under
it. In a child process, run `announce_lock_waits_to(marker)` first: it touches `marker`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import desktop_agent.instances.registry as instances


def announce_lock_waits(on_wait: Callable[[Path], None]) -> Callable[[], None]:
    """Patch the registry's lock to announce itself; the function that undoes it."""
    # the registry's own name for store/private_files.exclusive_lock, which it looks up at
    # each call (it imports it by name, hence the ignores: it does not export it)
    taking = instances.exclusive_lock  # type: ignore[attr-defined]

    @contextmanager
    def announcing(path: Path) -> Iterator[None]:
        on_wait(Path(path))
        with taking(path):
            yield

    instances.exclusive_lock = announcing  # type: ignore[attr-defined]

    def undo() -> None:
        instances.exclusive_lock = taking  # type: ignore[attr-defined]

    return undo


def announce_lock_waits_to(marker: Path) -> None:
    """In a child process: touch `marker` when it reaches a lock."""
    announce_lock_waits(lambda _: Path(marker).touch())


def wait_for_paths(paths: Iterator[Path] | list[Path], timeout_s: float = 30.0) -> None:
    """Wait until every path exists (each process has announced itself)."""
    wanted = list(paths)
    deadline = time.monotonic() + timeout_s
    while not all(path.exists() for path in wanted):
        if time.monotonic() > deadline:
            missing = [str(path) for path in wanted if not path.exists()]
            raise AssertionError(f"never announced: {', '.join(missing)}")
        time.sleep(0.002)
