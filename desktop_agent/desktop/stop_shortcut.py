"""The stop on Wayland: a desktop keyboard shortcut that runs `desktop-agent stop-all`.

Wayland gives no program a global key grab; GNOME runs a command on a key through its own
custom shortcuts (the media-keys plugin of gnome-settings-daemon reads them from GSettings:
a list of paths, each a relocatable `custom-keybinding` with name, command and binding).
`set_gnome_stop_shortcut` adds ours there, or updates it when it is already listed, through
the `gsettings` program (GLib's, so the desktop's own backend, dconf, is written).
"""

from __future__ import annotations

import ast
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
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


def stop_all_command() -> str:
    """The command line that stops every run: the installed `desktop-agent`, else this
    Python running the package."""
    found = shutil.which("desktop-agent")
    argv = [found] if found else [sys.executable, "-m", "desktop_agent"]
    return shlex.join([*argv, "stop-all"])


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
