"""The stop on Wayland: a desktop keyboard shortcut that runs `desktop-agent stop-all`.

Wayland gives no program a global key grab; the desktop runs a command on a key itself.
GNOME: its custom shortcuts (the media-keys plugin of gnome-settings-daemon reads them from
GSettings: a list of paths, each a relocatable `custom-keybinding` with name, command and
binding). `set_gnome_stop_shortcut` adds ours there, or updates it when it is already
listed, through the `gsettings` program (GLib's, so the desktop's own backend, dconf, is
written).
KDE Plasma 6: kglobalacceld (KDE/kglobalacceld, src/globalshortcutsregistry.cpp) runs a
command shortcut as a desktop entry: at its start `loadSettings` loads every `*.desktop` of
the `kglobalaccel` folder of XDG_DATA_HOME (and XDG_DATA_DIRS) as a component, and reads the
keys of its `_launch` action from `kglobalshortcutsrc` (XDG_CONFIG_HOME), group
`[services][<file name>]`, falling back to the entry's `X-KDE-Shortcuts`
(src/kserviceactioncomponent.cpp, `loadSettings`); pressing them launches the entry's Exec.
An entry with NoDisplay=true is skipped there. `set_kde_stop_shortcut` writes both, in the
shape kglobalacceld's own migration of khotkeys writes (`migrateKHotkeys`: Type, Name, Exec,
X-KDE-GlobalAccel-CommandShortcut=true, StartupNotify=false), leaving every other line of
kglobalshortcutsrc as it was.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

MEDIA_KEYS = "org.gnome.settings-daemon.plugins.media-keys"
CUSTOM = f"{MEDIA_KEYS}.custom-keybinding"
OURS = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/desktop-agent-stop/"
NAME = "Stop desktop-agent"
#: the app's stop hotkey on X11 (settings.stop_hotkey's default) in GTK's accelerator words
DEFAULT_BINDING = "<Control><Alt>Escape"

Runner = Callable[..., Any]


class ShortcutError(RuntimeError):
    """The desktop's shortcut could not be set (no gsettings, no GNOME schema)."""


def stop_all_argv() -> list[str]:
    """The program and arguments that stop every run: the installed `desktop-agent`, else
    this Python running the package."""
    found = shutil.which("desktop-agent")
    argv = [found] if found else [sys.executable, "-m", "desktop_agent"]
    return [*argv, "stop-all"]


def stop_all_command() -> str:
    """`stop_all_argv` as one shell line (GNOME's custom shortcut runs it so)."""
    return shlex.join(stop_all_argv())


def _gsettings(run: Runner, *args: str) -> str:
    try:
        done = run(["gsettings", *args], capture_output=True, text=True, timeout=10, check=False)
    except FileNotFoundError:
        raise ShortcutError("gsettings not found: apt install libglib2.0-bin") from None
    if done.returncode != 0:
        raise ShortcutError(f"gsettings {args[0]} {args[1]}: {done.stderr.strip()}")
    return str(done.stdout).strip()


def _paths(text: str) -> list[str]:
    """The paths of a GVariant `as` as gsettings prints it (`@as []` or `['/a/', '/b/']`)."""
    text = text.removeprefix("@as").strip()
    value = ast.literal_eval(text)
    return [str(path) for path in value]


def set_gnome_stop_shortcut(
    binding: str = DEFAULT_BINDING, command: str | None = None, *, run: Runner = subprocess.run
) -> str:
    """Bind `binding` to the stop-all command as a GNOME custom shortcut; a one-line account
    of what was done. Other custom shortcuts are kept as they were."""
    command = command or stop_all_command()
    paths = _paths(_gsettings(run, "get", MEDIA_KEYS, "custom-keybindings"))
    relocated = f"{CUSTOM}:{OURS}"
    for key, value in (("name", NAME), ("command", command), ("binding", binding)):
        _gsettings(run, "set", relocated, key, value)
    if OURS not in paths:
        _gsettings(run, "set", MEDIA_KEYS, "custom-keybindings", repr([*paths, OURS]))
        return f"GNOME shortcut {binding} added: it runs {command}"
    return f"GNOME shortcut {binding} updated: it runs {command}"


#: our command shortcut's desktop entry (its file name is kglobalacceld's component name)
KDE_ENTRY = "desktop-agent-stop.desktop"
KDE_GROUP = f"[services][{KDE_ENTRY}]"
#: GTK's accelerator modifiers as Qt's portable key names (QKeySequence::PortableText)
GTK_MODIFIERS = {
    "control": "Ctrl",
    "ctrl": "Ctrl",
    "primary": "Ctrl",
    "alt": "Alt",
    "mod1": "Alt",
    "shift": "Shift",
    "super": "Meta",
    "meta": "Meta",
    "hyper": "Meta",
}
#: X keysym names (GTK's key words) whose Qt portable name differs
QT_KEYS = {
    "escape": "Esc",
    "return": "Return",
    "backspace": "Backspace",
    "delete": "Del",
    "insert": "Ins",
    "page_up": "PgUp",
    "prior": "PgUp",
    "page_down": "PgDown",
    "next": "PgDown",
    "print": "Print",
    "pause": "Pause",
    "space": "Space",
    "tab": "Tab",
    "home": "Home",
    "end": "End",
    "left": "Left",
    "right": "Right",
    "up": "Up",
    "down": "Down",
}


