"""A private X desktop with several RandR monitors (Xorg + the dummy video driver) for tests.

Xvfb cannot make monitors (`xrandr --setmonitor` does nothing there, and Xinerama hides the
second screen from RandR); Xorg with the dummy driver offers outputs DUMMY0…DUMMY15 whose modes
and places xrandr sets (../shared/ENVIRONMENT.md, "Several monitors without hardware").
`start_monitors_session()` starts it like `desk.start_xsession()` starts Xvfb (its own process
groups, waiting on conditions), places the monitors, and `MonitorsSession.unplug()` turns one
off as a hot-plug does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from desktop_agent.eval.desk import (
    READY_TIMEOUT_S,
    XSession,
    XSessionError,
    bring_up,
    missing_programs,
    start_x_server,
    wait_until,
)

#: the dummy driver's screen: big enough for the layouts below, and its VideoRam holds it
VIRTUAL = (4400, 2200)

_CONFIG = f"""\
Section "Device"
    Identifier "dummy"
    Driver "dummy"
    VideoRam 256000
EndSection
Section "Monitor"
    Identifier "monitor"
    HorizSync 5.0 - 1000.0
    VertRefresh 5.0 - 200.0
EndSection
Section "Screen"
    Identifier "screen"
    Device "dummy"
    Monitor "monitor"
    DefaultDepth 24
    SubSection "Display"
        Depth 24
        Virtual {VIRTUAL[0]} {VIRTUAL[1]}
    EndSubSection
EndSection
"""


@dataclass(frozen=True, slots=True)
class Output:
    """One RandR monitor to set up: the dummy output's name, its mode's size and its place."""

    name: str
    width: int
    height: int
    left: int
    top: int
    primary: bool = False

    @property
    def rect(self) -> tuple[int, int, int, int]:
        return self.left, self.top, self.width, self.height


#: three monitors of different sizes: the primary in the middle, one left of it, one right
#: of it and lower (X's root window starts at 0,0: nothing can be left of or above it)
THREE_MONITORS = (
    Output("DUMMY0", 1920, 1080, 1280, 0, primary=True),
    Output("DUMMY1", 1280, 1024, 0, 0),
    Output("DUMMY2", 1024, 768, 3200, 300),
)


@dataclass
class MonitorsSession(XSession):
    """An XSession on Xorg's dummy driver; `outputs` are the monitors it was given."""

    outputs: tuple[Output, ...] = ()
    workdir: str = ""

    def xrandr(self, *args: str) -> str:
        """`xrandr ARGS` on this desktop; its output. XSessionError (with xrandr's words)."""
        done = subprocess.run(
            ["xrandr", *args],
            env=self.child_env(),
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        if done.returncode != 0:
            raise XSessionError(f"xrandr {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def monitor_rects(self) -> list[tuple[str, tuple[int, int, int, int]]]:
        """`xrandr --listmonitors` as (output name, (left, top, width, height))."""
        found = []
        for line in self.xrandr("--listmonitors").splitlines()[1:]:
            # " 0: +*DUMMY0 1920/508x1080/286+1280+0  DUMMY0"
            parts = line.split()
            geometry, name = parts[2], parts[-1]
            size, left, top = geometry.split("+")
            width, height = (int(side.split("/")[0]) for side in size.split("x"))
            found.append((name, (int(left), int(top), width, height)))
        return found

    def unplug(self, name: str) -> None:
        """Turn output `name` off (as pulling its cable does), once RandR no longer lists it."""
        self.xrandr("--output", name, "--off")
        wait_until(
            lambda: all(found != name for found, _ in self.monitor_rects()),
            timeout=READY_TIMEOUT_S,
            what=f"{name} to go",
        )

    def close(self) -> None:
        super().close()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = ""


def xorg_missing() -> list[str]:
    """What the dummy-driver desk needs and this machine lacks (bootstrap installs them)."""
    missing = [name for name in ("Xorg", "xrandr") if shutil.which(name) is None]
    drivers = ("/usr/lib/xorg/modules/drivers/dummy_drv.so",)
    if not any(os.path.exists(path) for path in drivers):
        missing.append("xserver-xorg-video-dummy")
    return missing


def _modeline(width: int, height: int) -> list[str]:
    """A 60 Hz CVT-like modeline for a size the dummy driver may not list (blanking of 25 %
    across, 4 % down: the driver accepts any timing within the Monitor's wide ranges)."""
    h_total, v_total = width * 5 // 4 // 8 * 8, height + max(3, height // 25)
    clock = h_total * v_total * 60 / 1e6
    return [
        f"{clock:.2f}",
        *map(str, (width, width + 48, width + 160, h_total)),
        *map(str, (height, height + 1, height + 3, v_total)),
        "+hsync",
        "+vsync",
    ]


def _start_xorg(session: MonitorsSession) -> None:
    config = os.path.join(session.workdir, "xorg.conf")
    confdir = os.path.join(session.workdir, "xorg.conf.d")  # empty: no system snippets
    os.makedirs(confdir)
    with open(config, "w", encoding="ascii") as file:
        file.write(_CONFIG)
    log = os.path.join(session.workdir, "Xorg.log")
    argv = ["Xorg", "-noreset", "-nolisten", "tcp", "-config", config, "-configdir", confdir]
    start_x_server(session, [*argv, "-logfile", log], "Xorg")


def place_outputs(session: MonitorsSession, outputs: Sequence[Output]) -> None:
    """Give each output a mode of its size and put it in its place, in one xrandr call."""
    layout: list[str] = []
    for output in outputs:
        mode = f"{output.width}x{output.height}_agent"
        known = session.xrandr()
        if mode not in known:
            session.xrandr("--newmode", mode, *_modeline(output.width, output.height))
        session.xrandr("--addmode", output.name, mode)
        layout += ["--output", output.name, "--mode", mode, "--pos", f"{output.left}x{output.top}"]
        if output.primary:
            layout.append("--primary")
    session.xrandr(*layout)
    wanted = sorted((output.name, output.rect) for output in outputs)
    wait_until(
        lambda: sorted(session.monitor_rects()) == wanted,
        timeout=READY_TIMEOUT_S,
        what="the RandR monitors to be placed",
    )


def start_monitors_session(
    outputs: Sequence[Output] = THREE_MONITORS, *, atspi: bool = True
) -> MonitorsSession:
    """Xorg (dummy driver) with `outputs` placed, openbox, and (atspi=True) D-Bus + AT-SPI.

    XSessionError when Xorg or its dummy driver is missing or Xorg cannot start here.
    """
    missing = xorg_missing() + missing_programs(atspi=atspi)
    missing = [name for name in missing if name != "Xvfb"]
    if missing:
        raise XSessionError(
            f"cannot start the multi-monitor desktop: {', '.join(missing)} not found; "
            "run scripts/bootstrap (it installs xserver-xorg-core xserver-xorg-video-dummy)"
        )
    width = max(output.left + output.width for output in outputs)
    height = max(output.top + output.height for output in outputs)
    session = MonitorsSession(
        display="",
        width=width,
        height=height,
        outputs=tuple(outputs),
        workdir=tempfile.mkdtemp(prefix="monitors-desk-"),
    )

    def start_display() -> None:
        _start_xorg(session)
        place_outputs(session, outputs)

    return bring_up(session, start_display, atspi=atspi)


__all__ = [
    "THREE_MONITORS",
    "MonitorsSession",
    "Output",
    "place_outputs",
    "start_monitors_session",
    "xorg_missing",
]
