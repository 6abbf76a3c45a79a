"""launch_app: start a program without a shell, in its own session, detached from our output.

Windows: a console program (cmd, powershell, python: a PE image of the console subsystem, or a
.bat/.cmd) gets a console of its own (CREATE_NEW_CONSOLE, its stdio that console's); started
detached (DETACHED_PROCESS, stdin from NUL) it has no console and ends at once with code 0.
GUI programs start detached as before. On every system a program that ends within
EARLY_EXIT_S is reported with its exit code: non-zero fails the step, zero says it ended
(never "started"). The watch ends sooner when the program's window is up (`WindowWatch`):
a GUI launch's step takes as long as the program needs to show it, not the whole second;
and at once when the run is stopped.
"""

from __future__ import annotations

import logging
import ntpath
import os
import posixpath
import shlex
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_agent.core.errors import StopRequested, ToolError

if TYPE_CHECKING:
    from desktop_agent.desktop.inventory.x11 import X11Windows

log = logging.getLogger(__name__)

#: how long a program is watched for ending at once (bad arguments, a missing library, a
#: console program without a console, a launcher that hands over and exits)
EARLY_EXIT_S = 1.0
POLL_S = 0.02
#: the PE optional header's Subsystem value of a console program
IMAGE_SUBSYSTEM_WINDOWS_CUI = 3
CREATE_NEW_CONSOLE = 0x00000010
CREATE_NEW_PROCESS_GROUP = 0x00000200
DETACHED_PROCESS = 0x00000008
#: environment variables a launched program never sees: the model's API key
SECRET_ENV = ("OPENAI_API_KEY",)


def program_env(
    hidden: tuple[str, ...] = (), env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for a program this app starts: ours without SECRET_ENV and `hidden`,
    and, from the frozen bundle, without what the bundle put there for itself
    (`_without_bundle`) and with the user's library search path (`_user_library_path`).

    A program the model starts may be anything the screen talked it into; it gets
    nothing the user gave this app alone. The app's own helpers (xclip, systemctl,
    schtasks) get the same: they are this system's programs, not the bundle's. Names are
    matched case-insensitively on Windows, where the environment is.
    """
    source = os.environ if env is None else env
    windows = sys.platform == "win32"
    hidden_names = {_env_name(name, windows) for name in (*SECRET_ENV, *hidden)}
    result = {
        key: value for key, value in source.items() if _env_name(key, windows) not in hidden_names
    }
    if getattr(sys, "frozen", False) and sys.platform != "darwin":
        _without_bundle(result, getattr(sys, "_MEIPASS", None), windows)
        if not windows:
            _user_library_path(result)
    return result


def _env_name(name: str, windows: bool) -> str:
    return name.upper() if windows else name


#: set to the bundle by PyInstaller's PySide6 run-time hook on every system
#: (PyInstaller/hooks/rthooks/pyi_rth_pyside6.py), overwriting any value the user had: every
#: Qt program we start would load our plugins and QML modules
BUNDLE_QT_ENV = ("QT_PLUGIN_PATH", "QML2_IMPORT_PATH")


def _without_bundle(env: dict[str, str], bundle: str | None, windows: bool) -> None:
    """Drop BUNDLE_QT_ENV and every PATH entry inside the bundle from `env`: the same hook
    puts sys._MEIPASS first on Windows' PATH, where a program looks for its DLLs."""
    paths = ntpath if windows else posixpath

    def inside(entry: str) -> bool:
        if not bundle:
            return False
        folder = paths.normcase(paths.normpath(bundle))
        here = paths.normcase(paths.normpath(entry))
        return bool(here == folder or here.startswith(folder.rstrip(paths.sep) + paths.sep))

    for key in list(env):
        name = _env_name(key, windows)
        if name in BUNDLE_QT_ENV:
            del env[key]
        elif name == "PATH":
            kept = [entry for entry in env[key].split(paths.pathsep) if entry and not inside(entry)]
            if kept:
                env[key] = paths.pathsep.join(kept)
            else:
                del env[key]


