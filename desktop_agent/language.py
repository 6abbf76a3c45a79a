"""The language the app and the command line speak, and their translations read without Qt.

One source of truth: the .ts files (resources/i18n/desktop_agent_<language>.ts), built into
the .qm files shipped beside them (docs/translations.md). The window reads a .qm with Qt's
QTranslator (ui/i18n.py); the command line, which imports no Qt (its start time; machines
without a display), reads the same file with `Catalogue`, a reader of Qt's .qm format.
Only the standard library here, and little of it at import (os, sys): `stop-all`'s lean path
says its line with it (tests/cli/test_stop_all_command.py lists what it must not import).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

#: the `language` setting's values beside "system", with their names in their own language
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}
#: the setting's default: the language of the system's locale, English when there is no
#: translation for it
SYSTEM = "system"
#: the .qm files' base name (resources/i18n/desktop_agent_<language>.qm)
CATALOGUE = "desktop_agent"


def translations_dir() -> Path:
    """Where the .ts sources and the .qm built from them are (the package's resources)."""
    from pathlib import Path

    return Path(_translations_folder()).resolve()


def _translations_folder() -> str:
    import desktop_agent.resources

    return os.path.join(os.path.dirname(desktop_agent.resources.__file__), "i18n")


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
    """The `language` setting, read without loading all settings (pydantic is not on the way
    to the window's first paint, nor on the command line's way to its first line):
    DESKTOP_AGENT_LANGUAGE, else the settings file's top-level `language`, else "system". A
    file that does not read is the settings loader's to report; here it is "system"."""
    value = env.get("DESKTOP_AGENT_LANGUAGE")
    if value:
        return value
    try:
        with open(_settings_file(env), encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError):
        return SYSTEM
    import re

    # one top-level key of the file the app writes, read by a line's pattern: tomllib imports
    # datetime, which the first paint does without (the whole file is validated at the load)
    top = text.split("\n[", 1)[0]
    found = re.search(r'^language\s*=\s*["\']([A-Za-z_]+)["\']\s*(?:#.*)?$', top, re.MULTILINE)
    return found.group(1) if found else SYSTEM


def _settings_file(env: Mapping[str, str]) -> str:
    """settings.py `settings_path`: in DESKTOP_AGENT_HOME, else in platformdirs' user config
    dir of the app — on Linux computed as platformdirs computes it (`Unix.user_config_dir`:
    `$XDG_CONFIG_HOME` when absolute, else `~/.config` with an absolute `$HOME`; joined with
    the app's name), as store/data_dir.py `platform_data_dir_plainly` does for the data dir;
    elsewhere, or for a relative or missing one, asked of platformdirs."""
    home = env.get("DESKTOP_AGENT_HOME")
    if home:
        return os.path.join(os.path.expanduser(home), "settings.toml")
    base = env.get("XDG_CONFIG_HOME", "")
    if not base.startswith("/"):
        user = env.get("HOME", "")
        base = os.path.join(user, ".config") if user.startswith("/") else ""
    if sys.platform == "linux" and base and "ANDROID_DATA" not in env:
        return os.path.join(base, "desktop-agent", "settings.toml")
    import platformdirs

    return str(platformdirs.user_config_path("desktop-agent", appauthor=False) / "settings.toml")


def system_locale(env: Mapping[str, str] = os.environ) -> str:
    """The system's locale name, without Qt, as Qt's QLocale::system() names it (the window's
    language comes from that): on POSIX the first set of LC_ALL, LC_MESSAGES, LANG (man 7
    locale: the precedence for messages), and then the first entry of LANGUAGE where it says
    another language or more of the same one (LANG=en_US.UTF-8 LANGUAGE=zh_CN: zh_CN;
    LANG=zh_CN.UTF-8 LANGUAGE=zh: zh_CN), as Qt 6's QSystemLocale::fallbackLocale
    (qlocale_unix.cpp) does — tests/gui/test_translations.py compares the two. An encoding
    and a modifier are cut ("zh_CN.UTF-8" → "zh_CN"). On Windows the user's locale
    (GetUserDefaultLocaleName, which Qt reads there too). "C" when nothing says."""
    if sys.platform == "win32":
        return _windows_locale()
    lang = env.get("LC_ALL") or env.get("LC_MESSAGES") or env.get("LANG") or ""
    if lang in ("", "C", "POSIX"):
        return "C"
    known = _bare_locale(lang)
    first = _bare_locale(env.get("LANGUAGE", "").split(":", 1)[0])
    if first and known.split("_")[: len(first.split("_"))] != first.split("_"):
        return first
    return known


def _bare_locale(name: str) -> str:
    return name.split(".", 1)[0].split("@", 1)[0].replace("-", "_")


def _windows_locale() -> str:
    import ctypes

    buffer = ctypes.create_unicode_buffer(85)  # LOCALE_NAME_MAX_LENGTH
    windll = ctypes.windll  # type: ignore[attr-defined]
    if windll.kernel32.GetUserDefaultLocaleName(buffer, len(buffer)):
        return buffer.value.replace("-", "_")
    return "C"


def cli_language(env: Mapping[str, str] = os.environ) -> str:
    """The language of the command line: the one the window would show (the setting, else
    the system locale's)."""
    return resolve(language_setting(env), system_locale(env))


# ── Qt's .qm format, read without Qt ────────────────────────────────────────────────────
#
# As Qt writes it (linguist's qm.cpp) and reads it (qtbase src/corelib/kernel/qtranslator.cpp,
# Qt 5/6: `magic`, the block tags in `QTranslatorPrivate`, `do_load`, `getMessage`,
# `do_translate`, `elfHash`): 16 magic bytes, then blocks of (tag: 1 byte, length: 4 bytes
# big-endian, data). The Hashes block is a table of (hash, offset) pairs of 4 bytes each,
# sorted by hash, where the hash is the ELF hash of the message's source text and comment
# (UTF-8 bytes, at least 1); the offset points into the Messages block, where a message is a
# run of tagged fields up to Tag_End: its translation (UTF-16 big-endian), and, unless the
# file was stripped, its source text, context and comment (UTF-8) to compare with the ones
# asked for. A message without a translation (unfinished in the .ts) is not in the file.

_MAGIC = bytes.fromhex("3cb86418caef9c95cd211cbf60a1bddd")
_HASHES, _MESSAGES = 0x42, 0x69
_END, _TRANSLATION, _OBSOLETE1, _SOURCE, _CONTEXT, _COMMENT = 1, 3, 5, 6, 7, 8


def _elf_hash(data: bytes) -> int:
    """qtranslator.cpp elfHash_continue + elfHash_finish, over `data`."""
    h = 0
    for byte in data:
        h = ((h << 4) + byte) & 0xFFFFFFFF
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h or 1


class CatalogueError(ValueError):
    """The file is not a .qm file Qt would load."""


class Catalogue:
    """The translations of one .qm file, looked up as QTranslator looks them up (no plural
    forms: the command line asks for none)."""

    def __init__(self, data: bytes) -> None:
        if data[:16] != _MAGIC:
            raise CatalogueError("not a Qt translation file (.qm)")
        blocks: dict[int, memoryview] = {}
        view, at = memoryview(data), 16
        while at + 5 <= len(data):
            tag, length = data[at], int.from_bytes(data[at + 1 : at + 5], "big")
            at += 5
            if not tag or not length:
                break
            if length > len(data) - at:
                raise CatalogueError("a block runs past the end of the file")
            blocks[tag] = view[at : at + length]
            at += length
        if _HASHES not in blocks or _MESSAGES not in blocks:
            raise CatalogueError("the file has no messages")
        self._hashes = blocks[_HASHES]
        self._messages = blocks[_MESSAGES]

    @classmethod
    def load(cls, path: str | Path) -> Catalogue:
        """The catalogue of the .qm file `path` (OSError, CatalogueError)."""
        with open(path, "rb") as file:
            return cls(file.read())

    def translate(self, context: str, source: str) -> str | None:
        """The translation of `source` in `context`; None when the file has none."""
        wanted_source, wanted_context = source.encode(), context.encode()
        h = _elf_hash(wanted_source)
        hashes = self._hashes
        low, high = 0, len(hashes) // 8
        while low < high:  # the first pair whose hash is not below h
            middle = (low + high) // 2
            if int.from_bytes(hashes[middle * 8 : middle * 8 + 4], "big") < h:
                low = middle + 1
            else:
                high = middle
        for index in range(low, len(hashes) // 8):
            if int.from_bytes(hashes[index * 8 : index * 8 + 4], "big") != h:
                break
            offset = int.from_bytes(hashes[index * 8 + 4 : index * 8 + 8], "big")
            found = self._message(offset, wanted_context, wanted_source)
            if found is not None:
                return found
        return None

    def _message(self, at: int, context: bytes, source: bytes) -> str | None:
        """qtranslator.cpp getMessage: the translation of the message at `at` when its
        context and source text (where the file keeps them) are the ones asked for."""
        messages, translation = self._messages, None
        while at < len(messages):
            tag = messages[at]
            at += 1
            if tag == _END:
                break
            if tag == _OBSOLETE1:
                at += 4
                continue
            if tag not in (_TRANSLATION, _SOURCE, _CONTEXT, _COMMENT):
                return None
            length = int.from_bytes(messages[at : at + 4], "big")
            field = bytes(messages[at + 4 : at + 4 + length])
            at += 4 + length
            if tag == _TRANSLATION:
                if translation is None:  # the first form (no plurals asked for)
                    translation = field.decode("utf-16-be")
                continue
            field = field[:-1] if field.endswith(b"\0") else field
            if tag == _SOURCE and field != source:
                return None
            if tag == _CONTEXT and field != context:
                return None
            if tag == _COMMENT and field:  # a disambiguation: never asked for here
                return None
        return translation


def catalogue_for(language: str, directory: str | Path | None = None) -> Catalogue | None:
    """The app's catalogue of `language`; None for English, or when its .qm is missing or
    unreadable (English is shown, as the window does)."""
    if language == "en":
        return None
    folder = _translations_folder() if directory is None else directory
    path = os.path.join(folder, f"{CATALOGUE}_{language}.qm")
    try:
        return Catalogue.load(path)
    except (OSError, CatalogueError):
        return None


def say(catalogue: Catalogue | None, context: str, text: str, fields: Mapping[str, object]) -> str:
    """`text` of `context` in the catalogue's language (as it is without one), its `{fields}`
    filled in afterwards with `str.format_map`: a `{…}` in a field's value stays text, and a
    translation that names a field wrongly falls back to the English `text`."""
    translated = (catalogue.translate(context, text) if catalogue is not None else None) or text
    if not fields:
        return translated
    try:
        return translated.format_map(fields)
    except (KeyError, IndexError, ValueError, AttributeError):
        return text.format_map(fields)
