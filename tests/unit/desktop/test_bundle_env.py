"""A program the frozen app starts gets nothing of the bundle: neither the Qt paths and PATH
entries PyInstaller's PySide6 run-time hook set (on both systems), nor, on Windows, the DLL
directory its bootloader set (issue 37 item 1)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.errors import ToolError
from desktop_agent.desktop import launch, schedule
from tests.unit.desktop import fake_ctypes

WINDOWS_BUNDLE = r"C:\Program Files\Desktop Agent\_internal"
LINUX_BUNDLE = "/opt/desktop-agent/_internal"


def as_frozen(monkeypatch: pytest.MonkeyPatch, system: str, bundle: str) -> None:
    monkeypatch.setattr(sys, "platform", system)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", bundle, raising=False)


def hook_environment(bundle: str, system: str) -> dict[str, str]:
    """The environment after PyInstaller's hooks/rthooks/pyi_rth_pyside6.py ran: QT_PLUGIN_PATH
    and QML2_IMPORT_PATH set to the bundle's PySide6 folder (the user's value overwritten), and
    on Windows sys._MEIPASS put first on PATH."""
    if system == "win32":
        qt = bundle + r"\PySide6"
        return {
            "Path": rf"{bundle};C:\WINDOWS\system32;{bundle}\PySide6;C:\Users\ada\bin",
            "QT_PLUGIN_PATH": qt + r"\plugins",
            "QML2_IMPORT_PATH": qt + r"\qml",
            "SystemRoot": r"C:\WINDOWS",
        }
    qt = bundle + "/PySide6/Qt"
    return {
        "PATH": "/usr/bin:/bin",
        "QT_PLUGIN_PATH": qt + "/plugins",
        "QML2_IMPORT_PATH": qt + "/qml",
        "HOME": "/home/ada",
    }


@pytest.mark.parametrize(
    ("system", "bundle", "path"),
    [
        # the hook's first entry, a folder inside the bundle (any case) gone; the user's kept
        ("win32", WINDOWS_BUNDLE, r"C:\WINDOWS\system32;C:\Users\ada\bin"),
        ("linux", LINUX_BUNDLE, "/usr/bin:/bin"),
    ],
)
def test_a_program_the_frozen_app_starts_gets_no_qt_paths_and_no_path_entry_of_the_bundle(
    monkeypatch: pytest.MonkeyPatch, system: str, bundle: str, path: str
) -> None:
    as_frozen(monkeypatch, system, bundle)
    environ = hook_environment(bundle, system)
    if system == "win32":  # Windows compares paths without case
        environ["Path"] += ";" + bundle.upper() + r"\lib"

    env = launch.program_env(env=environ)

    assert "QT_PLUGIN_PATH" not in env and "QML2_IMPORT_PATH" not in env
    assert env["Path" if system == "win32" else "PATH"] == path
    assert {"SystemRoot", "HOME"} & set(env)  # everything else is passed on


def test_from_source_the_users_own_qt_paths_are_passed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "frozen", False, raising=False)
    environ = {"QT_PLUGIN_PATH": "/home/ada/qt/plugins", "PATH": "/home/ada/bin:/usr/bin"}

    assert launch.program_env(env=environ) == environ


ERROR_INVALID_PARAMETER = 87


class FakeKernel32:
    """The process's DLL directory as kernel32 keeps it (learn.microsoft.com, "SetDllDirectoryW
    function (winbase.h)" and "GetDllDirectoryW function (winbase.h)"): SetDllDirectoryW(path)
    sets it, SetDllDirectoryW(NULL) restores the default search order, both answer nonzero;
    GetDllDirectoryW(n, buffer) copies it and answers its length without the null (0 when
    none is set; the needed size when `n` is too small). PyInstaller's bootloader set it to
    sys._MEIPASS before any Python ran. `fail_set` makes SetDllDirectoryW answer 0."""

    def __init__(self, directory: str | None) -> None:
        self.directory = directory
        self.fail_set = False
        self.calls: list[tuple[str, str | None]] = []
        self.errors = fake_ctypes.ThreadErrors()

    def SetDllDirectoryW(self, path: str | None) -> int:  # noqa: N802
        self.calls.append(("SetDllDirectoryW", path))
        if self.fail_set:
            self.errors.set(ERROR_INVALID_PARAMETER)
            return 0
        self.directory = path
        return 1

    def GetDllDirectoryW(self, size: int, buffer: Any) -> int:  # noqa: N802
        value = self.directory or ""
        if len(value) + 1 > size:
            return len(value) + 1
        buffer.value = value
        return len(value)

    def GetLastError(self) -> int:  # noqa: N802
        return self.errors.get()


class Windll:
    def __init__(self, kernel32: FakeKernel32) -> None:
        self.kernel32 = kernel32


class RecordingPopen:
    """subprocess.Popen as CreateProcess starts a program: the child inherits the DLL directory
    the parent has at that moment (PyInstaller's "Launching external programs" pitfall).
    Records it; the program then ends with code 0."""

    started: list[RecordingPopen] = []
    kernel32: FakeKernel32

    def __init__(self, argv: list[str], **options: Any) -> None:
        self.argv = argv
        self.options = options
        self.inherited = self.kernel32.directory
        self.pid = 4242
        self._handle = 0
        self.returncode: int | None = None
        self.started.append(self)

    def poll(self) -> int | None:
        self.returncode = 0
        return 0

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        self.returncode = 0
        return "", ""


@pytest.fixture
def kernel32(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeKernel32:
    as_frozen(monkeypatch, "win32", WINDOWS_BUNDLE)
    fake = FakeKernel32(WINDOWS_BUNDLE)
    fake_ctypes.install(monkeypatch, Windll(fake), fake.errors)
    monkeypatch.setattr(RecordingPopen, "kernel32", fake, raising=False)
    monkeypatch.setattr(RecordingPopen, "started", [])
    monkeypatch.setattr(subprocess, "Popen", RecordingPopen)
    notepad = tmp_path / "notepad.exe"
    notepad.write_bytes(b"MZ")
    monkeypatch.setattr("desktop_agent.desktop.win32.resolve_program", lambda name: str(notepad))
    monkeypatch.setattr(launch, "EARLY_EXIT_S", 0.0)
    return fake


STARTS = {
    "launch_app": lambda: launch.Launcher().launch("notepad"),
    "schtasks": lambda: schedule.schtasks("/Query", "/TN", "x"),
}


@pytest.mark.parametrize("start", sorted(STARTS))
def test_a_program_starts_with_the_systems_dll_search_and_the_bundles_comes_back(
    kernel32: FakeKernel32, start: str
) -> None:
    STARTS[start]()

    (child,) = RecordingPopen.started
    assert child.inherited is None  # SetDllDirectoryW(NULL): the default search order
    assert kernel32.directory == WINDOWS_BUNDLE  # restored for the app's own lazy imports
    assert kernel32.calls == [("SetDllDirectoryW", None), ("SetDllDirectoryW", WINDOWS_BUNDLE)]


def test_a_dll_directory_that_cannot_be_dropped_starts_nothing(kernel32: FakeKernel32) -> None:
    kernel32.fail_set = True

    with pytest.raises(ToolError, match=r"cannot start 'notepad': SetDllDirectoryW"):
        launch.Launcher().launch("notepad")
    assert RecordingPopen.started == []


def test_two_starts_at_once_never_see_each_others_restore(
    kernel32: FakeKernel32, monkeypatch: pytest.MonkeyPatch
) -> None:
    # without the lock the second start reads "none" as the directory to restore, and the
    # bundle's directory is gone for good (or comes back while the other program starts)
    first_inside = threading.Event()
    second_tried = threading.Event()
    original = kernel32.GetDllDirectoryW

    def get(size: int, buffer: Any) -> int:
        if threading.current_thread().name == "second":
            second_tried.set()
        return original(size, buffer)

    kernel32.GetDllDirectoryW = get  # type: ignore[method-assign]
    created = RecordingPopen.__init__

    read_meanwhile: list[bool] = []

    def slow_start(self: RecordingPopen, argv: list[str], **options: Any) -> None:
        created(self, argv, **options)
        if threading.current_thread().name == "first":
            first_inside.set()
            # the second start waits for the lock: it does not read the directory meanwhile
            read_meanwhile.append(second_tried.wait(0.2))

    monkeypatch.setattr(RecordingPopen, "__init__", slow_start)
    first = threading.Thread(target=STARTS["launch_app"], name="first")
    first.start()
    assert first_inside.wait(5)
    second = threading.Thread(target=STARTS["launch_app"], name="second")
    second.start()
    first.join(5)
    second.join(5)

    assert read_meanwhile == [False]
    assert [child.inherited for child in RecordingPopen.started] == [None, None]
    assert kernel32.directory == WINDOWS_BUNDLE
