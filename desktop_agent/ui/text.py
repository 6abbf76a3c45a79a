"""How the app shows text: one line for an error or a long text; text from outside (a goal,
a routine, a model or server name, an error, a window title) as text, never as markup, through
`plain_label` and `plain_tooltip` (no Qt imported here: the app's root imports this module)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop_agent.core.text import one_line, printable

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel, QWidget

    from desktop_agent.core.sentences import Phrase

__all__ = [
    "in_words",
    "one_line",
    "plain_button_text",
    "plain_label",
    "plain_tooltip",
    "shorten",
]


def in_words(phrase: Phrase) -> str:
    """A call's sentence (core/sentences.py) in the app's language: each template through
    Qt's translators, the outside text filled in as it is. Plain text, never markup."""
    from PySide6.QtCore import QCoreApplication

    from desktop_agent.core.sentences import CONTEXT

    return phrase.render(lambda template: QCoreApplication.translate(CONTEXT, template))


def plain_button_text(text: str) -> str:
    """`text` for a button, check box or menu item, shown as it is: Qt takes `&` there for
    the mark of a shortcut key (hidden, the next letter underlined), `&&` for an `&`."""
    return text.replace("&", "&&")


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A QLabel that shows whatever it is given as text: Qt's default (AutoText) takes text
    that starts like HTML for rich text and loads its `<img src>` on the GUI thread (a FIFO
    there blocks it for good)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel

    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    return label


def shorten(text: str, width: int) -> str:
    """`text` in one line of at most `width` characters, an ellipsis marking a cut; control
    and bidi characters escaped."""
    flat = " ".join(printable(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def plain_tooltip(text: str | None) -> str | None:
    """`text` as a tooltip that shows it literally, control and bidi characters escaped.

    Qt takes a tooltip that starts like HTML for rich text; text with a `<` in it is
    therefore escaped inside an explicit rich-text block (newlines kept as line breaks).
    Text without one cannot be taken for markup and stays as it is."""
    if not text:
        return None
    shown = printable(text, keep_newlines=True)
    if "<" not in shown:
        return shown
    # html.escape(shown, quote=False), without importing html (its entity table is ~2 ms of
    # the app's start)
    escaped = shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "<qt>" + escaped.replace("\n", "<br>").replace("\t", " ") + "</qt>"
