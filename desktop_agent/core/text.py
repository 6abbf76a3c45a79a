"""Text from the screen or the model made safe to show: no control or bidi character acts."""

from __future__ import annotations

import unicodedata

#: format characters that only join letters (Arabic, Indic scripts, emoji sequences): kept
_JOINERS = frozenset({"\u200c", "\u200d"})


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a surrogate pair, as JSON spells characters beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _is_hidden(char: str) -> bool:
    """Does the character act on the display instead of showing? Control characters (C0,
    DEL, C1: ANSI escapes, carriage return, backspace), format characters (bidi
    embeddings, overrides and isolates U+202A–202E and U+2066–2069, marks, zero-width
    spaces, BOM), line and paragraph separators, and lone surrogates."""
    if char in _JOINERS:
        return False
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every control and bidi character shown as its escape (`\\x1b`, `\\u202e`).

    A terminal or a label then shows what was sent, and nothing in it can colour, move
    the cursor, rewrite a line or reverse the text around it. Tabs and newlines become
    spaces (a CRLF is one newline), or stay with `keep_newlines`. Escaping rather than dropping
    keeps the text honest: a reader sees that something was hidden there.
    """
    if text.isprintable():
        return text  # the common case: nothing to do (isprintable is False for tab, newline)
    text = text.replace("\r\n", "\n")
    out: list[str] = []
    for char in text:
        if char == "\n" or char == "\t":
            out.append(char if keep_newlines else " ")
        elif _is_hidden(char):
            out.append(_escape(char))
        else:
            out.append(char)
    return "".join(out)


#: letters and symbols that most fonts draw as blank space or nothing: Hangul fillers
#: (U+115F, U+1160, U+3164, U+FFA0), the blank Braille pattern (U+2800), Khmer's inherent
#: vowels (U+17B4, U+17B5) and the combining grapheme joiner (U+034F)
_BLANK_LOOKING = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5\u034f")


def _looks_blank(char: str) -> bool:
    """Drawn as (or like) white space but not the plain space: the blank-looking letters
    above and every space separator other than U+0020 (no-break, en/em, ideographic, …)."""
    return char in _BLANK_LOOKING or (char != " " and unicodedata.category(char) == "Zs")


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """`printable`, and every blank-looking character escaped too (`\u2800`, `\u3164`,
    `\u00a0`): for the arguments a person approves, where text hidden behind "nothing"
    would be approved unseen."""
    shown = printable(text, keep_newlines=keep_newlines)
    if shown.isascii():
        return shown
    return "".join(_escape(char) if _looks_blank(char) else char for char in shown)


def quote(text: str) -> str:
    """A part of a question that came from outside (the model's reason, a target's name from
    the screen, a tool name, a provider's message) for its place among our own words: `visible`
    with newlines, carriage returns and tabs escaped too (`\\n`, `\\x0d`, `\\t`), so it cannot
    start a line of its own and pass for ours ("…\\nThe desktop agent checked this call: it is
    safe"). Backslashes stay as they are: the result quoted again is the same."""
    if text.isprintable():
        return visible(text)
    return visible(text.replace("\r", "\\x0d").replace("\n", "\\n").replace("\t", "\\t"))


def printable_json(text: str) -> str:
    """A JSON text (json.dumps with ensure_ascii=False) with the characters `printable`
    escapes written as JSON \\u escapes: the same value for a parser, nothing hidden on a
    terminal, and no lone surrogate that the output encoding would choke on."""
    if text.isprintable():
        return text
    return "".join(_json_escape(char) if _is_hidden(char) else char for char in text)


def one_line(what: BaseException | str | None) -> str:
    """`what` with its whitespace runs (newlines too) made single spaces and its control
    and bidi characters escaped (`printable`); an exception without a message is named by
    its type."""
    text = " ".join(printable(str(what)).split()) if what is not None else ""
    return text or type(what).__name__
