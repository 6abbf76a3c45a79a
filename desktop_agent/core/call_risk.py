"""Per-call risk: which single calls of an input tool ask every time, whatever the grants.

A run grant and a per-tool `allow` policy are per tool, so they cannot tell `hotkey ctrl+s`
from `hotkey super+r`. `assess_call` looks at one call's arguments and the focused window:
a call that can start a program, reach the system, paste the user's clipboard, run a line in
a terminal or type into a password field is asked at every call, with no run grant offered.
`args` are the validated arguments (the dump of the tool's pydantic model: what runs), never
the model's raw JSON; what cannot be read asks. The rules and the reasons for them are in
docs/architecture.md ("Gate").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS, spec_of
from desktop_agent.core.keys import ALIASES
from desktop_agent.core.models import Element, Observation
from desktop_agent.core.tools import ToolSpec

#: the accessibility role names (AT-SPI; the Windows probe maps IsPassword to the first)
PASSWORD_ROLES = frozenset({"password text", "password"})
TERMINAL_ROLES = frozenset({"terminal"})

#: the built-in tools whose text goes into a control, and the argument holding the text (their
#: specs' `text_field`), for readers that know a tool by the name a stored step holds
TEXT_TOOLS: Mapping[str, str] = {s.name: s.text_field for s in BUILTIN_TOOLS if s.text_field}

_MODIFIER_FAMILY = {
    "ctrl": "ctrl",
    "ctrlleft": "ctrl",
    "ctrlright": "ctrl",
    "alt": "alt",
    "altleft": "alt",
    "altright": "alt",
    "shift": "shift",
    "shiftleft": "shift",
    "shiftright": "shift",
    "win": "win",
    "winleft": "win",
    "winright": "win",
}

#: key sets that start a program or reach the system wherever the focus is (modifier
#: families + keys); a hotkey asks when it holds every key of one of them, in any order and
#: among any other keys (see `pressed_combos`)
SYSTEM_COMBOS: dict[frozenset[str], str] = {
    frozenset({"alt", "f1"}): "alt+f1 opens the application menu",
    frozenset({"alt", "f2"}): "alt+f2 opens the run-a-command dialog",
    frozenset({"alt", "f3"}): "alt+f3 opens the application finder (Xfce)",
    frozenset({"alt", "space"}): "alt+space opens a launcher (KRunner, PowerToys Run)",
    frozenset({"ctrl", "alt", "t"}): "ctrl+alt+t opens a terminal",
    frozenset({"ctrl", "alt", "delete"}): "ctrl+alt+delete opens the system menu",
    frozenset({"ctrl", "alt", "backspace"}): "ctrl+alt+backspace can end the X session",
    frozenset({"ctrl", "shift", "esc"}): "ctrl+shift+esc opens the task manager",
    frozenset({"ctrl", "esc"}): "ctrl+esc opens the start menu",
    frozenset({"f12"}): "f12 opens a drop-down terminal (Guake, Yakuake)",
}
#: key sets that paste the user's clipboard, wherever the focus is
PASTE_COMBOS: tuple[frozenset[str], ...] = (
    frozenset({"ctrl", "v"}),
    frozenset({"shift", "insert"}),
    frozenset({"ctrl", "shift", "v"}),
)
#: key sets that run the typed line in a terminal: enter, ctrl+j / ctrl+m (line feed, carriage
#: return), ctrl+o (readline's operate-and-get-next runs the line too)
LINE_END_COMBOS: tuple[frozenset[str], ...] = (
    frozenset({"enter"}),
    frozenset({"ctrl", "j"}),
    frozenset({"ctrl", "m"}),
    frozenset({"ctrl", "o"}),
)
_FUNCTION_KEYS = frozenset(f"f{n}" for n in range(1, 25))
#: characters a terminal takes as the end of a line, or as a key that runs it when typed or
#: pasted: every C0 control character but tab (\n, \r, ctrl+o = \x0f, …) and DEL
_LINE_END_CHARS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: what presses a focused button when typed: a space or a line end
_PRESSING_CHARS = re.compile(r"[ \x00-\x08\x0a-\x1f\x7f]")

#: names of terminals, shells, launchers and run-a-command dialogs, found anywhere in the
#: lowercased window label ("title — class"): gnome-terminal, org.kde.konsole, WindowsTerminal
TERMINAL_NAMES: tuple[str, ...] = (
    "terminal", "terminator", "terminology", "konsole", "alacritty", "wezterm",
    "tilix", "tilda", "guake", "yakuake", "st-256color", "ptyxis", "org.gnome.console",
    "ghostty", "sakura", "cmd.exe", "command prompt", "powershell", "conhost",
    "windowsterminal",
    # run-a-command dialogs and launchers run the typed line as well (Windows, GNOME, KDE,
    # Xfce, Ulauncher)
    "run a command", "enter a command", "krunner", "appfinder", "application finder",
    "ulauncher",
)  # fmt: skip
#: names found only as whole words: short ones that longer words hold ("st", "foot", "fish")
TERMINAL_WORDS: tuple[str, ...] = (
    "term", "xterm", "uxterm", "uterm", "rxterm", "urxterm", "aterm", "eterm", "lterm", "qterm",
    "mate-term", "xfce4-term", "mlterm", "roxterm", "foot", "rxvt", "urxvt", "kgx", "pwsh",
    "bash", "zsh", "fish", "gmrun",
    # Windows: Git Bash's mintty, ConEmu and cmder
    "mintty", "conemu", "conemu64", "cmder",
)  # fmt: skip
#: terminals whose names are also words ("kitty pictures.txt — gedit" is a document): found
#: only as the label's last word, where X11's class stands ("~ — kitty", "~ — dev.warp.Warp";
#: the X11 label ends with the class unless the title already does) or a Windows title ends
#: ("host - PuTTY")
TERMINAL_LAST_WORDS: tuple[str, ...] = ("kitty", "hyper", "tabby", "warp", "putty")
#: the titles Git Bash and MSYS2 give their shells: "MINGW64:/c/Users/me"
MSYS_TITLE_PREFIXES: tuple[str, ...] = (
    "mingw32:", "mingw64:", "msys:", "ucrt64:", "clang32:", "clang64:", "clangarm64:",
)  # fmt: skip
#: terminals and launchers known by their whole window class, too short or too common a word
#: to be looked for anywhere: suckless st (class "St"; its res_name st-256color is not what
#: the inventory shows), and launchers (a title that merely holds "albert" is not one)
TERMINAL_CLASSES: tuple[str, ...] = ("st",)
LAUNCHER_CLASSES: tuple[str, ...] = ("rofi", "dmenu", "wofi", "albert")
#: window titles and classes of terminals, shells, launchers and run-a-command dialogs
#: (matched in the folded window label); each entry of the lists above has its test
#: (tests/unit/core/test_pinned_name_lists.py)
_TERMINAL_WINDOW = re.compile(
    "|".join(
        (
            *map(re.escape, TERMINAL_NAMES),
            *(rf"\b{re.escape(word)}\b" for word in TERMINAL_WORDS),
            rf"(?:^|— )(?:{'|'.join(map(re.escape, TERMINAL_CLASSES + LAUNCHER_CLASSES))})$",
            rf"\b(?:{'|'.join(map(re.escape, TERMINAL_LAST_WORDS))})$",
            rf"^(?:{'|'.join(map(re.escape, MSYS_TITLE_PREFIXES))})",
            # the title a shell gives its terminal: user@host: ~/dir
            r"^[\w.-]+@[\w.-]+:",
            # Windows' Run dialog
            r"^run(?: —|$)",
        )
    )
)
#: windows that hold a terminal pane beside other panes (VS Code's integrated terminal): a
#: terminal unless the focused control is known and is not the terminal; by a name found
#: anywhere in the label, or by the word the label ends with (VS Code's class "Code")
TERMINAL_HOST_NAMES: tuple[str, ...] = ("visual studio code", "vscodium", "code - oss")
TERMINAL_HOST_CLASSES: tuple[str, ...] = ("code",)
_TERMINAL_HOST_WINDOW = re.compile(
    "|".join(
        (
            *map(re.escape, TERMINAL_HOST_NAMES),
            rf"\b(?:{'|'.join(map(re.escape, TERMINAL_HOST_CLASSES))})$",
        )
    )
)
#: the accessible name of a terminal pane inside another app (xterm.js: "Terminal input",
#: VS Code: "Terminal 1, bash")
_TERMINAL_CONTROL = re.compile(r"\bterminal\b")
#: names of targets whose click or invoke asks every time (whole words, any case); the user
#: edits the list in the settings (`sensitive_targets`). English, then German, French,
#: Spanish, Italian, Portuguese, Dutch.
DEFAULT_SENSITIVE_TARGETS: tuple[str, ...] = (
    "delete", "send", "pay", "buy", "submit", "confirm", "transfer", "remove", "format",
    "install", "purchase", "checkout", "uninstall", "erase",
    "löschen", "senden", "absenden", "bezahlen", "kaufen", "bestätigen", "überweisen",
    "entfernen", "formatieren", "installieren",
    "supprimer", "envoyer", "payer", "acheter", "valider", "confirmer", "transférer",
    "virement", "retirer", "formater", "installer",
    "eliminar", "borrar", "enviar", "pagar", "comprar", "confirmar", "transferir", "quitar",
    "formatear", "instalar",
    "elimina", "cancella", "invia", "paga", "acquista", "conferma", "trasferisci", "rimuovi",
    "formatta", "installa",
    "excluir", "apagar", "remover", "transferência",
    "verwijderen", "verzenden", "versturen", "betalen", "kopen", "bevestigen", "overmaken",
    "installeren",
)  # fmt: skip
#: names of controls that paste the clipboard when pressed (a terminal's context menu, Edit ›
#: Paste, a toolbar's Paste): pressed by a click, an invoke, or enter or space while focused
#: where the focus is in a terminal (or nobody can tell), they ask every time — the
#: clipboard's line ends run there, as a typed line's would. Not the settings' editable list.
#: Whole words, any case, folded; English, German, French, Spanish, Italian, Portuguese,
#: Dutch, Chinese.
PASTE_TARGETS: tuple[str, ...] = (
    "paste", "einfügen", "coller", "pegar", "incolla", "colar", "plakken", "粘贴",
)  # fmt: skip
#: the keys that press the focused control
_PRESS_FOCUSED_COMBOS = (frozenset({"enter"}), frozenset({"space"}))
#: keys held before enter or space that move the focus first: tab, and the arrows (which go
#: from button to button in a dialog's button row)
_FOCUS_MOVING_KEYS = frozenset({"tab", "up", "down", "left", "right"})

#: the desktop itself, where alt+f4 asks to shut down (Windows) or log out: the titles its
#: window label begins with, and its window classes (whole words: Windows' Progman and
#: WorkerW, Xfce's xfdesktop)
DESKTOP_TITLES: tuple[str, ...] = ("program manager", "desktop")
DESKTOP_CLASSES: tuple[str, ...] = ("progman", "workerw", "xfdesktop")
_DESKTOP_WINDOW = re.compile(
    rf"^(?:{'|'.join(map(re.escape, DESKTOP_TITLES))})\b"
    rf"|\b(?:{'|'.join(map(re.escape, DESKTOP_CLASSES))})\b"
)


#: letters of other scripts drawn like Latin ones (after casefold: the lower case of each
#: capital that looks Latin too, Cyrillic Н → н → h), and Latin variants that NFKC keeps
LOOKALIKE_LETTERS: dict[str, str] = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "ѕ": "s", "і": "i", "ї": "i", "ј": "j",
    "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y",
    "х": "x", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ү": "y", "ѵ": "v",
    # Greek
    "α": "a", "β": "b", "ε": "e", "ζ": "z", "η": "h", "ι": "i", "κ": "k", "μ": "m",
    "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    # Armenian, and Latin letters NFKC leaves alone
    "օ": "o", "ս": "u", "ց": "g", "ı": "i", "ɩ": "i", "ɑ": "a", "ɡ": "g", "ʏ": "y",
}  # fmt: skip
_LOOKALIKES = str.maketrans(LOOKALIKE_LETTERS)


def folded(text: str) -> str:
    """`text` as the gate matches it: NFKC (fullwidth and mathematical letters, ligatures,
    composed accents), without invisible format characters (zero-width spaces and joiners,
    bidi marks, soft hyphens), case-folded, and letters of other scripts that look Latin
    read as the Latin ones — so "Dе\u200blete" with a Cyrillic е reads "delete". A name the
    screen (a web page) controls cannot then slip a sensitive word or a terminal's name past
    the lists; a false match only asks one question too many."""
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = "".join(char for char in text if unicodedata.category(char) != "Cf")
    return text.casefold().translate(_LOOKALIKES)


class Sensitivity(StrEnum):
    """Whether the text of a call goes into a password field, as far as can be told."""

    PLAIN = "plain"
    PASSWORD = "password"  # noqa: S105 - a category name, not a secret
    UNKNOWN = "unknown"

    @property
    def redact(self) -> bool:
        """Stored text is hidden unless the field is known not to be a password field."""
        return self is not Sensitivity.PLAIN


@dataclass(frozen=True, slots=True)
class CallRisk:
    """What the gate must know about one call beyond its tool's risk."""

    #: why this call asks every time (no grant or allow policy covers it); "" when it does not
    always_ask: str = ""
    sensitivity: Sensitivity = Sensitivity.PLAIN

    @property
    def asks_every_call(self) -> bool:
        return bool(self.always_ask)


