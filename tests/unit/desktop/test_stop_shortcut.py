"""The stop shortcut on GNOME, written by the real `gsettings` into a keyfile backend under the
test's own XDG_CONFIG_HOME (GLib's GSETTINGS_BACKEND=keyfile: the machine's dconf is untouched)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from desktop_agent.desktop.stop_shortcut import (
    CUSTOM,
    MEDIA_KEYS,
    OURS,
    ShortcutError,
    set_gnome_stop_shortcut,
)

pytestmark = pytest.mark.skipif(shutil.which("gsettings") is None, reason="no gsettings")

THEIRS = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/custom0/"


def gsettings(*args: str) -> str:
    done = subprocess.run(["gsettings", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def keyfile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GSETTINGS_BACKEND", "keyfile")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "home"))
    return tmp_path / "glib-2.0" / "settings" / "keyfile"


def test_the_stop_shortcut_is_added_beside_the_persons_own_and_set_once(keyfile: Path) -> None:
    gsettings("set", MEDIA_KEYS, "custom-keybindings", repr([THEIRS]))
    gsettings("set", f"{CUSTOM}:{THEIRS}", "command", "gnome-terminal")

    said = set_gnome_stop_shortcut("<Super>Escape", "/opt/da/desktop-agent stop-all")
    again = set_gnome_stop_shortcut("<Control><Alt>Escape", "/opt/da/desktop-agent stop-all")

    assert said == "GNOME shortcut <Super>Escape added: it runs /opt/da/desktop-agent stop-all"
    assert again.startswith("GNOME shortcut <Control><Alt>Escape updated")
    assert gsettings("get", MEDIA_KEYS, "custom-keybindings") == repr([THEIRS, OURS])
    ours = f"{CUSTOM}:{OURS}"
    assert gsettings("get", ours, "command") == "'/opt/da/desktop-agent stop-all'"
    assert gsettings("get", ours, "binding") == "'<Control><Alt>Escape'"
    assert gsettings("get", ours, "name") == "'Stop desktop-agent'"
    assert gsettings("get", f"{CUSTOM}:{THEIRS}", "command") == "'gnome-terminal'"
    assert keyfile.exists()  # written where the test said, nowhere else


def test_without_gnomes_schema_it_says_why_in_one_line(
    keyfile: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "schemas"
    empty.mkdir()
    monkeypatch.setenv("GSETTINGS_SCHEMA_DIR", str(empty))
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "nothing"))
    with pytest.raises(
        ShortcutError, match=f"^gsettings get {MEDIA_KEYS}: No schemas installed$"
    ) as raised:
        set_gnome_stop_shortcut()
    assert "\n" not in str(raised.value)


def test_doctor_offers_the_stop_shortcut(keyfile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from desktop_agent.launch import main

    assert main(["doctor", "--stop-shortcut"]) == 0
    assert capsys.readouterr().out.startswith("GNOME shortcut <Control><Alt>Escape added: it runs ")
    assert gsettings("get", f"{CUSTOM}:{OURS}", "command").endswith(" stop-all'")
