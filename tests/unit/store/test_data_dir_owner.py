"""A data dir or settings file another user owns or may write is refused (store/data_dir.py:
ForeignDataDir, a PermissionError)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from desktop_agent.cli import EXIT_REFUSED
from desktop_agent.core.errors import ConfigError
from desktop_agent.launch import main
from desktop_agent.settings import load_settings
from desktop_agent.store.data_dir import make_data_dir

posix = pytest.mark.skipif(sys.platform == "win32", reason="Windows folders are guarded by ACLs")
as_root = pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() != 0, reason="chown to another uid needs root"
)
NOBODY = 65534
PLANTED = 'model = "theirs"\n'


def someone_elses(folder: Path) -> Path:
    """`folder` made 0755 with a settings.toml (0644) in it, both owned by nobody."""
    folder.mkdir()
    (folder / "settings.toml").write_text(PLANTED)
    os.chmod(folder / "settings.toml", 0o644)
    os.chmod(folder, 0o755)
    os.chown(folder / "settings.toml", NOBODY, NOBODY)
    os.chown(folder, NOBODY, NOBODY)
    return folder


@as_root
def test_a_data_dir_of_another_uid_is_refused_and_left_untouched(tmp_path: Path) -> None:
    theirs = someone_elses(tmp_path / "shared")
    with pytest.raises(PermissionError, match=r"belongs to uid 65534 .*not to uid 0"):
        make_data_dir(theirs)
    # nothing was made private on their behalf (root could have chmod'ed their files)
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o755
    assert stat.S_IMODE((theirs / "settings.toml").stat().st_mode) == 0o644
    assert not (theirs / ".private").exists()


@as_root
def test_the_cli_on_another_users_data_dir_exits_3_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = someone_elses(tmp_path / "shared")
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(theirs))
    assert main(["runs"]) == EXIT_REFUSED
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"desktop-agent: data dir {theirs} belongs to uid 65534")


@as_root
def test_the_app_on_another_users_data_dir_refuses_to_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from desktop_agent.app import run_app

    theirs = someone_elses(tmp_path / "shared")
    assert run_app([], data_dir=theirs) == 3
    assert "belongs to uid 65534" in capsys.readouterr().err


@as_root
def test_settings_in_another_users_home_are_not_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DESKTOP_AGENT_HOME names the settings file even when --data-dir names the data dir."""
    theirs = someone_elses(tmp_path / "shared")
    with pytest.raises(ConfigError, match="settings folder .* belongs to uid 65534"):
        load_settings(env={"DESKTOP_AGENT_HOME": str(theirs)})
    # their file in a folder of ours: still theirs
    ours = tmp_path / "ours"
    ours.mkdir(mode=0o700)
    (ours / "settings.toml").write_text(PLANTED)
    os.chown(ours / "settings.toml", NOBODY, NOBODY)
    with pytest.raises(ConfigError, match="settings file .* belongs to uid 65534"):
        load_settings(env={"DESKTOP_AGENT_HOME": str(ours)})


@posix
def test_a_data_dir_of_our_own_keeps_working(tmp_path: Path) -> None:
    """Root (or whoever runs the tests) on its own folder: made, tightened, settings read."""
    fresh = make_data_dir(tmp_path / "new")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700
    old = tmp_path / "old"
    old.mkdir()
    os.chmod(old, 0o777)  # an install of ours from before it was made private
    (old / "settings.toml").write_text(PLANTED)
    assert stat.S_IMODE(make_data_dir(old).stat().st_mode) == 0o700
    assert load_settings(env={"DESKTOP_AGENT_HOME": str(old)}).model == "theirs"


@posix
def test_a_data_dir_everyone_may_write_is_refused(tmp_path: Path) -> None:
    """A sticky shared folder (as /tmp) is not made private, so it is refused."""
    shared = tmp_path / "drop"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    with pytest.raises(PermissionError, match=r"can be written by others \(mode 1777\)"):
        make_data_dir(shared)


@posix
def test_settings_in_a_folder_others_may_write_are_refused(tmp_path: Path) -> None:
    shared = tmp_path / "drop"
    shared.mkdir()
    (shared / "settings.toml").write_text(PLANTED)
    os.chmod(shared, 0o770)
    with pytest.raises(ConfigError, match=r"settings folder .* can be written by others"):
        load_settings(env={"DESKTOP_AGENT_HOME": str(shared)})
    os.chmod(shared, 0o700)
    os.chmod(shared / "settings.toml", 0o666)
    with pytest.raises(ConfigError, match=r"settings file .* can be written by others"):
        load_settings(env={"DESKTOP_AGENT_HOME": str(shared)})