def key_family(key: str) -> str:
    """The canonical name of a key, with left/right modifiers folded into one family."""
    name = key.strip().lower()
    name = ALIASES.get(name, name)
    return _MODIFIER_FAMILY.get(name, name)


def pressed_combos(keys: Iterable[str], combos: Iterable[frozenset[str]]) -> frozenset[str] | None:
    """The first of `combos` that pressing `keys` fires, or None.

    `hotkey` presses its keys in order and holds each until the last is down, so a combo
    fires at the key-down of its last key whatever follows (ctrl+alt+t+shift), and keys held
    before it do not reliably stop it either (a launcher grab that ignores extra modifiers,
    an auto-repeated key): every prefix of the sequence is judged, and since the pressed set
    only grows, that is the whole set holding the combo.
    """
    pressed = {key_family(key) for key in keys}
    return next((combo for combo in combos if combo <= pressed), None)


def hotkey_risk(keys: Iterable[str], *, desktop_focused: bool | None, terminal: bool | None) -> str:
    """Why this key sequence asks every call, or "". `desktop_focused` / `terminal`
    None: nobody can tell where the focus is (asked as if it were there)."""
    keys = list(keys)
    pressed = frozenset(key_family(key) for key in keys)
    label = "+".join(key_family(key) for key in keys)
    if "win" in pressed:
        return f"{label} uses the system key, which opens launchers and system menus"
    if {"ctrl", "alt"} <= pressed and pressed & _FUNCTION_KEYS:
        return f"{label} switches to a text console"
    if (combo := pressed_combos(keys, SYSTEM_COMBOS)) is not None:
        return _held(SYSTEM_COMBOS[combo], combo, pressed)
    alt_f4 = frozenset({"alt", "f4"})
    if alt_f4 <= pressed and desktop_focused:
        return _held("alt+f4 on the desktop opens the shut-down dialog", alt_f4, pressed)
    if alt_f4 <= pressed and desktop_focused is None:
        return _held(
            "alt+f4 may reach the desktop's shut-down dialog (the focused window is not known)",
            alt_f4,
            pressed,
        )
    if pressed_combos(keys, PASTE_COMBOS) is not None:
        return f"{label} pastes the user's clipboard"
    if terminal is not False and pressed_combos(keys, LINE_END_COMBOS) is not None:
        if terminal:
            return f"{label} runs the typed line in a terminal"
        return f"{label} may run the typed line in a terminal (the focused window is not known)"
    return ""


