"""The on-screen instruction detector: text on the screen that gives orders to an AI (issue 31).

Pure and deterministic over what an observation already holds: element names, window titles,
values, and the texts read beside them (`Observation.texts`: text contents, labels, inactive
windows' controls, and what the observer's OCR read in windows with no accessible text). Its
rules are data (`RULES`, one `InjectionRule` each, a test per rule in
tests/unit/core/test_injection.py); each is a regular expression over the text as the gate
reads it (`call_risk.folded`: NFKC, no invisible characters, case-folded, look-alike letters
read as Latin). A rule marked `popup_only` fires only in a popup-like place (a dialog, an
alert, a notification, a small window among others), where urgent words are the attack (a
painted "Virus detected! Click OK"); elsewhere they are too common to judge by.

What it finds (`SuspiciousText`) marks the observe step and makes every input action ask while
the screen shows it (core/loop.py); docs/architecture.md ("Injection guard") says what it can
and cannot catch.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from desktop_agent.core.call_risk import box_holds, folded
from desktop_agent.core.models import Element, Observation, SuspiciousText

#: the words that name an AI agent when addressed
_AI = r"(?:ai|a\.i\.|assistant|agent|llm|language model|chatbot|gpt|copilot)"
#: a few words between two parts of one sentence (never across a line)
_GAP = r"(?:[^\S\n]+[^\s]+){0,5}?[^\S\n]+"
#: roles (AT-SPI, UIA) of popup-like elements and windows
POPUP_ROLES = frozenset(
    {"dialog", "alert", "notification", "tooltip", "popup menu", "window popup", "info bar"}
)
#: window labels that say what a popup is
_POPUP_LABEL = re.compile(r"\b(?:alert|warning|notification|pop-?up|dialog|security|virus)\b")
#: a window this much of the screen or less, among other windows, is popup-like
POPUP_AREA = 0.25
#: quoted text is cut to this many characters around what fired the rule
QUOTE_CHARS = 160
#: the text scanned per observation: twice what the prompt shows of the element list
#: (planner/screen_text.py, 12,000 characters) and more than a 1080p screen shows legibly;
#: names past it are not scanned (windows' titles always are), which keeps the cost per
#: observation within its 2 ms (benchmarks/injection_detector.py), and such a look is not
#: read whole (`unscanned`: the guard asks on it)
MAX_SCAN_CHARS = 24_000
#: why a look was not scanned whole
NOT_SCANNED = "the screen shows more text than the injection guard reads"


@dataclass(frozen=True, slots=True)
class InjectionRule:
    """One rule: its name (the note's `rule`), what it catches, and its pattern."""

    name: str
    about: str
    pattern: str
    #: literal (folded) strings one of which every match holds: only a text holding one is
    #: searched with the pattern, which keeps a screen of long texts within the budget
    triggers: tuple[str, ...]
    #: fires only in a popup-like place
    popup_only: bool = False

    def compiled(self) -> tuple[InjectionRule, re.Pattern[str], tuple[bytes, ...]]:
        """The rule, its pattern and its triggers as bytes, ready for `scan`."""
        encoded = tuple(trigger.encode() for trigger in self.triggers)
        return self, re.compile(self.pattern), encoded


RULES: tuple[InjectionRule, ...] = (
    InjectionRule(
        "addresses_ai",
        "text that speaks to an AI, an assistant or an agent",
        rf"\b(?:to|dear|hey|hi|hello|attention|note to|message (?:to|for)|instructions? for)"
        rf"[,:!]?[^\S\n]+(?:the[^\S\n]+|any[^\S\n]+|all[^\S\n]+)?(?:ai[^\S\n]+)?{_AI}s?\b"
        rf"|\bif you are an?[^\S\n]+(?:ai|assistant|agent|llm|language model|bot)\b"
        rf"|\bthe[^\S\n]+(?:ai|assistant|agent)[^\S\n]+(?:must|should|needs? to|has to|is to)\b"
        # OCR reads a sans-serif "AI" as "Al" (a web page read from its pixels)
        rf"|\b(?:ai|al|computer[- ]use|autonomous|gui|llm|web|browser)[^\S\n]+"
        rf"(?:agent|assistant)s?[^\S\n]*[,:!]"
        # a sentence that starts by calling it ("Assistant, type …"; "Agent:" alone is a
        # form's label)
        rf"|(?:^|\n|[.!?][^\S\n]+)[^\S\n]*(?:(?:ai|a\.i\.|assistant)[^\S\n]*[,:]"
        rf"|agent[^\S\n]*,)",
        triggers=(
            "ai",
            "a.i.",
            "assistant",
            "agent",
            "llm",
            "language model",
            "chatbot",
            "gpt",
            "copilot",
        ),
    ),
    InjectionRule(
        "ignore_instructions",
        "text that tells the reader to ignore or override its instructions",
        rf"\b(?:ignore|disregard|forget|override|bypass)\b{_GAP}"
        rf"(?:instructions?|prompts?|rules|directions|guidelines|orders|task|goal)\b"
        r"|\b(?:new|updated|real|actual|true|secret)[^\S\n]+(?:instructions?|task|goal|orders)"
        r"[^\S\n]*:"
        r"|\bsystem[^\S\n]+(?:prompt|message|override)\b",
        triggers=(
            "ignore",
            "disregard",
            "forget",
            "override",
            "bypass",
            "instruction",
            "task",
            "goal",
            "order",
            "system",
        ),
    ),
    InjectionRule(
        "asks_credentials",
        "text that asks for a password, a key, a token or card details",
        rf"\b(?:enter|type|provide|give|send|paste|share|confirm|verify|input|submit|re-?enter)"
        rf"\b{_GAP}(?:password|passcode|passphrase|pin|credentials?|api[^\S\n]+key|token|"
        r"secret|ssh[^\S\n]+key|private[^\S\n]+key|recovery[^\S\n]+(?:phrase|code)|"
        r"seed[^\S\n]+phrase|credit[^\S\n]+card|card[^\S\n]+number|cvv|one-time[^\S\n]+code|"
        r"otp|2fa[^\S\n]+code)s?\b",
        triggers=(
            "password",
            "passcode",
            "passphrase",
            "pin",
            "credential",
            "key",
            "token",
            "secret",
            "phrase",
            "card",
            "cvv",
            "code",
            "otp",
        ),
    ),
    InjectionRule(
        "shell_command",
        "a shell command line: a download piped to a shell, rm -rf, a PowerShell cradle",
        r"\b(?:curl|wget|fetch)\b[^\n|]*\|[^\S\n]*(?:sudo[^\S\n]+)?(?:ba|z|da|k|c|fi)?sh\b"
        r"|\|[^\S\n]*(?:sudo[^\S\n]+)?(?:bash|sh|zsh|python3?|perl)\b(?![\w.-])"
        r"|\brm[^\S\n]+(?:-[a-z]*r[a-z]*f|-[a-z]*f[a-z]*r|--recursive|-r\b)"
        r"|\b(?:iex|invoke-expression)\b|\bdownloadstring\b|\bdownloadfile\b"
        r"|\bnew-object[^\S\n]+(?:system\.)?net\.webclient\b"
        r"|\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n]*\|"
        r"|\bpowershell(?:\.exe)?[^\S\n]+(?:-[a-z]+[^\S\n]+)*-(?:e|enc|encodedcommand|nop|"
        r"noprofile|w(?:indowstyle)?[^\S\n]+hidden)\b"
        r"|\bbase64[^\S\n]+(?:-d|--decode)\b[^\n]*\|"
        r"|/dev/tcp/|\bmkfifo\b|\bnc[^\S\n]+(?:-[a-z]*e)\b|\bchmod[^\S\n]+\+x\b[^\n]*&&",
        triggers=(
            "|",
            "rm ",
            "rm\t",
            "iex",
            "invoke-expression",
            "downloadstring",
            "downloadfile",
            "webclient",
            "powershell",
            "/dev/tcp/",
            "mkfifo",
            "nc ",
            "nc\t",
            "chmod",
        ),
    ),
    InjectionRule(
        "orders_command",
        'text that orders a command to be run or typed ("run the command: …")',
        r"\b(?:run|execute|exec|launch|type|enter|paste)(?:[^\S\n]+(?:the|this|these|following|"
        r"a|shell|terminal))*[^\S\n]+commands?(?:[^\S\n]+(?:below|line))?[^\S\n]*:",
        triggers=("command",),
    ),
    InjectionRule(
        "urgent_click",
        "a popup that urges an immediate click or action",
        r"\b(?:click|press|tap|select|hit)(?:[^\S\n]*:)?[^\S\n]+(?:on[^\S\n]+)?(?:the[^\S\n]+)?"
        r"['\"“‘]?"
        r"(?:ok|yes|allow|accept|continue|here|this|below|install|update|fix|scan|remove|"
        r"confirm|agree|enable|download|run|start)\b"
        r"|\byou must\b|\bimmediately\b|\burgent(?:ly)?\b|\bright now\b|\bact now\b"
        r"|\bvirus(?:es)? (?:detected|found)\b|\b(?:computer|system|pc|device) (?:is|has been|was)"
        r" (?:infected|at risk|compromised|locked|hacked)\b|\bsecurity (?:alert|warning)\b",
        triggers=(
            "click",
            "press",
            "tap",
            "select",
            "hit",
            "must",
            "immediately",
            "urgent",
            "right now",
            "act now",
            "virus",
            "infected",
            "at risk",
            "compromised",
            "locked",
            "hacked",
            "security",
        ),
        popup_only=True,
    ),
)

_COMPILED = tuple(rule.compiled() for rule in RULES)


def scan(
    observation: Observation, rules: Sequence[InjectionRule] = RULES, *, said: Sequence[str] = ()
) -> tuple[SuspiciousText, ...]:
    """The texts of `observation` that fire a rule, one per element (its first rule), in the
    element list's order. The names are joined into one text where each rule's triggers are
    looked for; only a name holding one is searched with the rule's pattern. A match whose
    whole line is words of `said` (the goal and the texts the run typed, each `plain`) does
    not fire: the person's own words, typed where they asked, give no new order."""
    elements = shown_texts(observation)
    if not elements:
        return ()
    texts: list[str] = []
    left = MAX_SCAN_CHARS
    for element in elements:
        name = element.name if element.role == "window" else element.name[: max(left, 0)]
        left -= len(name)
        texts.append(_folded(name))
    # searched as UTF-8 bytes: bytes.find is a fast search whatever the text's characters
    # (a str holding one "—" is searched much slower), and a trigger is ASCII
    encoded = [text.encode("utf-8", "surrogatepass") for text in texts]
    starts: list[int] = []
    at = 0
    for data in encoded:
        starts.append(at)
        at += len(data) + 1
    joined = b"\n".join(encoded)
    compiled = _COMPILED if rules is RULES else tuple(rule.compiled() for rule in rules)
    fired: dict[int, tuple[InjectionRule, tuple[int, int]]] = {}
    for rule, pattern, triggers in compiled:
        for index in sorted(_holding(joined, starts, triggers) - fired.keys()):
            match = _unsaid(pattern, texts[index], said)
            if match is None:
                continue
            if rule.popup_only and not popup_like(elements[index], observation):
                continue
            fired[index] = (rule, match.span())
    return tuple(
        SuspiciousText(
            text=quote(elements[index].name, *span),
            where=where(elements[index], observation),
            rule=rule.name,
            box=image_box(elements[index], observation),
            element=elements[index].id or None,
        )
        for index, (rule, span) in sorted(fired.items())
    )


def _unsaid(pattern: re.Pattern[str], text: str, said: Sequence[str]) -> re.Match[str] | None:
    """The first match of `pattern` in `text` whose line is not within one of `said`: the
    whole line, not the match (an order's words end at its colon: "run the command:" in the
    goal must not pass the line "run the command: rm -rf ~")."""
    for match in pattern.finditer(text):
        if not said:
            return match
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        line = plain(text[start : len(text) if end == -1 else end])
        if not any(line in words for words in said):
            return match
    return None


#: quotes are dropped before texts are compared: a shell quotes what it was given
#: ("touch x '—' y" was read as "touch x — y"), a person quotes what to type
_QUOTES = str.maketrans("", "", "'\"`")


def plain(text: str) -> str:
    """`text` as texts are compared with the goal and the typed texts: folded as the gate
    reads it, quotes dropped, each run of white space one space."""
    return " ".join(folded(text).translate(_QUOTES).split())


def shown_texts(observation: Observation) -> tuple[Element, ...]:
    """Every element and text of `observation` whose words the model is shown, as the guard
    reads them: the element list, the elements of the monitors the image does not show, the
    title and controls of an active window whose place the desktop hides (Wayland), then the
    texts read beside them (contents, OCR), the longest, last."""
    title = relative_title(observation)
    return (
        *observation.elements,
        *observation.elsewhere,
        *(() if title is None else (title,)),
        *observation.window_relative,
        *observation.texts,
    )


def relative_title(observation: Observation) -> Element | None:
    """The title of the window `observation.window_relative` is relative to, as the element
    the prompt shows it as (its first line), or None when there is no such window."""
    if not observation.relative_to and not observation.window_relative:
        return None
    return Element(0, "window", observation.relative_to, NO_BOX)


#: the box of an element no pixel of the image holds
NO_BOX = (0, 0, 0, 0)


def _unplaced(element: Element, observation: Observation) -> str:
    """Where `element` is when no pixel of the image holds it: "elsewhere" (on a monitor the
    image does not show), "relative" (in the active window whose place the desktop hides),
    "title" (that window's title), "" when it is on the image."""
    if any(element is other for other in observation.elsewhere):
        return "elsewhere"
    if any(element is other for other in observation.window_relative):
        return "relative"
    if element == relative_title(observation):
        return "title"
    return ""


def image_box(element: Element, observation: Observation) -> tuple[int, int, int, int] | None:
    """`element`'s box on the image, None for one no pixel of the image holds (its box is
    another monitor's nothing or its window's own px: a point there is not it)."""
    return None if _unplaced(element, observation) else element.box


def unscanned(observation: Observation) -> str:
    """Why `scan` leaves some of `observation`'s text unread (NOT_SCANNED: its names and
    texts pass MAX_SCAN_CHARS), "" when it reads all of it."""
    left = MAX_SCAN_CHARS
    for element in shown_texts(observation):
        if element.role != "window" and len(element.name) > max(left, 0):
            return NOT_SCANNED
        left -= len(element.name)
    return ""


def _folded(text: str) -> str:
    """`call_risk.folded`, with its look-alike table skipped for ASCII text (it maps only
    other scripts' letters, and translating a long text costs milliseconds)."""
    return text.lower() if text.isascii() else folded(text)


def _holding(joined: bytes, starts: list[int], triggers: tuple[bytes, ...]) -> set[int]:
    """The indexes of the joined texts that hold one of `triggers`."""
    found: set[int] = set()
    for trigger in triggers:
        at = joined.find(trigger)
        while at != -1:
            index = bisect.bisect_right(starts, at) - 1
            found.add(index)
            # on to the next text: this one is a candidate already
            after = starts[index + 1] if index + 1 < len(starts) else len(joined)
            at = joined.find(trigger, after)
    return found


def quote(name: str, start: int, end: int) -> str:
    """The name, cut to QUOTE_CHARS around the span that fired (folding keeps most names'
    length; where it did not, the cut is only a little off)."""
    text = " ".join(name.split())
    if len(text) <= QUOTE_CHARS:
        return text
    left = max(0, min(start - QUOTE_CHARS // 4, len(text) - QUOTE_CHARS))
    cut = text[left : left + QUOTE_CHARS]
    return ("…" if left else "") + cut + ("…" if left + QUOTE_CHARS < len(text) else "")


def window_of(element: Element, observation: Observation) -> Element | None:
    """The smallest listed window holding the element's centre (itself, for a window; the
    topmost, for a read text)."""
    if element.role == "window":
        return element
    x, y = element.center
    windows = [e for e in observation.elements if e.role == "window" and box_holds(e.box, x, y)]
    if element.id == 0 and windows:
        # a read text (Observation.texts) is what shows there: the topmost window's (the
        # list has windows topmost first); a control is in the smallest window around it
        return windows[0]
    return min(windows, key=lambda w: w.box[2] * w.box[3], default=None)


def where(element: Element, observation: Observation) -> str:
    """Where a text is, as the person asked reads it: the element and its window (its
    monitor, for one on a monitor the image does not show)."""
    name = _short(element.name)
    unplaced = _unplaced(element, observation)
    title = element.role == "window"
    what = f'the title of the window "{name}"' if title else f'{element.role} "{name}"'
    if unplaced == "elsewhere":
        return f"{what} on monitor {element.monitor}"
    if unplaced == "title":
        return f'the title of the active window "{name}"{_NOT_FOUND}'
    if unplaced == "relative":
        return f'{what} in the active window "{_short(observation.relative_to)}"{_NOT_FOUND}'
    if title:
        return what
    window = window_of(element, observation)
    inside = f' in the window "{_short(window.name)}"' if window is not None else ""
    return f"{what}{inside}"


#: said of a window the desktop hides the place of and that was not found on the image
_NOT_FOUND = " (not found on the screenshot)"


def popup_like(element: Element, observation: Observation) -> bool:
    """A dialog, alert or notification, or an element in one, or in a small window that is
    one of several. An element no pixel of the image holds is judged by its own role and
    its window's title (the active one's, for one relative to it): no box to measure."""
    if element.role in POPUP_ROLES:
        return True
    unplaced = _unplaced(element, observation)
    if unplaced:
        title = observation.relative_to if unplaced != "elsewhere" else ""
        if element.role == "window":
            title = element.name
        return bool(_POPUP_LABEL.search(folded(title)))
    window = window_of(element, observation)
    if window is None:
        return False
    if window.role in POPUP_ROLES or _POPUP_LABEL.search(folded(window.name)):
        return True
    windows = sum(1 for e in observation.elements if e.role == "window")
    area = window.box[2] * window.box[3]
    return windows > 1 and area <= POPUP_AREA * observation.width * observation.height


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
