"""Per-call risk: which single calls of an input tool ask every time, whatever the grants.

A run grant and a per-tool `allow` policy are per tool, so they cannot tell `hotkey ctrl+s`
from `hotkey super+r`. `assess_call` looks at one call's arguments and the focused window:
a call that can start a program, reach the system, paste the user's clipboard, run a line in
a terminal or type into a password field is asked at every call, with no run grant offered.
The rules and the reasons for them are in docs/architecture.md ("Gate").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from desktop_agent.core.keys import ALIASES
from desktop_agent.core.models import Element, Observation

#: the accessibility role names (AT-SPI; the Windows probe maps IsPassword to the first)
PASSWORD_ROLES = frozenset({"password text", "password"})
TERMINAL_ROLES = frozenset({"terminal"})

#: tools whose text goes into a control, and the argument holding the text
TEXT_TOOLS: Mapping[str, str] = {"type_text": "text", "set_value": "value"}

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

#: combinations (modifier families + one key) that start programs or reach the system
_SYSTEM_COMBOS: dict[frozenset[str], str] = {
    frozenset({"alt", "f1"}): "alt+f1 opens the application menu",
    frozenset({"alt", "f2"}): "alt+f2 opens the run-a-command dialog",
    frozenset({"ctrl", "alt", "t"}): "ctrl+alt+t opens a terminal",
    frozenset({"ctrl", "alt", "delete"}): "ctrl+alt+delete opens the system menu",
    frozenset({"ctrl", "alt", "backspace"}): "ctrl+alt+backspace can end the X session",
    frozenset({"ctrl", "shift", "esc"}): "ctrl+shift+esc opens the task manager",
    frozenset({"ctrl", "esc"}): "ctrl+esc opens the start menu",
}
_PASTE_COMBOS = (
    frozenset({"ctrl", "v"}),
    frozenset({"shift", "insert"}),
    frozenset({"ctrl", "shift", "v"}),
)
#: keys that end a line in a terminal: enter, and ctrl+j / ctrl+m (line feed, carriage return)
_LINE_END_COMBOS = (frozenset({"enter"}), frozenset({"ctrl", "j"}), frozenset({"ctrl", "m"}))

#: window titles and classes of terminals, shells and run-a-command dialogs (matched in the
#: lowercased window label)
_TERMINAL_WINDOW = re.compile(
    r"terminal|terminator|\b(?:x|u|rx|urx|a|e|l|q|mate-|xfce4-)?term\b|konsole|alacritty|kitty"
    r"|wezterm|tilix|guake|yakuake|st-256color|\bfoot\b|cmd\.exe|command prompt|powershell"
    r"|\bpwsh\b|conhost|windowsterminal|\bbash\b|\bzsh\b|\bfish\b"
    # the title a shell gives its terminal: user@host: ~/dir
    r"|^[\w.-]+@[\w.-]+:"
    # run-a-command dialogs run the typed line as well (Windows, GNOME, KDE, Xfce)
    r"|^run(?: —|$)|run a command|enter a command|krunner|appfinder|application finder"
)
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
#: tools that press their target, and the keys that press the focused control
_PRESSING_TOOLS = frozenset({"click", "invoke"})
_PRESS_FOCUSED_COMBOS = (frozenset({"enter"}), frozenset({"space"}))

#: the desktop itself, where alt+f4 asks to shut down (Windows) or log out
_DESKTOP_WINDOW = re.compile(r"^(?:program manager|desktop)\b|\bprogman\b|\bworkerw\b|xfdesktop")


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


def hotkey_risk(keys: Iterable[str], *, desktop_focused: bool | None, terminal: bool | None) -> str:
    """Why this key combination asks every call, or "". `desktop_focused` / `terminal`
    None: nobody can tell where the focus is (asked as if it were there)."""
    combo = frozenset(key_family(key) for key in keys)
    label = "+".join(key_family(key) for key in keys)
    if "win" in combo:
        return f"{label} uses the system key, which opens launchers and system menus"
    if reason := _SYSTEM_COMBOS.get(combo):
        return reason
    if "ctrl" in combo and "alt" in combo and combo & {f"f{n}" for n in range(1, 13)}:
        return f"{label} switches to a text console"
    if combo == frozenset({"alt", "f4"}) and desktop_focused:
        return "alt+f4 on the desktop opens the shut-down dialog"
    if combo == frozenset({"alt", "f4"}) and desktop_focused is None:
        return "alt+f4 may reach the desktop's shut-down dialog (the focused window is not known)"
    if combo in _PASTE_COMBOS:
        return f"{label} pastes the user's clipboard"
    if terminal and combo in _LINE_END_COMBOS:
        return f"{label} runs the typed line in a terminal"
    if terminal is None and combo in _LINE_END_COMBOS:
        return f"{label} may run the typed line in a terminal (the focused window is not known)"
    return ""


def is_terminal_window(label: str) -> bool:
    return bool(_TERMINAL_WINDOW.search(label.casefold()))


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


def in_terminal(observation: Observation, focused_role: str | None) -> bool | None:
    """Whether input goes to a terminal: the focused control is one, or its window looks so.

    None when nobody can tell: the observation lists no windows (its inventory failed or
    was late) and the focused control's role says nothing of a terminal — the caller then
    treats the window as one, since a line typed into a terminal cannot be taken back.
    """
    if focused_role in TERMINAL_ROLES:
        return True
    control = _focused_control(observation)
    if control is not None and control.role in TERMINAL_ROLES:
        return True
    if not any(element.role == "window" for element in observation.elements):
        return None
    window = focused_window(observation)
    return window is not None and is_terminal_window(window.name)


def desktop_focused(observation: Observation) -> bool | None:
    """Whether the desktop itself has the focus: no window is focused, or the desktop window
    is. None when the observation lists no windows (its inventory failed or was late)."""
    windows = [element for element in observation.elements if element.role == "window"]
    if not windows:
        return None
    window = focused_window(observation)
    return window is None or bool(_DESKTOP_WINDOW.search(window.name.casefold()))


def target_element(args: Mapping[str, Any], observation: Observation) -> Element | None:
    """The element a pointer call lands on: the one it names, else the smallest listed control
    (not a window) whose box holds its point."""
    element_id = args.get("element")
    if isinstance(element_id, int):
        return observation.element(element_id)
    x, y = args.get("x"), args.get("y")
    if not isinstance(x, int) or not isinstance(y, int):
        return None
    hits = [
        element
        for element in observation.elements
        if element.role != "window"
        and element.box[0] <= x < element.box[0] + element.box[2]
        and element.box[1] <= y < element.box[1] + element.box[3]
    ]
    return min(hits, key=lambda e: e.box[2] * e.box[3], default=None)


def sensitive_name(name: str, words: Iterable[str]) -> str | None:
    """The listed word that `name` contains as a whole word (any case), or None."""
    folded = name.casefold()
    for word in words:
        if word and re.search(rf"(?<!\w){re.escape(word.casefold())}(?!\w)", folded):
            return word
    return None


def text_sensitivity(
    tool: str, args: Mapping[str, Any], observation: Observation, focused_role: str | None
) -> Sensitivity:
    """Where a text tool's text goes: a password field, a plain field, or nobody knows."""
    if tool not in TEXT_TOOLS:
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
    tool: str,
    args: Mapping[str, Any],
    observation: Observation,
    focused_role: str | None = None,
    sensitive_targets: Iterable[str] = DEFAULT_SENSITIVE_TARGETS,
) -> CallRisk:
    """The per-call risk of `tool(args)` given what is on the screen and what has the focus.

    `focused_role` is the accessibility role of the focused control at action time (a
    FocusProbe's answer), None when it cannot be known; `sensitive_targets` the words
    whose targets ask every time.
    """
    sensitivity = text_sensitivity(tool, args, observation, focused_role)
    if sensitivity is Sensitivity.PASSWORD:
        return CallRisk("typing into a password field", sensitivity)
    reason = ""
    if tool in _PRESSING_TOOLS:
        reason = _sensitive_target(target_element(args, observation), sensitive_targets)
    elif tool == "hotkey":
        keys = args.get("keys")
        if isinstance(keys, list) and all(isinstance(key, str) for key in keys):
            reason = hotkey_risk(
                keys,
                desktop_focused=desktop_focused(observation),
                terminal=in_terminal(observation, focused_role),
            )
            if not reason and frozenset(map(key_family, keys)) in _PRESS_FOCUSED_COMBOS:
                # enter / space press the focused button: the same as clicking it
                target = _focused_control(observation)
                reason = _sensitive_target(target, sensitive_targets)
    elif tool == "type_text":
        text = args.get("text")
        # any line break runs the line before it, not only a final one
        ends_line = args.get("enter") is True or (
            isinstance(text, str) and ("\n" in text or "\r" in text)
        )
        terminal = in_terminal(observation, focused_role) if ends_line else False
        if terminal:
            reason = "typing a line that ends with Enter into a terminal runs it"
        elif terminal is None:
            reason = (
                "typing a line that ends with Enter may run it in a terminal "
                "(the focused window is not known)"
            )
        elif ends_line:
            reason = _sensitive_target(_focused_control(observation), sensitive_targets)
    return CallRisk(reason, sensitivity)


def _sensitive_target(target: Element | None, words: Iterable[str]) -> str:
    word = sensitive_name(target.name, words) if target is not None else None
    if target is None or word is None:
        return ""
    return f'the target {target.role} "{target.name}" is sensitive ("{word}")'
