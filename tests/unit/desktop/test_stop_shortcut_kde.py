"""The stop shortcut on KDE Plasma 6 (issue 34 item 3), written under the test's own HOME: the
command shortcut's desktop entry in XDG_DATA_HOME/kglobalaccel and its keys in
XDG_CONFIG_HOME/kglobalshortcutsrc, where kglobalacceld reads them at its start
(KDE/kglobalacceld src/globalshortcutsregistry.cpp `loadSettings`; docs/wayland.md)."""

from __future__ import annotations

import configparser
from pathlib import Path

import pytest

from desktop_agent.desktop.stop_shortcut import (
    KDE_ENTRY,
    ShortcutError,
    qt_keys,
    set_kde_stop_shortcut,
)

#: a person's kglobalshortcutsrc as Plasma 6 writes it: components, services, a comment
THEIRS = """[$Version]
update_info=kglobalaccel.upd:remove-kglobalaccel-state

[kwin]
Window Close=Alt+F4,Alt+F4,Close Window
Overview=Meta+W,Meta+W,Toggle Overview

[services][org.kde.konsole.desktop]
_launch=Ctrl+Alt+T

[services][org.kde.spectacle.desktop]
RectangularRegionScreenShot=Meta+Shift+S
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own, with XDG_CONFIG_HOME and XDG_DATA_HOME unset (their
    defaults under HOME), so nothing of the machine's user is written."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path / "agent"))
    return tmp_path


def key_file(path: Path) -> configparser.ConfigParser:
    """A desktop entry or KConfig file read as a key file (no interpolation, keys as given)."""
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(path.read_text(encoding="utf-8"))
    return parser


def test_the_kde_shortcut_is_a_command_entry_with_its_keys_beside_the_persons_own(
    home: Path,
) -> None:
    config = home / ".config" / "kglobalshortcutsrc"
    config.parent.mkdir(parents=True)
    config.write_text(THEIRS, encoding="utf-8")
    argv = ["/opt/da 1/desktop-agent", "stop-all"]

    said = set_kde_stop_shortcut("<Super>Escape", argv)
    again = set_kde_stop_shortcut("<Control><Alt>Escape", argv)

    assert said.startswith(
        "KDE shortcut Meta+Esc added: it runs '/opt/da 1/desktop-agent' stop-all (Plasma"
    )
    assert again.startswith("KDE shortcut Ctrl+Alt+Esc updated")
    text = config.read_text(encoding="utf-8")
    assert text.startswith(THEIRS)  # every line of the person's own kept as it was
    assert text[len(THEIRS) :] == f"\n[services][{KDE_ENTRY}]\n_launch=Ctrl+Alt+Esc\n"
    assert key_file(config)[f"services][{KDE_ENTRY}"]["_launch"] == "Ctrl+Alt+Esc"
    entry = key_file(home / ".local" / "share" / "kglobalaccel" / KDE_ENTRY)["Desktop Entry"]
    assert dict(entry) == {
        "Type": "Application",
        "Name": "Stop desktop-agent",
        "Exec": '"/opt/da 1/desktop-agent" stop-all',
        "X-KDE-Shortcuts": "Ctrl+Alt+Esc",
        "X-KDE-GlobalAccel-CommandShortcut": "true",
        "StartupNotify": "false",
    }  # no NoDisplay: kglobalacceld skips such an entry of its folder


def test_an_update_keeps_the_groups_after_ours(home: Path) -> None:
    config = home / ".config" / "kglobalshortcutsrc"
    config.parent.mkdir(parents=True)
    config.write_text(
        f"[services][{KDE_ENTRY}]\n_launch=Meta+Esc\n\n[kwin]\nOverview=Meta+W,Meta+W,Overview\n",
        encoding="utf-8",
    )

    set_kde_stop_shortcut("Ctrl+Alt+Esc", ["desktop-agent", "stop-all"])

    assert config.read_text(encoding="utf-8") == (
        f"[services][{KDE_ENTRY}]\n_launch=Ctrl+Alt+Esc\n\n[kwin]\nOverview=Meta+W,Meta+W,Overview\n"
    )


def test_xdg_folders_are_where_it_writes(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }

    set_kde_stop_shortcut("Ctrl+Alt+Esc", ["desktop-agent", "stop-all"], env)

    assert (tmp_path / "config" / "kglobalshortcutsrc").exists()
    assert (tmp_path / "data" / "kglobalaccel" / KDE_ENTRY).exists()
    assert not (tmp_path / "home").exists()


def test_an_exec_argument_is_quoted_as_the_desktop_entry_spec_says(home: Path) -> None:
    set_kde_stop_shortcut("Ctrl+Alt+Esc", ['/opt/50% "off"/$x\\y', "stop-all"])

    raw = (home / ".local" / "share" / "kglobalaccel" / KDE_ENTRY).read_text(encoding="utf-8")
    # quoted, with " $ \\ escaped by a backslash and % doubled; then the key file's own escape
    # of each backslash
    assert '\nExec="/opt/50%% \\\\"off\\\\"/\\\\$x\\\\\\\\y" stop-all\n' in raw


@pytest.mark.parametrize(
    ("binding", "keys"),
    [
        ("<Control><Alt>Escape", "Ctrl+Alt+Esc"),
        ("<Primary><Shift>s", "Ctrl+Shift+S"),
        ("<Super>Page_Down", "Meta+PgDown"),
        ("<Alt>F4", "Alt+F4"),
        ("Ctrl+Alt+Esc", "Ctrl+Alt+Esc"),
    ],
)
def test_gtk_accelerators_become_qts_key_words(binding: str, keys: str) -> None:
    assert qt_keys(binding) == keys


@pytest.mark.parametrize("binding", ["<Hyperdrive>x", "<Control><Alt>"])
def test_a_binding_kde_cannot_take_says_why_in_one_line(binding: str) -> None:
    with pytest.raises(ShortcutError) as raised:
        qt_keys(binding)
    assert "\n" not in str(raised.value)


def test_doctor_on_kde_writes_kdes_shortcut_not_gnomes(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from desktop_agent.launch import main

    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "KDE")
    monkeypatch.setenv("GSETTINGS_BACKEND", "keyfile")  # were GNOME's written, it would be here

    assert main(["doctor", "--stop-shortcut"]) == 0

    assert capsys.readouterr().out.startswith("KDE shortcut Ctrl+Alt+Esc added: it runs ")
    entry = key_file(home / ".local" / "share" / "kglobalaccel" / KDE_ENTRY)["Desktop Entry"]
    assert entry["Exec"].endswith(" stop-all")
    assert not (home / ".config" / "glib-2.0").exists()


def test_a_file_that_cannot_be_written_is_one_line(home: Path) -> None:
    (home / ".config").write_text("not a folder", encoding="utf-8")

    with pytest.raises(ShortcutError) as raised:
        set_kde_stop_shortcut("Ctrl+Alt+Esc", ["desktop-agent", "stop-all"])

    assert "\n" not in str(raised.value) and ".config" in str(raised.value)
