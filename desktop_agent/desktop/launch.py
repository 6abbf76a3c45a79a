"""launch_app: start a program without a shell, in its own session, detached from our output."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading

from desktop_agent.core.errors import ToolError

#: how long a program may take to fail at once (bad arguments, missing library) and say so
EARLY_EXIT_S = 0.15


def split_command(command: str) -> list[str]:
    """The argv of a command line; POSIX quoting on Linux, Windows rules on Windows."""
    command = command.strip()
    if not command:
        raise ToolError("launch_app needs a command")
    if sys.platform == "win32":
        return _split_windows(command)
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise ToolError(f"cannot split the command {command!r}: {error}") from None
    return argv


def _split_windows(command: str) -> list[str]:
    """Windows command-line splitting: double quotes group, backslashes stay literal."""
    lexer = shlex.shlex(command, posix=True)
    lexer.whitespace_split = True
    lexer.escape = ""  # paths like C:\\Windows keep their backslashes
    lexer.quotes = '"'
    try:
        return list(lexer)
    except ValueError as error:
        raise ToolError(f"cannot split the command {command!r}: {error}") from None


def resolve(program: str) -> str | None:
    if sys.platform == "win32":
        from desktop_agent.desktop.win32 import resolve_program

        return resolve_program(program)
    import shutil

    if os.sep in program:
        return program if os.access(program, os.X_OK) and os.path.isfile(program) else None
    return shutil.which(program)


class Launcher:
    """Starts programs; keeps their handles only to reap them (no zombies), never to end them."""

    def __init__(self) -> None:
        self._children: list[subprocess.Popen[bytes]] = []

    def launch(self, command: str, cancelled: threading.Event | None = None) -> str:
        argv = split_command(command)
        program = resolve(argv[0])
        if program is None:
            raise ToolError(f"program not found: {argv[0]!r} (not on PATH)")
        self._reap()
        kwargs: dict[str, object] = {}
        if sys.platform == "win32":
            flags = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.DETACHED_PROCESS
            kwargs["creationflags"] = flags
        else:
            kwargs["start_new_session"] = True
        try:
            child = subprocess.Popen(
                [program, *argv[1:]],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                **kwargs,  # type: ignore[call-overload]
            )
        except OSError as error:
            raise ToolError(f"cannot start {argv[0]!r}: {error.strerror or error}") from None
        waiter = cancelled or threading.Event()
        waiter.wait(EARLY_EXIT_S)
        code = child.poll()
        if code not in (None, 0):
            raise ToolError(f"{argv[0]!r} exited at once with code {code}")
        self._children.append(child)
        return f"started {shlex.join(argv)} (pid {child.pid})"

    def _reap(self) -> None:
        self._children = [child for child in self._children if child.poll() is None]