def _held(reason: str, combo: frozenset[str], pressed: frozenset[str]) -> str:
    extra = sorted(pressed - combo)
    return f"{reason} (with {'+'.join(extra)} held too)" if extra else reason


def is_terminal_window(label: str) -> bool:
    """Whether a window's label ("title — class") names a terminal, a shell, a launcher or a
    run-a-command dialog — or an app with a terminal pane (VS Code)."""
    label = folded(label)
    return bool(_TERMINAL_WINDOW.search(label) or _TERMINAL_HOST_WINDOW.search(label))


def focused_window(observation: Observation) -> Element | None:
    """The focused top-level window of the observation, when the inventory lists windows."""
    return next(
        (
            element
            for element in observation.elements
            if element.role == "window" and element.focused
        ),
        None,
    )


def _focused_control(observation: Observation) -> Element | None:
    return next(
        (
            element
            for element in observation.elements
            if element.focused and element.role != "window"
        ),
        None,
    )


def _is_terminal_control(control: Element) -> bool:
    return control.role in TERMINAL_ROLES or bool(_TERMINAL_CONTROL.search(folded(control.name)))


def in_terminal(observation: Observation, focused_role: str | None) -> bool | None:
    """Whether input goes to a terminal: the focused control is one, or its window looks so.

    None when nobody can tell — the caller then treats the window as a terminal, since a
    line typed into one cannot be taken back: the observation lists no windows (its
    inventory failed or was late), or lists windows but none has the focus (an
    override-redirect launcher such as rofi or dmenu, or a dock, holds the keyboard).
    """
    if focused_role in TERMINAL_ROLES:
        return True
    control = _focused_control(observation)
    if control is not None and _is_terminal_control(control):
        return True
    if not any(element.role == "window" for element in observation.elements):
        return None
    window = focused_window(observation)
    if window is None:
        return None
    label = folded(window.name)
    if _TERMINAL_WINDOW.search(label):
        return True
    # an editor with a terminal pane: the terminal unless the focused control says otherwise
    return bool(_TERMINAL_HOST_WINDOW.search(label)) and control is None


