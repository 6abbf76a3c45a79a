"""A killed app leaves nothing of the Wayland path behind (issue 34): its gst-launch child
(which holds the portal's PipeWire remote, so the screen cast) and the portal's session with
mutter's RemoteDesktop and ScreenCast sessions under it end with it, though the app ran no
code of its own at the end (SIGKILL)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

import pytest
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

from desktop_agent.eval.desk import wait_until
from desktop_agent.eval.wayland_desk import WaylandSession
from tests.support.wayland import AtspiRig, person_answers

ROOT = Path(__file__).resolve().parents[2]
#: the app's part that matters here: one portal desk, a grab through it (the person's
#: consent, the PipeWire stream, the frame reader), then nothing until it is killed
APP = """
import sys, time
from desktop_agent.desktop.capture import ScreenCapture
from desktop_agent.desktop.wayland import PortalDesk, PortalScreen

desk = PortalDesk()
capture = ScreenCapture(width=640, scaler="pillow", screen=lambda: PortalScreen(desk))
capture.grab()
print(desk.frames().pid, flush=True)
time.sleep(300)
"""


def mutter_sessions(session: WaylandSession) -> list[str]:
    """The RemoteDesktop and ScreenCast session objects mutter has on the desk's bus."""
    assert session.dbus_address
    bus = open_dbus_connection(bus=session.dbus_address)
    found = []
    try:
        for kind in ("RemoteDesktop", "ScreenCast"):
            path = f"/org/gnome/Mutter/{kind}/Session"
            message = new_method_call(
                DBusAddress(
                    path, f"org.gnome.Mutter.{kind}", "org.freedesktop.DBus.Introspectable"
                ),
                "Introspect",
            )
            reply = bus.send_and_get_reply(message, timeout=5)
            if reply.header.message_type.name == "error":
                continue  # no session object at all
            nodes = ElementTree.fromstring(reply.body[0]).findall("node")
            found += [f"{kind}/{node.get('name')}" for node in nodes]
    finally:
        bus.close()
    return found


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper does not)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone before the open (ENOENT) or before the read (ESRCH)
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def program(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()


def children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


@pytest.fixture
def app(wayland_env: WaylandSession) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-c", APP],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def test_killing_the_app_ends_its_frame_reader_and_the_portals_sessions(
    wayland_env: WaylandSession, atspi_rig: AtspiRig, app: subprocess.Popen[str]
) -> None:
    assert app.stdout is not None
    with person_answers(atspi_rig) as errors:
        ready, _, _ = select.select([app.stdout], [], [], 60)
        line = app.stdout.readline() if ready else ""
    assert not errors
    assert line.strip().isdigit(), (line, app.poll())
    started = int(line)  # the frame reader's process: its watchdog, or gst-launch itself
    ours = [started, *children(started)]
    try:
        (gst,) = [pid for pid in ours if program(pid) == "gst-launch-1.0"]
        assert len(mutter_sessions(wayland_env)) == 2  # one RemoteDesktop, one ScreenCast

        os.kill(app.pid, signal.SIGKILL)
        app.wait(timeout=10)

        wait_until(lambda: not alive(gst), timeout=10, what="the gst-launch child ended")
        wait_until(lambda: not alive(started), timeout=10, what="its watchdog ended")
        wait_until(
            lambda: not mutter_sessions(wayland_env),
            timeout=10,
            what="the portal's sessions closed",
        )
    finally:
        for pid in ours:  # old code: the child outlived the app; the test ends it
            if alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