def _user_library_path(env: dict[str, str]) -> None:
    """The library search path the user had, in `env` of a program the frozen app launches.

    The bundle's bootloader (PyInstaller, Linux) runs the app with LD_LIBRARY_PATH starting at
    its own folder of libraries — copies of the build machine's GTK, GLib, X11, OpenSSL… — and
    keeps the value the user had in LD_LIBRARY_PATH_ORIG (bootloader/src/pyi_utils_posix.c,
    pyi_utils_set_library_search_path). A program built for this system's libraries would load
    the bundle's first; PyInstaller's documentation asks for the user's value back before an
    external program starts ("LD_LIBRARY_PATH / LIBPATH considerations"): that, or none.
    """
    original = env.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is None:
        env.pop("LD_LIBRARY_PATH", None)
    else:
        env["LD_LIBRARY_PATH"] = original


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


#: what cmd.exe acts on in a batch file's command line: `&|<>` chain and redirect, `^` escapes,
#: `%VAR%` (and `!VAR!` with delayed expansion) expand even inside quotes, `()` group, and `"`
#: flips cmd's quoting so the rest of the line acts
BATCH_METACHARACTERS = frozenset('"&|<>^%!()')


def refuse_batch_arguments(program: str, argv: list[str]) -> None:
    """ToolError when `program` is a batch file and an argument holds a BATCH_METACHARACTERS
    character or a control character (a newline ends cmd's command).

    Windows starts a .bat/.cmd as `cmd.exe /c` with the command line, and list2cmdline quotes
    for the C runtime, not for cmd: `a&calc` runs calc ("BatBadBut", CVE-2024-24576; Python's
    subprocess documentation, "Security Considerations" and the Windows `shell` warning).
    No quoting makes `%` safe, so such an argument is refused with the reason.
    """
    if Path(program).suffix.lower() not in (".bat", ".cmd"):
        return
    for argument in argv[1:]:
        acting = sorted(
            {char for char in argument if char in BATCH_METACHARACTERS or not char.isprintable()}
        )
        if acting:
            shown = " ".join(repr(char) for char in acting)
            raise ToolError(
                f"refused: {Path(program).name} is a batch file, which Windows runs through "
                f"cmd.exe, and its argument {argument!r} holds {shown}, which cmd would act on "
                "(run other commands, expand variables); pass it without those characters"
            )


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
        if sys.platform == "win32":
            refuse_batch_arguments(program, argv)
        self.reap()
        if cancelled is not None and cancelled.is_set():
            # the stop came while this waited for a worker thread: start nothing
            raise StopRequested("stopped before the program was started")
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
        with WindowWatch(pid, windows_child) as window:
            if windows_child is not None:
                code = _early_exit(windows_child.poll, cancelled, window.up)
                # Windows leaves no zombies: let go of it, marked done so Popen does not warn
                windows_child.returncode = 0
            else:
                code = _early_exit(lambda: self._exit_code(pid), cancelled, window.up)
                if code is None:
                    self._pids.append(pid)
        if code not in (None, 0):
            raise ToolError(f"{argv[0]!r} exited at once with code {code}")
        shown = subprocess.list2cmdline(argv) if windows_child is not None else shlex.join(argv)
        if code == 0:
            return (
                f"ran {shown} (pid {pid}); it ended within {EARLY_EXIT_S:g} s with code 0 "
                "(a command that finished, or a launcher that handed over)"
            )
        return f"started {shown} (pid {pid})" + ("; its window is up" if window.seen else "")

    def _exit_code(self, pid: int) -> int | None:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        return os.waitstatus_to_exitcode(status) if done else None

    def reap(self) -> None:
        """Collect the exit status of programs that ended (the others keep running)."""
        self._pids = [pid for pid in self._pids if self._exit_code(pid) is None]


def _early_exit(
    poll: Callable[[], int | None],
    cancelled: threading.Event | None,
    window_up: Callable[[], bool] = lambda: False,
    clock: Callable[[], float] = time.monotonic,
) -> int | None:
    """The exit code of a program that ends within EARLY_EXIT_S, else None: still running
    when the bound passed or its window came up, or the run was stopped meanwhile (then it
    is not waited for: the stop ends the watch at once)."""
    stop = cancelled or threading.Event()
    deadline = clock() + EARLY_EXIT_S
    while True:
        code = poll()
        if code is not None or window_up() or clock() >= deadline or stop.wait(POLL_S):
            return code


