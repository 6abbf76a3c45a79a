"""GTK settings for a real editor (l3afpad) whose screen changes only when something is done
to it, given to the editor through its own XDG_CONFIG_HOME."""

from __future__ import annotations

from pathlib import Path

#: the caret does not blink, and scroll bars are drawn all the time instead of GTK's overlay
#: indicator, which fades in when the pointer moves over the text (a click is a move) and out
#: about a second later: 24 cells of the signature 9-10 grey levels apart, caught or not
#: between two observations depending on the machine's load
STILL_GTK_SETTINGS = """[Settings]
gtk-cursor-blink = false
gtk-overlay-scrolling = false
gtk-enable-animations = false
"""


def still_gtk_env(directory: Path) -> dict[str, str]:
    """Write STILL_GTK_SETTINGS under `directory` (once); the environment that makes a GTK 3
    program started with it read them."""
    settings = directory / "gtk-3.0" / "settings.ini"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(STILL_GTK_SETTINGS, encoding="utf-8")
    return {"XDG_CONFIG_HOME": str(directory)}
