"""How the app says an error or a long text in one line (no Qt: the app's root imports it)."""

from __future__ import annotations

from desktop_agent.core.text import one_line, printable

__all__ = ["one_line", "plain_tooltip", "shorten"]


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
