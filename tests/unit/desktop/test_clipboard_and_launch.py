"""Clipboard request counting, the missing-xclip error, and command splitting."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop_agent.core.errors import ToolError
from desktop_agent.desktop import launch, schedule
from desktop_agent.desktop.clipboard import WindowsPaster, XclipPaster, _StderrLines
from tests.unit.desktop import fake_ctypes
from tests.unit.desktop.fake_win32_clipboard import FakeWindowsClipboard


@pytest.mark.posix
@pytest.mark.posix
def test_a_silent_child_times_out_instead_of_blocking() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], stderr=subprocess.PIPE
    )
    try:
        reader = _StderrLines(child)
        assert not reader.read_until(lambda seen: bool(seen), timeout=0.05)
        # still running and silent: the read gave up at its deadline, not at the child's end
        assert child.poll() is None
        assert reader.lines == []
    finally:
        child.kill()
        child.wait()
        assert child.stderr is not None
        child.stderr.close()


def test_non_ascii_typing_without_xclip_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)

    with pytest.raises(ToolError, match="needs xclip on X11 \\(apt install xclip\\)"):
        XclipPaster().paste("€", lambda: None)


@pytest.mark.posix
def test_posix_commands_split_like_a_shell_without_running_one() -> None:
    assert launch.split_command("l3afpad '/tmp/my notes.txt' --x=\"a b\"") == [
        "l3afpad",
        "/tmp/my notes.txt",
        "--x=a b",
    ]


def test_windows_commands_keep_backslashes_and_group_double_quotes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")

    assert launch.split_command(r'notepad "C:\Users\Ada\My notes.txt"') == [
        "notepad",
        r"C:\Users\Ada\My notes.txt",
    ]
    assert launch.split_command(r"C:\Windows\System32\calc.exe") == [
        r"C:\Windows\System32\calc.exe"
    ]


def test_an_empty_command_is_refused() -> None:
    with pytest.raises(ToolError, match="launch_app needs a command"):
        launch.split_command("   ")


@pytest.mark.posix
def test_a_file_that_is_not_a_program_fails_clearly(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a program")
    text.chmod(0o644)
    script = tmp_path / "broken.bin"
    script.write_bytes(b"\x00\x01 not an executable format")
    script.chmod(0o755)

    with pytest.raises(ToolError, match=f"program not found: '{text}'"):
        launch.Launcher().launch(str(text))
    with pytest.raises(ToolError, match=f"cannot start '{script}': Exec format error"):
        launch.Launcher().launch(str(script))


LIBRARY_PATHS = pytest.mark.parametrize(
    ("frozen", "environ", "expected"),
    [
        # the frozen app (PyInstaller's bootloader put its folder first, kept the user's value)
        (True, {"LD_LIBRARY_PATH": "/opt/da/_internal:/home/u/lib",
                "LD_LIBRARY_PATH_ORIG": "/home/u/lib"}, "/home/u/lib"),
        # the frozen app of a user who had none: the bootloader's value alone, no copy
        (True, {"LD_LIBRARY_PATH": "/opt/da/_internal"}, None),
        # from source the user's own value is theirs to pass on
        (False, {"LD_LIBRARY_PATH": "/home/u/lib"}, "/home/u/lib"),
    ],
)  # fmt: skip


def library_path_seen(seen: Path) -> str | None:
    """The LD_LIBRARY_PATH in the `env` output a started program wrote to `seen`."""
    lines = dict(line.partition("=")[::2] for line in seen.read_text().splitlines())
    assert "LD_LIBRARY_PATH_ORIG" not in lines
    return lines.get("LD_LIBRARY_PATH")


def as_run_by(monkeypatch: pytest.MonkeyPatch, frozen: bool, environ: dict[str, str]) -> None:
    monkeypatch.delenv("LD_LIBRARY_PATH_ORIG", raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "frozen", frozen, raising=False)


@pytest.mark.skipif(sys.platform == "win32", reason="the bootloader's LD_LIBRARY_PATH: POSIX")
@LIBRARY_PATHS
def test_a_program_the_frozen_app_launches_gets_the_users_library_path(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    frozen: bool,
    environ: dict[str, str],
    expected: str | None,
) -> None:
    as_run_by(monkeypatch, frozen, environ)
    seen = tmp_path / "environ"

    launch.Launcher().launch(f"/bin/sh -c 'env > {seen}'")

    assert library_path_seen(seen) == expected


#: the app's own helper programs on Linux, each asked as the app asks it
HELPERS: dict[str, Callable[[], object]] = {
    "xclip": lambda: XclipPaster().read(),
    "systemctl": lambda: schedule.systemctl("daemon-reload"),
}


@pytest.mark.skipif(sys.platform == "win32", reason="the bootloader's LD_LIBRARY_PATH: POSIX")
@pytest.mark.parametrize("helper", sorted(HELPERS))
@LIBRARY_PATHS
def test_the_apps_own_helper_programs_get_the_users_library_path(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    helper: str,
    frozen: bool,
    environ: dict[str, str],
    expected: str | None,
) -> None:
    # xclip and systemctl are this system's programs: from the bundle they ran with its copies
    # of GTK, GLib, X11 and OpenSSL first on their library path, as launch_app's did before
    as_run_by(monkeypatch, frozen, environ)
    seen = tmp_path / "environ"
    programs = tmp_path / "bin"
    programs.mkdir()
    stand_in = programs / helper
    stand_in.write_text(f"#!/bin/sh\nenv > {seen}\nexit 1\n")
    stand_in.chmod(0o755)
    monkeypatch.setenv("PATH", f"{programs}:/usr/bin:/bin")

    HELPERS[helper]()

    assert library_path_seen(seen) == expected


class FakeWindowsChild:
    def __init__(self, code: int | None) -> None:
        self.pid = 4242
        self.code = code
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.code


@pytest.mark.parametrize(("code", "fails"), [(None, False), (0, False), (5, True)])
def test_windows_program_names_start_detached_and_an_early_exit_fails(
    monkeypatch: pytest.MonkeyPatch, code: int | None, fails: bool
) -> None:
    started: list[tuple[str, list[str]]] = []
    child = FakeWindowsChild(code)

    def spawn(program: str, argv: list[str], env: dict[str, str]) -> FakeWindowsChild:
        started.append((program, argv))
        return child

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(
        "desktop_agent.desktop.win32.resolve_program",
        lambda name: r"C:\Windows\system32\notepad.exe" if name == "notepad" else None,
    )
    monkeypatch.setattr(launch, "_spawn_windows", spawn)
    monkeypatch.setattr(launch, "EARLY_EXIT_S", 0.0)

    if fails:
        with pytest.raises(ToolError, match="'notepad' exited at once with code 5"):
            launch.Launcher().launch(r'notepad "C:\Users\Ada\notes.txt"')
    else:
        summary = launch.Launcher().launch(r'notepad "C:\Users\Ada\notes.txt"')
        said = "started" if code is None else "ran"
        assert summary.startswith(rf"{said} notepad C:\Users\Ada\notes.txt (pid 4242)")
    assert started == [(r"C:\Windows\system32\notepad.exe", ["notepad", r"C:\Users\Ada\notes.txt"])]
    assert child.returncode == 0  # let go of, so Popen does not warn about it
    with pytest.raises(ToolError, match="program not found: 'wordpad'"):
        launch.Launcher().launch("wordpad")


def pe_image(path: Path, subsystem: int) -> Path:
    """The first bytes of a PE image: DOS header, "PE\\0\\0", file header, optional header."""
    head = bytearray(0x200)
    head[:2] = b"MZ"
    head[0x3C:0x40] = (0x80).to_bytes(4, "little")
    head[0x80:0x84] = b"PE\0\0"
    head[0x80 + 24 : 0x80 + 26] = (0x20B).to_bytes(2, "little")  # PE32+ magic
    head[0x80 + 24 + 68 : 0x80 + 24 + 70] = subsystem.to_bytes(2, "little")
    path.write_bytes(bytes(head))
    return path


class WindowsPopen:
    """subprocess.Popen as Windows runs a program (CreateProcess; learn.microsoft.com,
    "Process Creation Flags" and "Creation of a Console"): a console-subsystem program started
    with DETACHED_PROCESS has no console, and one whose stdin is NUL reads end-of-file at once:
    cmd, powershell and python then exit 0 straight away. With CREATE_NEW_CONSOLE it has a
    console of its own and runs. A GUI program runs either way. `exits_after` polls, a program
    that runs ends by itself with `code` (a command that fails at once). `_handle` is the
    process handle (Lib/subprocess.py `_execute_child` on Windows keeps it there)."""

    started: list[WindowsPopen] = []

    def __init__(self, argv: list[str], **options: object) -> None:
        self.argv = argv
        self.options = options
        self.pid = 4242 + len(self.started)
        self._handle = 0x700 + len(self.started)
        self.returncode: int | None = None
        self.polls = 0
        self.idle_asked = 0  # WaitForInputIdle calls, counted by the fake kernel32
        flags = int(options.get("creationflags", 0))  # type: ignore[call-overload]
        self.console = launch.is_console_program(argv[0])
        no_console = bool(flags & launch.DETACHED_PROCESS) or options.get("stdin") is not None
        self.polls_left, self.code = (0, 0) if self.console and no_console else RUNS
        self.started.append(self)

    def poll(self) -> int | None:
        self.polls += 1
        if self.polls_left is None:
            return None
        if self.polls_left > 0:
            self.polls_left -= 1
            return None
        return self.code


#: how many WaitForInputIdle calls a GUI program answers WAIT_TIMEOUT before its window is up
IDLE_AFTER = 3
WAIT_TIMEOUT = 0x102
WAIT_FAILED = -1  # 0xFFFFFFFF as ctypes' default c_int restype reads it


class FakeUser32:
    """user32.WaitForInputIdle as learn.microsoft.com ("WaitForInputIdle function
    (winuser.h)") says it answers: 0 once the GUI program has finished its initialization
    and waits for input, WAIT_TIMEOUT before (with a 0 ms wait it returns at once), and
    WAIT_FAILED at once for a console program (it has no message queue)."""

    def WaitForInputIdle(self, process: ctypes.c_void_p, milliseconds: int) -> int:  # noqa: N802
        (child,) = [c for c in WindowsPopen.started if c._handle == process.value]
        assert milliseconds == 0  # the watch polls; it never blocks in the call
        if child.console:
            return WAIT_FAILED
        child.idle_asked += 1
        return 0 if child.idle_asked > IDLE_AFTER else WAIT_TIMEOUT


class FakeWindll:
    user32 = FakeUser32()


#: (polls before it ends or None to run on, exit code): how a started program behaves
RUNS: tuple[int | None, int] = (None, 0)


@pytest.fixture
def windows_programs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Path]:
    programs = {
        "cmd": pe_image(tmp_path / "cmd.exe", launch.IMAGE_SUBSYSTEM_WINDOWS_CUI),
        "notepad": pe_image(tmp_path / "notepad.exe", 2),  # IMAGE_SUBSYSTEM_WINDOWS_GUI
        "setup": tmp_path / "setup.cmd",
    }
    programs["setup"].write_text("@echo off\n")
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(
        "desktop_agent.desktop.win32.resolve_program",
        lambda name: str(programs[name]) if name in programs else None,
    )
    monkeypatch.setattr(subprocess, "Popen", WindowsPopen)
    monkeypatch.setattr(WindowsPopen, "started", [])
    fake_ctypes.install(monkeypatch, FakeWindll(), fake_ctypes.ThreadErrors())
    return programs


def test_a_console_program_gets_a_console_of_its_own_and_keeps_running(
    windows_programs: dict[str, Path],
) -> None:
    summary = launch.Launcher().launch("cmd /k echo hi")

    (child,) = WindowsPopen.started
    assert summary == "started cmd /k echo hi (pid 4242)"
    assert int(child.options["creationflags"]) & launch.CREATE_NEW_CONSOLE  # type: ignore[call-overload]
    assert not int(child.options["creationflags"]) & launch.DETACHED_PROCESS  # type: ignore[call-overload]
    assert "stdin" not in child.options and "stdout" not in child.options
    assert launch.is_console_program(str(windows_programs["setup"]))


def test_a_gui_program_still_starts_detached_with_no_stdio(
    windows_programs: dict[str, Path],
) -> None:
    launch.Launcher().launch("notepad")

    (child,) = WindowsPopen.started
    assert int(child.options["creationflags"]) & launch.DETACHED_PROCESS  # type: ignore[call-overload]
    assert child.options["stdin"] == subprocess.DEVNULL


def test_a_gui_programs_step_ends_when_its_window_is_up_not_after_the_whole_watch(
    windows_programs: dict[str, Path],
) -> None:
    summary = launch.Launcher().launch("notepad")

    (child,) = WindowsPopen.started
    assert summary == "started notepad (pid 4242); its window is up"
    # polled until WaitForInputIdle said it was up: not the ~50 polls of the whole second
    assert child.polls == IDLE_AFTER + 1


def test_a_stop_during_the_watch_ends_it_at_once(
    windows_programs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launch, "EARLY_EXIT_S", 3600.0)  # a watch only the stop can end
    stopped = threading.Event()
    poll = WindowsPopen.poll

    def stop_at_the_second_poll(child: WindowsPopen) -> int | None:
        if child.polls == 1:
            stopped.set()  # the user pressed stop while the program was watched
        return poll(child)

    monkeypatch.setattr(WindowsPopen, "poll", stop_at_the_second_poll)

    summary = launch.Launcher().launch("cmd /k echo hi", stopped)

    (child,) = WindowsPopen.started
    assert (summary, child.polls) == ("started cmd /k echo hi (pid 4242)", 2)


@pytest.mark.parametrize(("code", "fails"), [(0, False), (9009, True)])
def test_a_program_that_ends_within_the_first_second_is_not_reported_started(
    windows_programs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, code: int, fails: bool
) -> None:
    # it runs for a few polls (a few tenths of a second), then ends
    monkeypatch.setattr(sys.modules[__name__], "RUNS", (5, code))

    if fails:
        with pytest.raises(ToolError, match="'cmd' exited at once with code 9009"):
            launch.Launcher().launch("cmd /c nosuchcommand")
    else:
        summary = launch.Launcher().launch("cmd /c echo hi")
        assert summary.startswith("ran cmd /c echo hi (pid 4242); it ended within 1 s with code 0")


@pytest.fixture
def windows_clipboard(monkeypatch: pytest.MonkeyPatch) -> FakeWindowsClipboard:
    fake = FakeWindowsClipboard("what the user copied")
    fake_ctypes.install(monkeypatch, fake, fake.errors)
    return fake


def test_a_windows_paste_puts_the_text_on_the_clipboard_then_restores_the_old_one(
    windows_clipboard: FakeWindowsClipboard,
) -> None:
    seen: list[str | None] = []

    WindowsPaster(settle_s=0).paste("Grüße, 東京", lambda: seen.append(windows_clipboard.text()))

    assert seen == ["Grüße, 東京"]
    assert windows_clipboard.text() == "what the user copied"
    assert windows_clipboard.windows == set()  # the owner window is gone again


@pytest.mark.parametrize("call", ["SetClipboardData", "GlobalAlloc", "EmptyClipboard"])
def test_a_clipboard_that_does_not_take_the_text_fails_the_step_and_pastes_nothing(
    windows_clipboard: FakeWindowsClipboard, call: str
) -> None:
    windows_clipboard.fail = {call}
    pressed: list[None] = []

    with pytest.raises(ToolError, match=f"cannot use the clipboard: {call} failed"):
        WindowsPaster(settle_s=0).paste("Grüße", lambda: pressed.append(None))

    assert pressed == []


def test_a_refused_set_names_the_error_setclipboarddata_left_not_what_came_after(
    windows_clipboard: FakeWindowsClipboard,
) -> None:
    # issue 37 item 9: the memory is freed (GlobalFree) and the interpreter works on between
    # the refusal and the reading of its error (fake_ctypes: `clobbered`); ctypes' copy of
    # the refusal's error is what the step says
    windows_clipboard.fail = {"SetClipboardData"}
    windows_clipboard.errors.clobbered = True

    with pytest.raises(ToolError, match=r"SetClipboardData failed \(Windows error 5\)"):
        WindowsPaster(settle_s=0).paste("Grüße", lambda: None)


def test_what_the_agent_pastes_stays_out_of_clipboard_history_and_lines_end_in_crlf(
    windows_clipboard: FakeWindowsClipboard,
) -> None:
    # issue 37 item 7: Win+V history and cloud sync kept the pasted text (a password too)
    # and the user's text put back; a lone LF is no line break to many Windows programs
    seen: list[str | None] = []

    WindowsPaster(settle_s=0).paste(
        "line one\nsecret 東京", lambda: seen.append(windows_clipboard.text())
    )

    assert seen == ["line one\r\nsecret 東京"]
    assert windows_clipboard.history == []
    assert windows_clipboard.text() == "what the user copied"


def test_a_clipboard_held_by_another_program_fails_the_step(
    windows_clipboard: FakeWindowsClipboard,
) -> None:
    windows_clipboard.other_program_holds = True

    with pytest.raises(ToolError, match="held by another program"):
        WindowsPaster(settle_s=0).paste("Grüße", lambda: None)
