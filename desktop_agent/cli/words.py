"""The command line's words in the person's language, without Qt.

Every user-facing text of the command line is written here in English, as the first
argument of `tr()` (or marked with `N_()` where it is chosen before it is shown), and
translated from the app's .qm catalogue (`desktop_agent/language.py`) under the context
"CLI"; `python scripts/translations.py update` collects them into the .ts files, from which
the .qm are built (docs/translations.md). The call sentences (core/sentences.py) are
translated under their own context, "Sentence", as the window translates them; argparse's
own words ("usage:", its errors) under "argparse", through argparse's gettext hook.

The language is the process's: `speaking(language)` sets it for the length of one command
line (`cli.main`); outside it the command line speaks English.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from desktop_agent.language import Catalogue, catalogue_for, say

if TYPE_CHECKING:
    from desktop_agent.core.models import MonitorArea
    from desktop_agent.core.sentences import Phrase

#: the translation context of the command line's own texts (the .ts files' <context>)
CONTEXT = "CLI"
#: the context of argparse's texts, the msgids of its gettext calls
ARGPARSE = "argparse"
#: a %-placeholder of argparse's texts (%s, %r, %(name)s)
_PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[a-z%]")


class _Speaking:
    """The language the command line speaks and its catalogue (None: English)."""

    language: str = "en"
    catalogue: Catalogue | None = None


def spoken() -> str:
    """The language the command line speaks ("en" outside `speaking`)."""
    return _Speaking.language


def tr(text: str, /, **fields: Any) -> str:
    """`text` in the command line's language, its `{fields}` filled in afterwards (text from
    outside in a field is never read as a template)."""
    return say(_Speaking.catalogue, CONTEXT, text, fields)


def translator(context: str) -> Callable[[str], str]:
    """The translation of the texts of another `context` (e.g. core/model_servers.py's), for
    a function that translates its own templates."""
    catalogue = _Speaking.catalogue
    if catalogue is None:
        return lambda text: text
    return lambda text: catalogue.translate(context, text) or text


def N_(text: str) -> str:  # noqa: N802 (gettext's name for it)
    """`text`, marked for translation: a text chosen here and shown through `tr(text)`."""
    return text


def sentence(phrase: Phrase) -> str:
    """A call's sentence (core/sentences.py) in the command line's language: each template
    translated, the outside text filled in as it is."""
    from desktop_agent.core.sentences import CONTEXT as SENTENCE

    catalogue = _Speaking.catalogue
    if catalogue is None:
        return phrase.render()
    return phrase.render(lambda template: catalogue.translate(SENTENCE, template) or template)


def monitor_words(monitor: MonitorArea) -> str:
    """core/models.py `MonitorArea.describe` in the command line's language: "monitor 2,
    1280x1024 at 0,0" (the primary says so)."""
    fields = {
        "number": monitor.number,
        "width": monitor.width,
        "height": monitor.height,
        "left": monitor.left,
        "top": monitor.top,
    }
    if monitor.primary:
        return tr("monitor {number} (the primary), {width}x{height} at {left},{top}", **fields)
    return tr("monitor {number}, {width}x{height} at {left},{top}", **fields)


@contextlib.contextmanager
def speaking(language: str) -> Iterator[None]:
    """Within the block the command line speaks `language` (English when it has no
    catalogue): its own texts, the sentences, and argparse's words — argparse asks
    `argparse._` and `argparse.ngettext` (its gettext functions, CPython 3.11
    Lib/argparse.py:94 `from gettext import gettext as _, ngettext`) for each of them, so
    they answer from the catalogue for the block's length."""
    before = _Speaking.language, _Speaking.catalogue
    catalogue = catalogue_for(language)
    _Speaking.language, _Speaking.catalogue = (language if catalogue else "en"), catalogue
    try:
        if catalogue is None:
            yield
        else:
            with _argparse_speaking(catalogue):
                yield
    finally:
        _Speaking.language, _Speaking.catalogue = before


@contextlib.contextmanager
def _argparse_speaking(catalogue: Catalogue) -> Iterator[None]:
    import argparse

    def gettext(message: str) -> str:
        translated = catalogue.translate(ARGPARSE, message)
        # argparse fills them in with %: a translation that lost or added one is not used
        if translated is None or _PLACEHOLDER.findall(translated) != _PLACEHOLDER.findall(message):
            return message
        return translated

    def ngettext(singular: str, plural: str, n: int) -> str:
        return gettext(singular if n == 1 else plural)

    module: Any = argparse
    saved = module._, module.ngettext
    module._, module.ngettext = gettext, ngettext
    try:
        yield
    finally:
        module._, module.ngettext = saved
