"""Entry point of `desktop-agent`: the app without arguments, a sub-command with them.

`stop-all` is answered here first, before the command line's package is imported: a stop is
felt, and argparse, logging and pathlib were a third of its time (benchmarks/README.md). The
app (no command, at most a --data-dir) is opened from here too: its window paints sooner.
"""

from __future__ import annotations

import gc
import os
import sys

from desktop_agent.instances import APPROVAL_DIALOG  # a constant: the package imports nothing

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

#: cli.exits.EXIT_STOPPED (that module is not imported on this path)
EXIT_STOPPED = 2


def main(argv: list[str] | None = None) -> int:
    """The app or a sub-command; its output's reader gone (`… | head -1`) ends it quietly."""
    try:
        code = _main(argv)
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()  # here, not at exit, where a broken pipe is only reported
    except BrokenPipeError:
        _quiet_broken_streams()
        # what it was doing was ended (a run stopped, an eval stopped, a listing cut short)
        return EXIT_STOPPED
    return code


def _quiet_broken_streams() -> None:
    """Point stdout and stderr, where their reader is gone, at the null device: what is still
    buffered, flushed at exit, would raise (and be reported) again. Python's way: the Note on
    SIGPIPE, Doc/library/signal.rst (Python ignores SIGPIPE; writes fail with EPIPE)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except BrokenPipeError:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, stream.fileno())
            os.close(null)
        except (OSError, ValueError):  # closed, or no file descriptor (a test's capture)
            continue


def _main(argv: list[str] | None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words == [APPROVAL_DIALOG]:
        from desktop_agent.ui.approval_prompt import main as approval_dialog

        return approval_dialog()
    if "stop-all" in words:
        code = stop_all(words)
        if code is not None:
            return code
    app, data_dir = _plain_command_line(words, None)
    if app:
        # the app, read without the command line's package: argparse and its grammar are
        # some 4 ms of the way to the window's first paint. It asks for nothing at its start
        # (its window's Start is off until its engine is up): no entry mark
        return open_app(words, data_dir)
    # a sub-command: before its imports (a run's process spends 0.3-1 s in them), so that a
    # stop-all from now on is a stop of what it asks for (see entry_stop_mark)
    entry_mark = entry_stop_mark(words)
    _files_private()

    from desktop_agent.launch import main as launch

    return launch(words, entry_mark=entry_mark)


def open_app(argv: Sequence[str], data_dir: str | None) -> int:
    """The app, Python's automatic garbage collector off from here: the start allocates much
    and frees little, and the collector's passes over its imports were 5-10 ms of the way to
    the window's first paint. The app's own collector on the GUI thread (ui/collector.py)
    collects from the first paint on, for the rest of the app's life; the automatic one is on
    again when the app has ended."""
    gc.disable()
    try:
        _files_private()
        from desktop_agent.launch import open_app as launch_app

        return launch_app(argv, data_dir)
    finally:
        gc.enable()


def _files_private() -> None:
    """Everything this process makes (history, screenshots, token, log) is its user's alone;
    the modules that make those files set the modes too, for library users."""
    from desktop_agent.store.private_files import PRIVATE_UMASK

    os.umask(PRIVATE_UMASK)


def entry_stop_mark(argv: Sequence[str]) -> tuple[str, str]:
    """(the data dir the command line names, where its stop-all mark stands now).

    Every stop-all marks `instances/stop-all` before it looks for the instances to tell
    (instances/stop_all.py STOP_MARK_FILE); a process still importing has registered nothing, so
    it cannot be told. `run` and `routine run` hand this to their Host, which stops the run
    they were asked for when the mark has grown since (host.py `Host.start`). The data dir is
    the last `--data-dir DIR` / `--data-dir=DIR`, as argparse takes it, else
    DESKTOP_AGENT_HOME, else the platform's (without platformdirs on Linux); the command
    compares it with the one it resolves and reads the mark again when they differ."""
    from desktop_agent.instances.stop_all import read_stop_mark

    named = None
    for index, word in enumerate(argv):
        if word == "--data-dir" and index + 1 < len(argv):
            named = argv[index + 1]
        elif word.startswith("--data-dir="):
            named = word.partition("=")[2]
    data_dir = _data_dir_named(named or os.environ.get("DESKTOP_AGENT_HOME"))
    return data_dir, read_stop_mark(data_dir)


def stop_all(argv: Sequence[str]) -> int | None:
    """`desktop-agent stop-all [--data-dir DIR]` in the fewest steps: every live instance asked
    at once, "stopped N run(s)" printed, exit 0 (DESIGN §5), as `cli.stop_all` does.

    None, having sent nothing, when the command line says more than that or the data dir asks
    for what only the full command does: make the data dir or make it private, remove a stale
    or unreadable instance file, say that the token is missing or the data dir cannot be
    written, or write to the log where there is no console. The caller then runs the full
    command, which does all of that as before. What goes wrong after the requests were sent
    (an instance that does not prove itself or answer) is logged as the full command logs it.
    """
    try:
        data_dir = _data_dir_of(argv)
        if data_dir is None or sys.stdout is None or sys.stderr is None:
            return None
        if sys.platform == "win32" or not _private_and_writable(data_dir):
            return None
        from desktop_agent.instances import stop_all as client

        client.mark_stop_all(data_dir)  # before the registry is read: see STOP_MARK_FILE
        listeners = _live_listeners(data_dir)
        if listeners is None:
            return None
        stopped = 0
        if listeners:
            token, _ = client.read_token(data_dir)
            if token is None:
                return None
            stopped, notices = client.stop_everywhere(listeners, token)
            if notices:
                _log(data_dir, notices)
        print(_stopped_line(stopped), flush=True)
        return 0
    except KeyboardInterrupt:
        return EXIT_STOPPED


def _stopped_line(stopped: int) -> str:
    """stop-all's line in the command line's language (cli/stop_all.py says the same), made
    once the stops were sent: the language's look-up is not on the way to them."""
    from desktop_agent.language import catalogue_for, cli_language, say

    return say(catalogue_for(cli_language()), "CLI", "stopped {count} run(s)", {"count": stopped})


