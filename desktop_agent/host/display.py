"""Whether a window can open here: the check the app and `doctor --calibrate` make before
Qt would abort the process on a display that is not there."""

from __future__ import annotations

import os
import sys


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
    cost tens on the way to the first paint; remote displays are left to Qt.
    """
    import re
    import socket

    match = re.fullmatch(r"(?:unix)?:(\d+)(?:\.\d+)?", name)
    if match is None:
        return None
    path = f"/tmp/.X11-unix/X{match.group(1)}"
    reasons = []
    for address in (path, "\0" + path):  # the socket file, then the abstract one
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(1.0)
            try:
                probe.connect(address)
            except OSError as error:
                reasons.append(error.strerror or str(error))
                continue
            return None
    return f"{reasons[0]}: {path}"
