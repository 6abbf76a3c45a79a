"""A private headless GNOME Wayland desk (mutter, PipeWire, the portals) for tests and the eval.

`start_wayland_session()` makes a private XDG_RUNTIME_DIR and config folders, starts its own
D-Bus session (whose activation environment carries WAYLAND_DISPLAY and
XDG_CURRENT_DESKTOP=GNOME, so the portals it activates find the compositor and pick their GNOME
backend), the AT-SPI bus, PipeWire and WirePlumber (ScreenCast streams are PipeWire nodes), and
`mutter --headless --wayland --no-x11 --virtual-monitor WxH`; it waits on conditions (the
PipeWire socket, mutter's RemoteDesktop and ScreenCast names on the bus, the Wayland socket).
`WaylandSession.close()` ends it all by process group, as the Xvfb desk (eval/desk.py) does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from desktop_agent.eval.desk import (
    ATSPI_LAUNCHER,
    READY_TIMEOUT_S,
    XSession,
    XSessionError,
    _read_line,
    wait_until,
)

WAYLAND_PROGRAMS = ("mutter", "pipewire", "wireplumber", "dbus-daemon", "dbus-send")
#: where Debian's packages put the portal backends' descriptions (gnome.portal, gtk.portal)
PORTALS_DIR = "/usr/share/xdg-desktop-portal/portals"
MUTTER_NAMES = ("org.gnome.Mutter.RemoteDesktop", "org.gnome.Mutter.ScreenCast")


@dataclass
class WaylandSession(XSession):
    """A running headless GNOME session; `display` is its WAYLAND_DISPLAY name, `env` what a
    program needs to live on it (no DISPLAY: there is no XWayland)."""

    runtime_dir: str = ""

    @property
    def env(self) -> dict[str, str]:
        env = {
            "WAYLAND_DISPLAY": self.display,
            "XDG_SESSION_TYPE": "wayland",
            "XDG_CURRENT_DESKTOP": "GNOME",
            "XDG_RUNTIME_DIR": self.runtime_dir,
            "XDG_CONFIG_HOME": os.path.join(self.runtime_dir, "config"),
            "XDG_CACHE_HOME": os.path.join(self.runtime_dir, "cache"),
            "GDK_BACKEND": "wayland",
            "QT_QPA_PLATFORM": "wayland",
        }
        if self.dbus_address:
            env["DBUS_SESSION_BUS_ADDRESS"] = self.dbus_address
        return env

    def child_env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in ("DISPLAY",)}
        env.update(self.env)
        env.update(extra or {})
        return env

    def xdotool(self, *args: str, timeout: float = 20, check: bool = True) -> str:
        raise XSessionError("a Wayland desk has no X server for xdotool")

    def bus_names(self) -> list[str]:
        """The names owned on this session's bus (empty while the bus does not answer)."""
        done = subprocess.run(
            [
                "dbus-send",
                f"--bus={self.dbus_address}",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.ListNames",
            ],
            capture_output=True,
            text=True,
            timeout=5,
            env=self.child_env(),
            check=False,
        )
        return [line.split('"')[1] for line in done.stdout.splitlines() if '"' in line]

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.runtime_dir:
                shutil.rmtree(self.runtime_dir, ignore_errors=True)


def missing_wayland_programs() -> list[str]:
    missing = [name for name in WAYLAND_PROGRAMS if shutil.which(name) is None]
    if not os.path.exists(ATSPI_LAUNCHER):
        missing.append(ATSPI_LAUNCHER)
    return missing


def start_wayland_session(
    width: int = 1280, height: int = 720, *, portal_files: dict[str, str] | None = None
) -> WaylandSession:
    """Start a headless mutter at width x height with D-Bus, AT-SPI, PipeWire and the portals.

    `portal_files`: the portal backends' descriptions (file name: its text) xdg-desktop-portal
    reads instead of Debian's (/usr/share/xdg-desktop-portal/portals: GNOME's and GTK's), for
    a desktop whose portal lacks parts; they go into a private folder named by
    XDG_DESKTOP_PORTAL_DIR, which xdg-desktop-portal 1.16 reads first. None: Debian's."""
    missing = missing_wayland_programs()
    if missing:
        raise XSessionError(
            f"cannot start the Wayland test desk: {', '.join(missing)} not found; run "
            "scripts/bootstrap (it installs mutter pipewire wireplumber xdg-desktop-portal-gnome)"
        )
    runtime = tempfile.mkdtemp(prefix="da-wayland-")
    os.chmod(runtime, 0o700)
    session = WaylandSession(
        display=f"wl-da-{os.getpid()}", width=width, height=height, runtime_dir=runtime
    )
    for folder in ("config", "cache"):
        os.makedirs(os.path.join(runtime, folder), exist_ok=True)
    try:
        _start_bus(session, _portals_dir(runtime, portal_files))
        _start_pipewire(session)
        session.spawn(
            [
                "mutter",
                "--headless",
                "--wayland",
                "--no-x11",
                f"--wayland-display={session.display}",
                "--virtual-monitor",
                f"{width}x{height}",
            ]
        )
        socket = os.path.join(runtime, session.display)
        wait_until(
            lambda: os.path.exists(socket) and set(MUTTER_NAMES) <= set(session.bus_names()),
            timeout=READY_TIMEOUT_S * 2,
            interval=0.05,
            what="mutter's Wayland socket and its RemoteDesktop/ScreenCast services",
        )
    except BaseException:
        session.close()
        raise
    return session


def _portals_dir(runtime: str, portal_files: dict[str, str] | None) -> dict[str, str]:
    """The environment that makes xdg-desktop-portal read `portal_files` (nothing when None)."""
    if portal_files is None:
        return {}
    folder = os.path.join(runtime, "portals")
    os.makedirs(folder)
    for name, text in portal_files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as target:
            target.write(text)
    return {"XDG_DESKTOP_PORTAL_DIR": folder}


def _start_bus(session: WaylandSession, extra_env: dict[str, str]) -> None:
    # the daemon's own environment is what the services it activates (the portals) inherit
    daemon = session.spawn(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE,
        extra_env=extra_env,
    )
    assert daemon.stdout is not None
    session.dbus_address = _read_line(daemon.stdout.fileno(), READY_TIMEOUT_S, "dbus-daemon")
    session.spawn([ATSPI_LAUNCHER, "--launch-immediately"])
    wait_until(
        lambda: "org.a11y.Bus" in session.bus_names(),
        timeout=READY_TIMEOUT_S,
        interval=0.02,
        what="the AT-SPI bus launcher",
    )


def _start_pipewire(session: WaylandSession) -> None:
    session.spawn(["pipewire"])
    socket = os.path.join(session.runtime_dir, "pipewire-0")
    wait_until(
        lambda: os.path.exists(socket), timeout=READY_TIMEOUT_S, interval=0.02, what="PipeWire"
    )
    session.spawn(["wireplumber"])


__all__ = ["WaylandSession", "missing_wayland_programs", "start_wayland_session"]
