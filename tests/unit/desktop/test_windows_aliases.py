"""An App Execution Alias (winget, the Store's python) starts with a console of its own, not
detached, where it ended at once (issue 37 item 9)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from desktop_agent.desktop import launch
from tests.unit.desktop.test_clipboard_and_launch import (
    RUNS,
    WindowsPopen,
    windows_programs,  # noqa: F401 - the fixture
)

#: the console programs behind the aliases in WindowsApps
ALIAS_TARGETS = {"winget.exe": True}


class AliasPopen(WindowsPopen):
    """CreateProcess of an App Execution Alias: a zero-byte reparse point in
    %LOCALAPPDATA%\\Microsoft\\WindowsApps that only CreateProcess follows, to the packaged
    program (a console one for winget: detached, it has no console and ends at once with
    code 0, as WindowsPopen's console programs do)."""

    def __init__(self, argv: list[str], **options: object) -> None:
        super().__init__(argv, **options)
        if Path(argv[0]).name in ALIAS_TARGETS:
            self.console = ALIAS_TARGETS[Path(argv[0]).name]
            flags = int(options.get("creationflags", 0))  # type: ignore[call-overload]
            detached = bool(flags & launch.DETACHED_PROCESS) or options.get("stdin") is not None
            self.polls_left, self.code = (0, 0) if detached else RUNS


@pytest.fixture
def alias(
    windows_programs: dict[str, Path],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    apps = tmp_path / "WindowsApps"
    apps.mkdir()
    winget = apps / "winget.exe"
    winget.write_bytes(b"")  # what reading a reparse point of this kind gives, at best
    windows_programs["winget"] = winget
    monkeypatch.setattr(subprocess, "Popen", AliasPopen)
    return winget


def test_an_app_execution_alias_gets_a_console_and_keeps_running(alias: Path) -> None:
    summary = launch.Launcher().launch("winget search notepad")

    # on old main: started detached, it ended at once, "ran winget … code 0"
    assert summary == "started winget search notepad (pid 4242)"
    (child,) = AliasPopen.started
    assert int(child.options["creationflags"]) & launch.CREATE_NEW_CONSOLE  # type: ignore[call-overload]


def test_a_file_that_cannot_be_read_counts_as_a_console_program(tmp_path: Path) -> None:
    assert launch.is_console_program(str(tmp_path / "gone.exe"))
    (tmp_path / "empty.exe").write_bytes(b"")
    assert launch.is_console_program(str(tmp_path / "empty.exe"))


@pytest.mark.parametrize("scheduled_from", ["desktop-agent-cli.exe", "desktop-agent.exe"])
def test_a_scheduled_routine_starts_the_windowed_exe_not_the_console_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheduled_from: str
) -> None:
    # issue 37 item 9: a task that starts desktop-agent-cli.exe flashes a console window over
    # the user's desktop at every run
    from desktop_agent.desktop import schedule

    bundle = tmp_path / "desktop-agent"
    bundle.mkdir()
    for exe in ("desktop-agent.exe", "desktop-agent-cli.exe"):
        (bundle / exe).write_bytes(b"MZ")
    monkeypatch.setattr("sys.platform", "win32")
    monkeypatch.setattr("sys.frozen", True, raising=False)
    monkeypatch.setattr("sys.executable", str(bundle / scheduled_from))

    argv = schedule.command_line("backup", tmp_path / "data")

    assert argv[0] == str(bundle / "desktop-agent.exe")
    assert argv[1:] == ["--data-dir", str(tmp_path / "data"), "routine", "run", "backup",
                        "--scheduled"]  # fmt: skip
