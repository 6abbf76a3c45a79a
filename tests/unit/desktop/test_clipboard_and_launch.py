"""Clipboard request counting, the missing-xclip error, and command splitting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from desktop_agent.core.errors import ToolError
from desktop_agent.desktop import launch
from desktop_agent.desktop.clipboard import XclipPaster, _StderrLines


def test_requests_served_are_counted_from_xclips_verbose_lines() -> None:
    lines = [
        "Waiting for selection requests, Control-C to quit",
        "  Waiting for selection request number 1",
        "  Waiting for selection request number 2",
        "  Waiting for selection request number 3",
    ]
    script = "import sys\nfor line in sys.argv[1:]: print(line, file=sys.stderr, flush=True)"
    child = subprocess.Popen([sys.executable, "-c", script, *lines], stderr=subprocess.PIPE)
    try:
        reader = _StderrLines(child)
        assert reader.read_until(lambda seen: len(seen) == 4, timeout=10)
    finally:
        child.wait()
        assert child.stderr is not None
        child.stderr.close()

    assert reader.served() == 2


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
        assert summary == r"started notepad C:\Users\Ada\notes.txt (pid 4242)"
    assert started == [(r"C:\Windows\system32\notepad.exe", ["notepad", r"C:\Users\Ada\notes.txt"])]
    assert child.returncode == 0  # let go of, so Popen does not warn about it
    with pytest.raises(ToolError, match="program not found: 'wordpad'"):
        launch.Launcher().launch("wordpad")
