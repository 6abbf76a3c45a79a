"""launch_app: start a program without a shell, in its own session, detached from our output."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Mapping

from desktop_agent.core.errors import ToolError

#: how long a program may take to fail at once (bad arguments, missing library) and say so
EARLY_EXIT_S = 0.15
#: environment variables a launched program never sees: the model's API key
SECRET_ENV = ("OPENAI_API_KEY",)


def program_env(
    hidden: tuple[str, ...] = (), env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for a launched program: ours without SECRET_ENV and `hidden`.

    A program the model starts may be anything the screen talked it into; it gets
    nothing the user gave this app alone. Names are matched case-insensitively on
    Windows, where the environment is.
    """
    source = os.environ if env is None else env
    if sys.platform == "win32":
        hidden_upper = {name.upper() for name in (*SECRET_ENV, *hidden)}
        return {key: value for key, value in source.items() if key.upper() not in hidden_upper}
    names = {*SECRET_ENV, *hidden}
    return {key: value for key, value in source.items() if key not in names}


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
    """Starts programs detached from us; keeps only their pids, to reap them (no zombies),
    never to end them: a program the agent started is the user's to close.
    """

    def __init__(self, hidden_env: tuple[str, ...] = ()) -> None:
        """`hidden_env`: more variables to keep from launched programs (the configured
        api_key_env); SECRET_ENV are always kept from them."""
        self._pids: list[int] = []
        self.hidden_env = tuple(name for name in hidden_env if name)

    def launch(self, command: str, cancelled: threading.Event | None = None) -> str:
        argv = split_command(command)
        program = resolve(argv[0])
        if program is None:
            raise ToolError(f"program not found: {argv[0]!r} (not on PATH)")
        self.reap()
        windows_child = None
        try:
            env = program_env(self.hidden_env)
            if sys.platform == "win32":
                windows_child = _spawn_windows(program, argv, env)
                pid = windows_child.pid
            else:
                pid = _spawn(program, argv, env)
        except OSError as error:
            raise ToolError(f"cannot start {argv[0]!r}: {error.strerror or error}") from None
        (cancelled or threading.Event()).wait(EARLY_EXIT_S)
        if windows_child is not None:
            code = windows_child.poll()
            # Windows leaves no zombies: let go of it, marked done so Popen does not warn
            windows_child.returncode = 0
        else:
            code = self._exit_code(pid)
            if code is None:
                self._pids.append(pid)
        if code not in (None, 0):
            raise ToolError(f"{argv[0]!r} exited at once with code {code}")
        shown = subprocess.list2cmdline(argv) if windows_child is not None else shlex.join(argv)
        return f"started {shown} (pid {pid})"

    def _exit_code(self, pid: int) -> int | None:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        return os.waitstatus_to_exitcode(status) if done else None

    def reap(self) -> None:
        """Collect the exit status of programs that ended (the others keep running)."""
        self._pids = [pid for pid in self._pids if self._exit_code(pid) is None]


def _spawn(program: str, argv: list[str], env: dict[str, str]) -> int:
    """posix_spawn in a new session with /dev/null for stdio: no Popen object to outlive."""
    devnull = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    return os.posix_spawn(program, [program, *argv[1:]], env, file_actions=devnull, setsid=True)


def _spawn_windows(program: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) | getattr(
        subprocess, "DETACHED_PROCESS", 0
    )
    return subprocess.Popen(
        [program, *argv[1:]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        creationflags=flags,
        env=env,
    )
