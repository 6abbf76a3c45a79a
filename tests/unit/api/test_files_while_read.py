"""The token and instance files are replaced and removed while other processes read them: on
Windows a reader holds such a rename or removal off for a moment (tests/support/windows_files)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop_agent.instances.registry import (
    TOKEN_FILE,
    ensure_token,
    live_instances,
    read_token,
    register_instance,
    unregister_instance,
)
from desktop_agent.settings import Settings, load_settings, save_settings
from tests.support.windows_files import WindowsSharing


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> WindowsSharing:
    return WindowsSharing(monkeypatch)


def test_an_unusable_token_is_replaced_while_another_process_reads_it(
    windows: WindowsSharing, tmp_path: Path
) -> None:
    (tmp_path / TOKEN_FILE).write_text("short\n")
    windows.reader(tmp_path / TOKEN_FILE, reads=3)

    token = ensure_token(tmp_path)

    assert read_token(tmp_path) == token
    assert [what for what, _ in windows.refused] == ["replace"] * 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["api-token", "api-token.lock"]


def test_an_instance_registers_and_unregisters_while_a_lister_reads_its_file(
    windows: WindowsSharing, tmp_path: Path
) -> None:
    path = register_instance(tmp_path, 4321)
    windows.reader(path, reads=2)

    again = register_instance(tmp_path, 4322)  # the port changed: the file is rewritten
    assert json.loads(again.read_text())["port"] == 4322

    windows.reader(path, reads=2)
    unregister_instance(path, 4322)

    assert not path.exists()
    assert [what for what, _ in windows.refused] == ["replace"] * 2 + ["unlink"] * 2


def test_a_stale_instance_file_is_removed_while_another_lister_reads_it(
    windows: WindowsSharing, tmp_path: Path
) -> None:
    path = register_instance(tmp_path, 4321)
    body = json.loads(path.read_text())
    path.write_text(json.dumps({**body, "process_started": "1"}))  # a reused pid
    windows.reader(path, reads=2)

    assert live_instances(tmp_path) == []
    assert not path.exists()


def test_the_settings_are_saved_while_another_instance_reads_them(
    windows: WindowsSharing, tmp_path: Path
) -> None:
    file = save_settings(Settings(), tmp_path / "settings.toml")
    windows.reader(file, reads=2)

    save_settings(Settings(max_steps=7), file)

    assert load_settings(file).max_steps == 7


def test_a_refusal_that_is_not_a_reader_is_raised_at_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        calls.append(args)
        raise PermissionError(13, "Permission denied")  # POSIX: no winerror

    monkeypatch.setattr(os, "replace", refuse)
    (tmp_path / TOKEN_FILE).write_text("short\n")

    with pytest.raises(Exception, match="cannot write the API token"):
        ensure_token(tmp_path)
    assert len(calls) == 1


def test_a_path_given_as_bytes_is_held_off_as_a_str_one(
    windows: WindowsSharing, tmp_path: Path
) -> None:
    # os.replace and os.unlink take bytes paths as well; the stand-in read such a path as
    # str(b"...") and let the removal through
    held = tmp_path / "held"
    held.write_text("read\n")
    windows.reader(held, reads=1)

    with pytest.raises(PermissionError):
        os.unlink(os.fsencode(held))

    assert held.exists()
    assert windows.refused == [("unlink", held)]
