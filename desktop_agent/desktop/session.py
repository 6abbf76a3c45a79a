"""Which desktop session this is: X11, or Wayland (issue 34); read by every part that differs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

SessionKind = Literal["x11", "wayland"]
#: DESKTOP_AGENT_DESKTOP=x11 keeps the XWayland path on a Wayland session (a person's choice)
OVERRIDE = "DESKTOP_AGENT_DESKTOP"


def session_kind(env: Mapping[str, str] | None = None) -> SessionKind:
    """ "wayland" on a Wayland session (XDG_SESSION_TYPE, else WAYLAND_DISPLAY without
    DISPLAY), "x11" otherwise; DESKTOP_AGENT_DESKTOP=x11|wayland decides first."""
    env = os.environ if env is None else env
    chosen = env.get(OVERRIDE, "").strip().lower()
    if chosen in ("x11", "wayland"):
        return chosen  # type: ignore[return-value]
    kind = env.get("XDG_SESSION_TYPE", "").strip().lower()
    if kind in ("x11", "wayland"):
        return kind  # type: ignore[return-value]
    return "wayland" if env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY") else "x11"
