"""The app's language: Qt's translators for the language chosen in the settings, or the system's."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtCore import QCoreApplication, QTranslator

log = logging.getLogger(__name__)

#: the `language` setting's values beside "system", with their names in their own language
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}
#: the setting's default: the language of the system's locale, English when there is no
#: translation for it
SYSTEM = "system"
#: the .qm files' base name (resources/i18n/desktop_agent_<language>.qm)
CATALOGUE = "desktop_agent"


def translations_dir() -> Path:
    """Where the .ts sources and the .qm built from them are (the package's resources)."""
    import desktop_agent.resources

    return Path(desktop_agent.resources.__file__).resolve().parent / "i18n"


def resolve(setting: str, system_locale: str) -> str:
    """The language to show: the setting's, or for "system" (or a value no translation has)
    the system locale's when there is a translation for it (zh, zh_CN, zh_Hans_CN,
    zh_SG → zh_CN), else English."""
    if setting in LANGUAGES:
        return setting
    name = system_locale.replace("-", "_")
    if name.startswith("zh") and not any(part in name for part in ("Hant", "TW", "HK", "MO")):
        return "zh_CN"
    return "en"


def language_setting(env: Mapping[str, str] = os.environ) -> str:
    """The `language` setting, read before the window is made without loading all settings
    (pydantic is not on the way to the first paint): DESKTOP_AGENT_LANGUAGE, else the
    settings file's top-level `language`, else "system". A file that does not read is the
    settings loader's to report; here it is "system"."""
    value = env.get("DESKTOP_AGENT_LANGUAGE")
    if value:
        return value
    home = env.get("DESKTOP_AGENT_HOME")
    if home:
        path = Path(home).expanduser() / "settings.toml"
    else:
        import platformdirs

        path = platformdirs.user_config_path("desktop-agent", appauthor=False) / "settings.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return SYSTEM
    # one top-level key of the file the app writes, read by a line's pattern: tomllib imports
    # datetime, which the first paint does without (the whole file is validated at the load)
    top = text.split("\n[", 1)[0]
    found = re.search(r'^language\s*=\s*["\']([A-Za-z_]+)["\']\s*(?:#.*)?$', top, re.MULTILINE)
    return found.group(1) if found else SYSTEM


def install(app: QCoreApplication, language: str) -> list[QTranslator]:
    """Install the app's translator and Qt's own (its standard buttons and dialogs) for
    `language` ("en": none); the translators, which must live as long as the app. A
    translation file that is missing is logged and English shows instead."""
    from PySide6.QtCore import QLibraryInfo, QLocale, QTranslator

    if language == "en":
        return []
    installed: list[QTranslator] = []
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    for name, directory in ((f"qtbase_{language}", qt_dir), (f"{CATALOGUE}_{language}", "")):
        translator = QTranslator(app)
        where = directory or str(translations_dir())
        if translator.load(name, where) and app.installTranslator(translator):
            installed.append(translator)
        else:
            log.warning("no translation %s in %s: English is shown", name, where)
    QLocale.setDefault(QLocale(language))
    return installed