class WindowWatch:
    """Whether a started program's window is up, asked at each poll of the early-exit watch.

    Windows: WaitForInputIdle (win32.input_idle; a console program never is, so it is watched
    the whole EARLY_EXIT_S). X11: a managed window whose _NET_WM_PID is the program's. With
    neither (no display, Wayland, a program whose window is a child process's — a wrapper
    script), or once asking fails, it never is, and the watch runs its bound.

    Attributes:
        seen: the window was up when the watch ended.
    """

    def __init__(self, pid: int, windows_child: subprocess.Popen[bytes] | None) -> None:
        self.pid = pid
        self.seen = False
        self._handle: int | None = None
        self._x11: X11Windows | None = None
        if windows_child is not None:
            self._handle = int(getattr(windows_child, "_handle", 0)) or None
        elif os.environ.get("DISPLAY"):
            from desktop_agent.desktop.inventory.x11 import X11Windows

            self._x11 = X11Windows()

    def __enter__(self) -> WindowWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        x11, self._x11 = self._x11, None
        if x11 is not None:
            x11.close()

    def up(self) -> bool:
        try:
            if self._handle is not None:
                from desktop_agent.desktop.win32 import input_idle

                self.seen = input_idle(self._handle)
            elif self._x11 is not None:
                self.seen = self.pid in self._x11.client_pids()
        except Exception:  # noqa: BLE001 - no answer is "not known": the watch runs its bound
            log.debug("cannot tell whether pid %s has a window", self.pid, exc_info=True)
            self._handle = None
            self.__exit__()
        return self.seen


def is_console_program(path: str) -> bool:
    """Windows: whether `path` runs in a console (a .bat/.cmd, or a PE image whose optional
    header says IMAGE_SUBSYSTEM_WINDOWS_CUI). One that cannot be read counts as a console
    program: an App Execution Alias (winget, the Store's python, in WindowsApps) is a
    reparse point only CreateProcess follows — reading it fails or gives nothing — and
    started detached a console program behind it ends at once, while CREATE_NEW_CONSOLE
    costs a GUI program nothing (a console is made for a console-subsystem image only)."""
    if Path(path).suffix.lower() in (".bat", ".cmd"):
        return True
    try:
        with open(path, "rb") as file:
            head = file.read(4096)
    except OSError:
        return True
    if not head:
        return True
    if head[:2] != b"MZ" or len(head) < 0x40:
        return False
    (pe,) = struct.unpack_from("<I", head, 0x3C)
    # "PE\0\0", the 20-byte file header, then the optional header: Subsystem at offset 68
    subsystem_at = pe + 4 + 20 + 68
    if head[pe : pe + 4] != b"PE\0\0" or len(head) < subsystem_at + 2:
        return False
    (subsystem,) = struct.unpack_from("<H", head, subsystem_at)
    return bool(subsystem == IMAGE_SUBSYSTEM_WINDOWS_CUI)


def _spawn(program: str, argv: list[str], env: dict[str, str]) -> int:
    """posix_spawn in a new session with /dev/null for stdio: no Popen object to outlive."""
    devnull = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    return os.posix_spawn(program, [program, *argv[1:]], env, file_actions=devnull, setsid=True)


def start_program(argv: list[str], **options: Any) -> subprocess.Popen[Any]:
    """subprocess.Popen(argv, **options), on Windows with the system's DLL search order, not
    the frozen bundle's (win32.system_dll_search): how this app starts every Windows program."""
    from desktop_agent.desktop.win32 import system_dll_search

    with system_dll_search():
        return subprocess.Popen(argv, **options)


def _spawn_windows(program: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    if is_console_program(program):
        # its stdio are its new console's: no redirection (STARTF_USESTDHANDLES) at all
        return start_program(
            [program, *argv[1:]],
            close_fds=True,
            creationflags=CREATE_NEW_CONSOLE | CREATE_NEW_PROCESS_GROUP,
            env=env,
        )
    return start_program(
        [program, *argv[1:]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        creationflags=DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP,
        env=env,
    )
