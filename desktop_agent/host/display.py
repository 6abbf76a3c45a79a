"""Whether a window can open here: the check the app and `doctor --calibrate` make before
Qt would abort the process on a display that is not there."""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

from desktop_agent.desktop.session import session_kind

#: Qt puts its windows on the AT-SPI bus only while the desktop says a screen reader is on,
#: or with this set (measured on the headless GNOME Wayland desk: a PySide6 window was not
#: on the bus without it, and was with it)
QT_ACCESSIBILITY_ON = "QT_LINUX_ACCESSIBILITY_ALWAYS_ON"


def windows_on_the_accessibility_bus(env: MutableMapping[str, str] | None = None) -> None:
    """On a Wayland session, before the QApplication: the app's windows go on the AT-SPI bus,
    the one place where the focus probe can see that one of them is active (Wayland lists
    no windows; desktop/inventory/atspi_wayland.py). A value the user set is kept."""
    env = os.environ if env is None else env
    if sys.platform.startswith("linux") and session_kind(env) == "wayland":
        env.setdefault(QT_ACCESSIBILITY_ON, "1")


def display_problem(env: dict[str, str] | os._Environ[str]) -> str | None:
    """Why Qt could not open a window here (it would abort the process), or None."""
    if not sys.platform.startswith("linux") or env.get("WAYLAND_DISPLAY"):
        return None
    platform = env.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None
    name = env.get("DISPLAY")
    hint = "run it in a desktop session, or use `desktop-agent run` for a run without a window"
    if not name:
        return f"no display to open the window on (DISPLAY is not set); {hint}"
    reason = _x_server_refuses(name)
    if reason:
        return f"cannot open the display {name!r} ({reason}); {hint}"
    return None


def _x_server_refuses(name: str) -> str | None:
    """For a local display (":0", "unix:0.0"): why its socket takes no connection, or None.

    A plain connect() costs well under a millisecond, where importing an X library would
    cost tens on the way to the first paint; remote displays are left to Qt. `_socket`, not
    socket.py: on X the probe is on the way to the window's first paint, and socket.py (with
    selectors, select, array and its enums) is 5-6 ms of CPU there, for a connect().
    """
    import _socket
    import re

    match = re.fullmatch(r"(?:unix)?:(\d+)(?:\.\d+)?", name)
    if match is None:
        return None
    path = f"/tmp/.X11-unix/X{match.group(1)}"
    reasons = []
    for address in (path, "\0" + path):  # the socket file, then the abstract one
        probe = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            probe.settimeout(1.0)
            probe.connect(address)
        except OSError as error:
            reasons.append(error.strerror or str(error))
            continue
        finally:
            probe.close()
        return None
    return f"{reasons[0]}: {path}"