def window_at(observation: Observation, x: int, y: int) -> list[Element]:
    """The listed windows whose box holds the point (their stacking order is not known)."""
    return [
        element
        for element in observation.elements
        if element.role == "window" and box_holds(element.box, x, y)
    ]


def box_holds(box: tuple[int, int, int, int], x: int, y: int) -> bool:
    """Whether a box (left, top, width, height) holds the point."""
    return box[0] <= x < box[0] + box[2] and box[1] <= y < box[1] + box[3]


def desktop_focused(observation: Observation) -> bool | None:
    """Whether the desktop itself has the focus: no window is focused, or the desktop window
    is. None when the observation lists no windows (its inventory failed or was late)."""
    windows = [element for element in observation.elements if element.role == "window"]
    if not windows:
        return None
    window = focused_window(observation)
    return window is None or bool(_DESKTOP_WINDOW.search(folded(window.name)))


def target_element(args: Mapping[str, Any], observation: Observation) -> Element | None:
    """The element a pointer call lands on: the one it names, else the smallest listed control
    (not a window) whose box holds its point."""
    element_id = args.get("element")
    if isinstance(element_id, int):
        return observation.element(element_id)
    x, y = args.get("x"), args.get("y")
    if not isinstance(x, int) or not isinstance(y, int):
        return None
    return control_at(observation, x, y)


