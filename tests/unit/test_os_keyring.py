"""The keyring backend that keeps the API key: keyring's choice, among this platform's backends."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail

from desktop_agent import os_keyring
from desktop_agent.os_keyring import choose_backend, platform_backends
from tests.support.keyrings import MemoryKeyring, memory_keyring

ROOT = Path(__file__).resolve().parents[2]


class Low:
    """What choose_backend asks of a backend class (keyring/backend.py KeyringBackend: `viable`,
    `priority`); not a KeyringBackend, whose subclasses join keyring's own discovery."""

    viable = True
    priority = 1


class High(Low):
    priority = 4.9  # type: ignore[assignment]


class Absent(Low):
    """As keyring's backends that cannot work here: their priority raises, so not viable."""

    viable = False


@pytest.fixture
def nothing_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No backend named by PYTHON_KEYRING_BACKEND or a keyringrc.cfg."""
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    yield


def test_each_platform_gets_keyrings_own_backends_for_it() -> None:
    assert platform_backends("darwin") == ("keyring.backends.macOS:Keyring",)
    assert platform_backends("win32") == ("keyring.backends.Windows:WinVaultKeyring",)
    linux = platform_backends("linux")
    assert "keyring.backends.SecretService:Keyring" in linux
    assert not any("macOS" in where or "Windows" in where for where in linux)


def test_the_viable_backend_of_highest_priority_is_chosen(
    nothing_named: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = __name__
    monkeypatch.setattr(
        os_keyring,
        "platform_backends",
        lambda platform: (f"{here}:Low", f"{here}:Absent", f"{here}:High", "no.such.module:X"),
    )
    # High stands in for a KeyringBackend class on purpose (Low's docstring)
    assert type(choose_backend()) is High  # type: ignore[comparison-overlap]


def test_without_a_viable_backend_every_call_says_no_keyring(
    nothing_named: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os_keyring, "platform_backends", lambda platform: (f"{__name__}:Absent",))
    assert type(choose_backend()) is fail.Keyring


def test_the_backend_python_keyring_backend_names_is_used(
    nothing_named: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.support.keyrings.MemoryKeyring")
    assert type(choose_backend()) is MemoryKeyring


def test_a_backend_set_in_the_process_is_the_one_used() -> None:
    with memory_keyring() as backend:
        assert os_keyring.os_keyring() is backend
        assert keyring.get_keyring() is backend


def test_reading_the_api_key_on_linux_loads_no_macos_or_windows_backend_and_runs_no_program(
    tmp_path: Path,
) -> None:
    """keyring's own discovery imported its macOS backend, which looks its frameworks up with
    ctypes' find_library: `ldconfig -p` and gcc, three times (~0.9 s of wall under strace), on
    the way to the app's first model check. The key is read as before: none here."""
    script = (
        "import sys\n"
        "spawned = []\n"
        "sys.addaudithook(lambda event, args: event in ('subprocess.Popen', 'os.posix_spawn',"
        " 'os.exec', 'os.system') and spawned.append(event))\n"
        "from desktop_agent.settings import Settings, stored_api_key\n"
        "key = stored_api_key(Settings())\n"
        "foreign = sorted(m for m in sys.modules"
        " if m.startswith(('keyring.backends.macOS', 'keyring.backends.Windows')))\n"
        "print(key, foreign, spawned)\n"
    )
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("PYTHON_KEYRING_BACKEND", "DBUS_SESSION_BUS_ADDRESS")
    }
    env |= {"XDG_CONFIG_HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split("\n")[0] == "None [] []", done.stdout + done.stderr