def _plain_command_line(argv: Sequence[str], command: str | None) -> tuple[bool, str | None]:
    """Whether `argv` is `command` (None: no command, the app) with at most one
    `--data-dir DIR` (or `--data-dir=DIR`), before or after it, as the full command line's
    parser reads it; and the DIR it names (None when it names none)."""
    words, named, commands = list(argv), [], 0
    while words:
        word = words.pop(0)
        if word == "--data-dir" and words and not words[0].startswith("-"):
            named.append(words.pop(0))
        elif word.startswith("--data-dir="):
            named.append(word.partition("=")[2])
        elif command is not None and word == command:
            commands += 1
        else:
            return False, None
    if commands != (command is not None) or len(named) > 1:
        return False, None
    return True, named[0] if named else None


def _data_dir_of(argv: Sequence[str]) -> str | None:
    """The data dir of a command line that is `stop-all` with at most one `--data-dir DIR`
    (or `--data-dir=DIR`), before or after it; None for any other command line."""
    plain, named = _plain_command_line(argv, "stop-all")
    if not plain:
        return None
    return _data_dir_named(named if named is not None else os.environ.get("DESKTOP_AGENT_HOME"))


def _data_dir_named(value: str | None) -> str:
    """`value` (a --data-dir or DESKTOP_AGENT_HOME) with its ~ expanded; the platform's data
    dir when it is empty or None (the standard library's answer on Linux, not platformdirs')."""
    if value:
        return os.path.expanduser(value)
    from desktop_agent.store.data_dir import default_data_dir

    return default_data_dir()


def _private_and_writable(data_dir: str) -> bool:
    """Is the data dir there, ours, readable by us alone, and can we write in it? Then making
    it and making it private (store.data_dir.make_data_dir) would change nothing that others
    could see, and the full command's check that it can be written would pass."""
    import stat

    try:
        info = os.stat(data_dir)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            return False
        probe = os.path.join(data_dir, f".write-test-{os.getpid()}")
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        os.unlink(probe)
    except OSError:
        return False
    return True


def _live_listeners(data_dir: str) -> list[tuple[int, int]] | None:
    """(pid, port) of every instance file of the data dir; None when one is stale or cannot
    be read (the full command removes it, under the registry's lock, with a log line)."""
    from desktop_agent.instances import stop_all as client
    from desktop_agent.store.liveness import still_running

    folder = os.path.join(data_dir, client.INSTANCES_DIR)
    listeners = []
    for name in client.instance_file_names(folder):
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as file:
                fields = client.parse_instance(file.read())
        except (OSError, ValueError):
            return None
        if fields is None or not still_running(fields["pid"], fields["process_started"]):
            return None
        listeners.append((fields["pid"], fields["port"]))
    return listeners


def _log(data_dir: str, notices: Sequence[tuple[int, str]]) -> None:
    """The notices to the data dir's log, as the full command writes them."""
    from pathlib import Path

    from desktop_agent.instances.registry import log_notices
    from desktop_agent.logs import log_to_file
    from desktop_agent.store.private_files import PRIVATE_UMASK

    os.umask(PRIVATE_UMASK)
    log_to_file(Path(data_dir))
    log_notices(notices)


if __name__ == "__main__":
    sys.exit(main())