def control_at(observation: Observation, x: int, y: int) -> Element | None:
    """The smallest listed control (not a window) whose box holds the point."""
    hits = [
        element
        for element in observation.elements
        if element.role != "window" and box_holds(element.box, x, y)
    ]
    return min(hits, key=lambda e: e.box[2] * e.box[3], default=None)


def sensitive_name(name: str, words: Iterable[str]) -> str | None:
    """The listed word that `name` contains as a whole word (any case), or None."""
    pattern, spelled = _word_pattern(tuple(words))
    found = pattern.search(folded(name)) if pattern is not None else None
    return spelled[found.group(1)] if found is not None else None


@functools.lru_cache(maxsize=8)
def _word_pattern(words: tuple[str, ...]) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """One pattern for the whole list (the gate's cost per call stays in microseconds), and
    each folded word's spelling in the list."""
    spelled: dict[str, str] = {}
    for word in words:
        if word:
            spelled.setdefault(folded(word), word)
    if not spelled:
        return None, spelled
    alternatives = "|".join(map(re.escape, sorted(spelled, key=len, reverse=True)))
    return re.compile(rf"(?<!\w)({alternatives})(?!\w)"), spelled


def text_sensitivity(
    tool: ToolSpec | str,
    args: Mapping[str, Any],
    observation: Observation,
    focused_role: str | None,
) -> Sensitivity:
    """Where a text tool's text goes: a password field, a plain field, or nobody knows."""
    if not spec_of(tool).text_field:
        return Sensitivity.PLAIN
    element_id = args.get("element")
    if isinstance(element_id, int):
        element = observation.element(element_id)
        if element is None:
            return Sensitivity.UNKNOWN
        return Sensitivity.PASSWORD if element.password else Sensitivity.PLAIN
    control = _focused_control(observation)
    if (control is not None and control.password) or focused_role in PASSWORD_ROLES:
        return Sensitivity.PASSWORD
    if focused_role is not None or control is not None:
        return Sensitivity.PLAIN
    return Sensitivity.UNKNOWN


