"""Who owns an active run: a process id plus its start time, and whether that process lives."""

from __future__ import annotations

import os
from dataclasses import dataclass

from desktop_agent.store.liveness import running_since, start_time, still_running


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    """A process, told apart from a later process that got the same pid.

    `started` is the start time of the process as the OS reports it (clock ticks
    since boot on Linux, a FILETIME on Windows); "" where it cannot be read, and
    then only the pid is compared.
    """

    pid: int
    started: str = ""


def current_process() -> ProcessIdentity:
    pid = os.getpid()
    return ProcessIdentity(pid, start_time(pid) or "")


def process_identity(pid: int) -> ProcessIdentity | None:
    """The live process with this pid, or None when there is none (a zombie counts as gone)."""
    started = running_since(pid)
    return None if started is None else ProcessIdentity(pid, started)


def is_alive(owner: ProcessIdentity) -> bool:
    """Is the process that stored `owner` still running (and not a later one with its pid)?"""
    return still_running(owner.pid, owner.started)
