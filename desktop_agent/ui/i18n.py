"""The app's language: Qt's translators for the language chosen in the settings, or the system's."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

# Qt-free, shared with the command line (language.py reads the same .qm without Qt)
from desktop_agent.language import (
    CATALOGUE,
    LANGUAGES,
    SYSTEM,
    language_setting,
    resolve,
    translations_dir,
)

if TYPE_CHECKING:
    from PySide6.QtCore import QCoreApplication, QTranslator

__all__ = [
    "CATALOGUE",
    "LANGUAGES",
    "SYSTEM",
    "install",
    "language_setting",
    "resolve",
    "translations_dir",
]

log = logging.getLogger(__name__)


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
