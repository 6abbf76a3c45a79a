"""language.py: the language chosen as the window chooses it, and the .qm read without Qt as
QTranslator reads it (the .ts is the one source; the .qm is built from it)."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import platformdirs
import pytest

from desktop_agent.language import (
    Catalogue,
    CatalogueError,
    _settings_file,
    catalogue_for,
    cli_language,
    system_locale,
    translations_dir,
)

TS = Path(__file__).resolve().parents[2] / "resources" / "i18n" / "desktop_agent_zh_CN.ts"


def test_the_reader_says_what_the_ts_says_for_every_message() -> None:
    # the .qm is checked against its .ts with Qt's own QTranslator
    # (tests/gui/test_translations.py test_the_committed_qm_says_what_its_ts_says)
    catalogue = catalogue_for("zh_CN")
    assert catalogue is not None
    count = 0
    for context in ET.parse(TS).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            translation = message.find("translation")
            assert translation is not None
            wanted = None if translation.get("type") else translation.text or ""
            assert catalogue.translate(name, message.findtext("source") or "") == wanted
            count += 1
    assert count > 500
    # the same text in another context, or a text it does not have: none
    assert catalogue.translate("CLI", "Allowed") is None
    assert catalogue.translate("ActingPanel", "Allowed, or not") is None


def test_english_has_no_catalogue_and_a_missing_or_broken_file_none(tmp_path: Path) -> None:
    assert catalogue_for("en") is None
    assert catalogue_for("zh_CN", tmp_path) is None
    (tmp_path / "desktop_agent_zh_CN.qm").write_bytes(b"not a qm file at all")
    assert catalogue_for("zh_CN", tmp_path) is None
    qm = (translations_dir() / "desktop_agent_zh_CN.qm").read_bytes()
    with pytest.raises(CatalogueError):
        Catalogue(qm[:40])  # a block that runs past the end


def test_the_system_locale_is_the_one_for_messages() -> None:
    if sys.platform == "win32":
        pytest.skip("the user's locale is asked of Windows there")
    assert system_locale({"LANG": "zh_CN.UTF-8"}) == "zh_CN"
    assert system_locale({"LC_MESSAGES": "de_DE.UTF-8", "LANG": "zh_CN.UTF-8"}) == "de_DE"
    assert system_locale({"LC_ALL": "zh_TW.UTF-8@x", "LC_MESSAGES": "en_US"}) == "zh_TW"
    assert system_locale({}) == "C"
    # LANGUAGE's first entry where it says another language, or more of the same one
    assert system_locale({"LANG": "en_US.UTF-8", "LANGUAGE": "zh_CN:en"}) == "zh_CN"
    assert system_locale({"LANG": "zh_CN.UTF-8", "LANGUAGE": "zh"}) == "zh_CN"
    assert system_locale({"LANG": "zh.UTF-8", "LANGUAGE": "zh_TW"}) == "zh_TW"
    assert system_locale({"LANG": "C", "LANGUAGE": "zh_CN"}) == "C"


def test_the_command_lines_language_follows_the_setting_else_the_locale(tmp_path: Path) -> None:
    home = {"DESKTOP_AGENT_HOME": str(tmp_path)}
    assert cli_language({**home, "LANG": "zh_CN.UTF-8"}) == "zh_CN"
    assert cli_language({**home, "LANG": "zh_TW.UTF-8"}) == "en"
    (tmp_path / "settings.toml").write_text('language = "en"\n', encoding="utf-8")
    assert cli_language({**home, "LANG": "zh_CN.UTF-8"}) == "en"
    assert cli_language({**home, "DESKTOP_AGENT_LANGUAGE": "zh_CN"}) == "zh_CN"


@pytest.mark.skipif(sys.platform != "linux", reason="computed without platformdirs on Linux")
@pytest.mark.parametrize(
    "env",
    [
        {"HOME": "/home/ana"},
        {"HOME": "/home/ana", "XDG_CONFIG_HOME": "/tmp/config"},
        {"HOME": "/home/ana", "XDG_CONFIG_HOME": "relative/config"},
    ],
)
def test_the_settings_file_is_where_platformdirs_puts_it(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    expected = platformdirs.user_config_path("desktop-agent", appauthor=False) / "settings.toml"
    assert _settings_file(env) == str(expected)