def assess_call(
    tool: ToolSpec | str,
    args: Mapping[str, Any],
    observation: Observation,
    focused_role: str | None = None,
    sensitive_targets: Iterable[str] = DEFAULT_SENSITIVE_TARGETS,
) -> CallRisk:
    """The per-call risk of `tool(args)` given what is on the screen and what has the focus,
    judged by the tool's traits (a name: the built-in tool's).

    `focused_role` is the accessibility role of the focused control at action time (a
    FocusProbe's answer), None when it cannot be known; `sensitive_targets` the words
    whose targets ask every time.
    """
    spec = spec_of(tool)
    sensitivity = text_sensitivity(spec, args, observation, focused_role)
    if sensitivity is Sensitivity.PASSWORD:
        return CallRisk("typing into a password field", sensitivity)
    reason = ""
    if spec.presses:
        reason = _pressing_risk(_at_first_point(spec, args), observation, sensitive_targets)
    elif spec.drops:
        reason = _drag_risk(_start_and_drop(spec, args), observation, sensitive_targets)
    elif spec.presses_keys:
        keys = args.get("keys")
        if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
            return CallRisk(f"the keys {keys!r} cannot be read", sensitivity)
        reason = hotkey_risk(
            keys,
            desktop_focused=desktop_focused(observation),
            terminal=in_terminal(observation, focused_role),
        )
        if not reason and pressed_combos(keys, _PRESS_FOCUSED_COMBOS) is not None:
            # enter / space press the focused button: the same as clicking it; after a tab
            # held before them, the button the focus moved to
            reason = _pressed_target(
                _focused_control(observation), sensitive_targets, observation, focused_role
            )
            if not reason and _FOCUS_MOVING_KEYS & {key_family(key) for key in keys}:
                reason = _moved_focus_risk(observation, sensitive_targets)
    elif spec.keyboard and spec.text_field:
        # typed text: its line ends run it in a terminal (set_value's text is set, not typed)
        reason = _line_risk(args, observation, focused_role, sensitive_targets)
    return CallRisk(reason or _held_keys_risk(args), sensitivity)


def _at_first_point(spec: ToolSpec, args: Mapping[str, Any]) -> Mapping[str, Any]:
    """A pressing tool's arguments with its (first) point as x and y, where it presses."""
    if not spec.points or spec.points[0] == ("x", "y"):
        return args
    x_name, y_name = spec.points[0]
    return {**args, "x": args.get(x_name), "y": args.get(y_name)}


