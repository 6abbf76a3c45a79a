"""Windows helpers on fakes of ctypes.windll and winreg: DPI awareness, program lookup."""

from __future__ import annotations

import ctypes
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.desktop import win32


class Api:
    """A DLL whose functions answer from a table and record their calls."""

    def __init__(self, answers: dict[str, Any], calls: list[str]) -> None:
        self._answers = answers
        self._calls = calls

    def __getattr__(self, name: str) -> Any:
        if name not in self._answers:
            raise AttributeError(name)

        def call(*args: Any) -> Any:
            self._calls.append(name)
            return self._answers[name]

        return call


@pytest.fixture
def windll(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    def install(user32: dict[str, Any], shcore: dict[str, Any]) -> list[str]:
        calls: list[str] = []
        fake = types.SimpleNamespace(user32=Api(user32, calls), shcore=Api(shcore, calls))
        monkeypatch.setattr(ctypes, "windll", fake, raising=False)
        return calls

    monkeypatch.setattr(sys, "platform", "win32")
    win32.enable_dpi_awareness.cache_clear()
    yield install
    win32.enable_dpi_awareness.cache_clear()


def test_per_monitor_v2_awareness_is_asked_for_first(windll: Any) -> None:
    calls = windll({"SetProcessDpiAwarenessContext": 1}, {"SetProcessDpiAwareness": 0})

    assert win32.enable_dpi_awareness() == "per-monitor v2"
    assert win32.enable_dpi_awareness() == "per-monitor v2"  # once per process
    assert calls == ["SetProcessDpiAwarenessContext"]


def test_older_windows_falls_back_to_per_monitor_awareness(windll: Any) -> None:
    calls = windll({}, {"SetProcessDpiAwareness": 0})

    assert win32.enable_dpi_awareness() == "per-monitor"
    assert calls == ["SetProcessDpiAwareness"]


def test_awareness_set_before_by_someone_else_is_kept(windll: Any) -> None:
    windll(
        {"SetProcessDpiAwarenessContext": 0, "SetProcessDPIAware": 0},
        {"SetProcessDpiAwareness": -2147024891},  # E_ACCESSDENIED
    )

    assert win32.enable_dpi_awareness() == "set before"


def test_program_names_resolve_through_app_paths(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    wordpad = tmp_path / "wordpad.exe"
    wordpad.write_text("")
    keys = {r"SOFTWARE\Microsoft\Windows\CurrentVersion\App Paths\wordpad.exe": f'"{wordpad}"'}

    class Key:
        def __init__(self, path: str) -> None:
            self.path = path

        def __enter__(self) -> Key:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    def open_key(hive: int, path: str) -> Key:
        if path not in keys:
            raise OSError(2, "not found")
        return Key(path)

    winreg = types.SimpleNamespace(
        HKEY_CURRENT_USER=1,
        HKEY_LOCAL_MACHINE=2,
        OpenKey=open_key,
        QueryValueEx=lambda key, name: (keys[key.path], 1),
    )
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "winreg", winreg)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))

    assert win32.resolve_program("wordpad") == str(wordpad)
    assert win32.resolve_program("paint-not-installed") is None


def test_program_names_on_path_win_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    system32 = tmp_path / "system32"
    system32.mkdir()
    (system32 / "notepad.EXE").write_bytes(b"MZ")
    monkeypatch.setenv("PATH", str(system32))
    monkeypatch.setenv("PATHEXT", os.pathsep.join([".COM", ".EXE", ".BAT", ".CMD"]))

    assert win32.resolve_program("notepad") == str(system32 / "notepad.EXE")


def test_a_program_planted_in_the_current_directory_is_never_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # issue 37 item 9: shutil.which on Windows (3.11) searches the current directory first,
    # whatever PATH says (Lib/shutil.py: "The current directory takes precedence on Windows")
    system32, work = tmp_path / "system32", tmp_path / "work"
    system32.mkdir()
    work.mkdir()
    (system32 / "notepad.exe").write_bytes(b"MZ")
    planted = work / "notepad.bat"
    planted.write_text("@calc\n")
    for path in (system32 / "notepad.exe", planted):
        path.chmod(0o755)  # shutil.which's access check, on this OS
    monkeypatch.chdir(work)
    monkeypatch.setattr(sys, "platform", "win32")  # which's Windows branch
    # lower case: this file system, unlike Windows', tells .EXE from .exe; os.pathsep (";"
    # on Windows) between them, as shutil.which splits it
    monkeypatch.setenv("PATHEXT", os.pathsep.join([".com", ".exe", ".bat", ".cmd"]))
    monkeypatch.setenv("PATH", f"{system32}{os.pathsep}.")

    assert win32.resolve_program("notepad") == str(system32 / "notepad.exe")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setitem(sys.modules, "winreg", types.SimpleNamespace(
        HKEY_CURRENT_USER=1, HKEY_LOCAL_MACHINE=2,
        OpenKey=lambda hive, key: (_ for _ in ()).throw(OSError(2, "not found")),
    ))  # fmt: skip
    assert win32.resolve_program("notepad") is None
