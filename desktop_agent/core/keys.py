"""Key names: pyautogui's names, with the aliases DESIGN §5 accepts, validated before pressing."""

from __future__ import annotations

ALIASES = {
    "control": "ctrl",
    "return": "enter",
    "escape": "esc",
    "super": "win",
    "cmd": "win",
    "command": "win",
    "windows": "win",
    "del": "delete",
    "ins": "insert",
    "pgup": "pageup",
    "pgdn": "pagedown",
    "option": "alt",
    # pyautogui has no "menu" (its press of it does nothing): the context-menu key is "apps"
    "menu": "apps",
    "application": "apps",
    "applications": "apps",
    "contextmenu": "apps",
}

_NAMED = {
    "ctrl",
    "ctrlleft",
    "ctrlright",
    "alt",
    "altleft",
    "altright",
    "shift",
    "shiftleft",
    "shiftright",
    "win",
    "winleft",
    "winright",
    "enter",
    "esc",
    "tab",
    "space",
    "backspace",
    "delete",
    "insert",
    "home",
    "end",
    "pageup",
    "pagedown",
    "up",
    "down",
    "left",
    "right",
    "capslock",
    "numlock",
    "scrolllock",
    "printscreen",
    "pause",
    "apps",
    "volumeup",
    "volumedown",
    "volumemute",
    "playpause",
    "nexttrack",
    "prevtrack",
}
_FUNCTION = {f"f{n}" for n in range(1, 25)}
_PUNCTUATION = set("`-=[]\\;',./!@#$%^&*()_+{}|:\"<>?~")

KEY_NAMES: frozenset[str] = frozenset(
    _NAMED | _FUNCTION | _PUNCTUATION | set("abcdefghijklmnopqrstuvwxyz0123456789")
)


def normalize_key(key: str) -> str:
    """The canonical name of `key`, or ValueError naming it."""
    name = key.strip().lower()
    name = ALIASES.get(name, name)
    if name not in KEY_NAMES:
        raise ValueError(f"unknown key {key!r}")
    return name