def is_kde(env: Mapping[str, str] | None = None) -> bool:
    """Whether the desktop is KDE Plasma (XDG_CURRENT_DESKTOP names KDE)."""
    env = os.environ if env is None else env
    return "kde" in env.get("XDG_CURRENT_DESKTOP", "").casefold().split(":")


def qt_keys(binding: str) -> str:
    """A GTK accelerator (`<Control><Alt>Escape`) as Qt's portable key sequence
    (`Ctrl+Alt+Esc`); one already in Qt's words is kept. ShortcutError for an unknown
    modifier or no key."""
    if "<" not in binding:
        return binding.strip()
    modifiers = re.findall(r"<([^<>]*)>", binding)
    key = re.sub(r"<[^<>]*>", "", binding).strip()
    words: list[str] = []
    for modifier in modifiers:
        word = GTK_MODIFIERS.get(modifier.strip().casefold())
        if word is None:
            raise ShortcutError(f"unknown modifier <{modifier}> in {binding!r}")
        if word not in words:
            words.append(word)
    if not key:
        raise ShortcutError(f"no key in {binding!r}")
    named = QT_KEYS.get(key.casefold())
    words.append(named or (key.upper() if len(key) == 1 else key))
    return "+".join(words)


def _exec_line(argv: list[str]) -> str:
    """`argv` as a desktop entry's Exec (the Desktop Entry Specification's quoting: an
    argument with a reserved character in double quotes, `"` `` ` `` `$` `\\` escaped by a
    backslash, and `%` doubled, since Exec's field codes start with it)."""
    reserved = set(" \t\n\"'\\><~|&;$*?#()`=")
    parts = []
    for arg in argv:
        arg = arg.replace("%", "%%")
        if any(char in reserved for char in arg):
            arg = '"' + re.sub(r'(["`$\\])', r"\\\1", arg) + '"'
        parts.append(arg)
    # the entry is a key file too: its own escapes turn a backslash into two
    return " ".join(parts).replace("\\", "\\\\")


def _set_launch(text: str, keys: str) -> tuple[str, bool]:
    """kglobalshortcutsrc's text with `_launch=keys` in our group (added at the end when the
    group is not there); whether the group was there. Other lines are kept as they are."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() == KDE_GROUP), None)
    if start is None:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        gap = ["\n"] if lines and lines[-1].strip() else []
        return "".join([*lines, *gap, f"{KDE_GROUP}\n", f"_launch={keys}\n"]), False
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")),
        len(lines),
    )
    body = [line for line in lines[start + 1 : end] if not _is_launch(line)]
    while body and not body[-1].strip():
        body.pop()
    tail = ["\n"] if end < len(lines) else []
    updated = [*lines[: start + 1], *body, f"_launch={keys}\n", *tail, *lines[end:]]
    return "".join(updated), True


def _is_launch(line: str) -> bool:
    key = line.split("=", 1)[0].strip()
    return key == "_launch" or key.startswith("_launch[")


def set_kde_stop_shortcut(
    binding: str = DEFAULT_BINDING,
    argv: list[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Bind `binding` (a GTK accelerator or Qt's key words) to the stop-all command as a
    Plasma command shortcut: our desktop entry in XDG_DATA_HOME/kglobalaccel and its keys in
    XDG_CONFIG_HOME/kglobalshortcutsrc; a one-line account of what was done. Other
    shortcuts are kept as they were. ShortcutError when the files cannot be written."""
    env = os.environ if env is None else env
    keys = qt_keys(binding)
    home = Path(env.get("HOME") or Path.home())
    data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    argv = argv or stop_all_argv()
    entry = data / "kglobalaccel" / KDE_ENTRY
    shortcuts = config / "kglobalshortcutsrc"
    desktop = (
        "[Desktop Entry]\n"
        "Type=Application\n"
        f"Name={NAME}\n"
        f"Exec={_exec_line(argv)}\n"
        f"X-KDE-Shortcuts={keys}\n"
        "X-KDE-GlobalAccel-CommandShortcut=true\n"
        "StartupNotify=false\n"
    )
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_text(desktop, encoding="utf-8")
        config.mkdir(parents=True, exist_ok=True)
        before = shortcuts.read_text(encoding="utf-8") if shortcuts.exists() else ""
        text, known = _set_launch(before, keys)
        shortcuts.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ShortcutError(f"{error.filename or 'a file'}: {error.strerror or error}") from None
    done = "updated" if known else "added"
    return (
        f"KDE shortcut {keys} {done}: it runs {shlex.join(argv)} (Plasma reads it when its "
        "shortcut service starts: log in again)"
    )


def set_stop_shortcut(binding: str = DEFAULT_BINDING) -> str:
    """The desktop's own stop shortcut: KDE's where the desktop is KDE, else GNOME's."""
    if is_kde():
        return set_kde_stop_shortcut(binding)
    return set_gnome_stop_shortcut(binding)
