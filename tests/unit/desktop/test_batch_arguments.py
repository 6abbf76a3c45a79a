"""Arguments to a batch file that cmd.exe would act on are refused with the reason, since
Windows runs a .bat/.cmd through `cmd.exe /c` ("BatBadBut"; issue 37 item 6)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import cast

import pytest

from desktop_agent.core.errors import ToolError
from desktop_agent.desktop import launch
from tests.unit.desktop.test_clipboard_and_launch import (
    WindowsPopen,
    windows_programs,  # noqa: F401 - the fixture
)

ENVIRONMENT = {"USERPROFILE": r"C:\Users\Ada"}


def cmd_commands(line: str, env: dict[str, str]) -> list[str]:
    """The commands `cmd.exe /c LINE` runs, as cmd reads a line (learn.microsoft.com, "cmd"
    and "Command shell overview"; the "BatBadBut" write-up, flatt.tech, 2024): `%NAME%`
    expands first, inside quotes too; a line feed ends the line; outside double quotes (each
    `"` toggles, a backslash does not escape it) `^` escapes the next character and `&`, `|`,
    `<`, `>` end a command (chain, pipe, redirect)."""
    line = re.sub(r"%([^%\n]+)%", lambda found: env.get(found[1].upper(), found[0]), line)
    line = line.split("\n", 1)[0]
    commands, current, quoted, escaped = [], "", False, False
    for char in line:
        if escaped:
            current, escaped = current + char, False
        elif char == '"':
            current, quoted = current + char, not quoted
        elif not quoted and char == "^":
            escaped = True
        elif not quoted and char in "&|<>":
            commands.append(current.strip())
            current = ""
        else:
            current += char
    return [command for command in [*commands, current.strip()] if command]


class BatchPopen(WindowsPopen):
    """CreateProcess of a .bat/.cmd: Windows runs `cmd.exe /c` with the command line
    subprocess built (list2cmdline, Lib/subprocess.py); `commands` is what cmd then runs."""

    def __init__(self, argv: list[str], **options: object) -> None:
        super().__init__(argv, **options)
        self.line = subprocess.list2cmdline(argv)
        self.commands = cmd_commands(self.line, ENVIRONMENT)


def batches_started() -> list[BatchPopen]:
    """BatchPopen.started: the list WindowsPopen keeps, of BatchPopens while `batch` patches
    subprocess.Popen to BatchPopen."""
    return cast(list[BatchPopen], BatchPopen.started)


@pytest.fixture
def batch(windows_programs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    monkeypatch.setattr(subprocess, "Popen", BatchPopen)
    return windows_programs["setup"]


def launch_with(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> str:
    # the argument as the model's command line split it (a `"` inside one is not splittable
    # by launch's Windows rules today, but the check must not rest on that)
    monkeypatch.setattr(launch, "split_command", lambda command: argv)
    return launch.Launcher().launch("given")


@pytest.mark.parametrize(
    ("argument", "named"),
    [
        ("a&calc", "'&'"),  # cmd runs `...setup.cmd a`, then calc
        ('x" & calc & "', "'\"' '&'"),  # list2cmdline's \" does not quote for cmd
        ("%USERPROFILE%", "'%'"),  # expands, quoted or not
        ("one\ncalc", "'\\n'"),  # the line ends: the batch file gets "one, the rest is lost
    ],
)
def test_a_batch_files_argument_cmd_would_act_on_is_refused_with_the_reason(
    batch: Path, monkeypatch: pytest.MonkeyPatch, argument: str, named: str
) -> None:
    with pytest.raises(ToolError) as refused:
        launch_with(monkeypatch, ["setup", argument])

    # on old main it started: cmd ran [setup.cmd a, calc], or an expanded or cut-off line
    assert [(child.line, child.commands) for child in batches_started()] == []
    message = str(refused.value)
    assert message.startswith("refused: setup.cmd is a batch file, which Windows runs through")
    assert named in message and "cmd would act on" in message
    assert "\n" not in message  # one line, the newline shown escaped


def test_a_batch_file_with_plain_arguments_runs_exactly_that_line(
    batch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch_with(monkeypatch, ["setup", r"C:\Users\Ada\my notes.txt", "--fast"])

    (child,) = batches_started()
    assert child.commands == [child.line]  # one command, nothing expanded or cut


def test_a_program_that_is_not_a_batch_file_gets_its_arguments_as_they_are(
    batch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no cmd.exe between us and notepad.exe: `&` and `%` are plain characters to it
    launch_with(monkeypatch, ["notepad", "R&D %DATE%.txt"])

    (child,) = batches_started()
    assert child.argv[1:] == ["R&D %DATE%.txt"]