def _start_and_drop(spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
    """A dropping tool's press (its first point) and drop (its last) as a drag's arguments:
    the release of a held button (one point) is judged as the end of a drag that started
    there, what was pressed not being known here."""
    (x_name, y_name), (to_x_name, to_y_name) = spec.points[0], spec.points[-1]
    return {
        "x": args.get(x_name),
        "y": args.get(y_name),
        "to_x": args.get(to_x_name),
        "to_y": args.get(to_y_name),
    }


def _held_keys_risk(args: Mapping[str, Any]) -> str:
    """Keys held while a pointer acts (shift+click deletes for good in a file manager,
    ctrl+click opens a link elsewhere): what the call does depends on them, so it asks."""
    held = args.get("hold")
    if not held:
        return ""
    if not isinstance(held, list) or not all(isinstance(key, str) for key in held):
        return f"the keys held {held!r} cannot be read"
    return f"with {'+'.join(held)} held: what it does depends on the keys held"


def _pressing_risk(args: Mapping[str, Any], observation: Observation, words: Iterable[str]) -> str:
    """A click or invoke: on a sensitive target, or a middle click (it pastes)."""
    element_id, x, y = args.get("element"), args.get("x"), args.get("y")
    if not isinstance(element_id, int) and not (isinstance(x, int) and isinstance(y, int)):
        # validated arguments always name one; anything else cannot be judged
        return "the target cannot be told from the arguments"
    if reason := _pressed_target(target_element(args, observation), words, observation):
        return reason
    if args.get("button", "left") not in ("left", "right"):
        return "a middle click pastes the selected text (the X11 primary selection)"
    return ""


def _drag_risk(args: Mapping[str, Any], observation: Observation, words: Iterable[str]) -> str:
    """A drag presses at its start and releases at its end: either may land on a sensitive
    target, and a drop into a terminal pastes the dragged text (with its line ends) there."""
    x, y, to_x, to_y = (args.get(name) for name in ("x", "y", "to_x", "to_y"))
    if not (
        isinstance(x, int) and isinstance(y, int) and isinstance(to_x, int)
        and isinstance(to_y, int)
    ):  # fmt: skip
        return "the points cannot be told from the arguments"
    for px, py in ((x, y), (to_x, to_y)):
        if reason := _pressed_target(control_at(observation, px, py), words, observation):
            return reason
    if not any(element.role == "window" for element in observation.elements):
        return "a drag may drop text into a terminal (the windows are not known)"
    drop = window_at(observation, to_x, to_y)
    if any(is_terminal_window(window.name) for window in drop):
        return "dropping onto a terminal pastes the dragged text into it"
    return ""


def _line_risk(
    args: Mapping[str, Any],
    observation: Observation,
    focused_role: str | None,
    words: Iterable[str],
) -> str:
    """type_text: a line end (enter=true, or a line break or control character anywhere in
    the text: each line runs as it is typed) into a terminal, or a line end or a space (each
    presses a focused button, as the hotkeys enter and space do) onto a sensitive button."""
    text = args.get("text")
    enter = args.get("enter", False)
    ends_line = (
        enter is not False or not isinstance(text, str) or bool(_LINE_END_CHARS.search(text))
    )
    if ends_line:
        terminal = in_terminal(observation, focused_role)
        if terminal:
            return "typing a line that ends with Enter into a terminal runs it"
        if terminal is None:
            return (
                "typing a line that ends with Enter may run it in a terminal "
                "(the focused window is not known)"
            )
    if not ends_line and " " not in str(text):
        return ""
    if reason := _pressed_target(_focused_control(observation), words, observation, focused_role):
        return reason
    # a tab before the press moves the focus first: what is pressed is the next control
    text = str(text)
    tab = text.find("\t")
    if tab != -1 and (enter is not False or _PRESSING_CHARS.search(text, tab + 1)):
        return _moved_focus_risk(observation, words)
    return ""


def _moved_focus_risk(observation: Observation, words: Iterable[str]) -> str:
    """A tab moves the focus before a space or a line end presses what has it: a control no
    one can name. It asks when a listed control is sensitive (the tab may reach it). With no
    control listed (the window list alone) it does not, as a click by coordinates is not
    judged by a target there either: an editor's indented line would ask at every call."""
    controls = [element for element in observation.elements if element.role != "window"]
    for control in controls:
        if reason := _sensitive_target(control, words):
            return (
                "a tab or an arrow may move the focus onto a sensitive control before it is "
                f"pressed: {reason}"
            )
    return ""


def _pressed_target(
    target: Element | None,
    words: Iterable[str],
    observation: Observation,
    focused_role: str | None = None,
) -> str:
    """Why pressing `target` asks every time: a sensitive name, or a control that pastes the
    clipboard (a click on "Paste") where the focus is in a terminal or nobody can tell —
    there the clipboard's line ends run, as a line typed there would ask; "" when neither.
    An editor's Edit › Paste does not ask (a paste of what the run copied is ordinary work).
    Not for a control a tab may move to (`_moved_focus_risk`)."""
    if reason := _sensitive_target(target, words):
        return reason
    word = sensitive_name(target.name, PASTE_TARGETS) if target is not None else None
    if target is None or word is None:
        return ""
    terminal = in_terminal(observation, focused_role)
    if terminal is False:
        return ""
    what = f'the target {target.role} "{target.name}" ("{word}")'
    if terminal:
        return f"{what} pastes the clipboard into a terminal, where its line ends run"
    return (
        f"{what} may paste the clipboard into a terminal, where its line ends run "
        "(the focused window is not known)"
    )


def _sensitive_target(target: Element | None, words: Iterable[str]) -> str:
    word = sensitive_name(target.name, words) if target is not None else None
    if target is None or word is None:
        return ""
    return f'the target {target.role} "{target.name}" is sensitive ("{word}")'
