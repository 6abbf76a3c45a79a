"""The newest frame of a PipeWire screen stream, read through GStreamer's pipewiresrc.

No Python PipeWire binding is both packaged and maintained here (PyPI's `pipewire-capture`
ships prebuilt wheels of its own C; python3-gi with GStreamer is Debian's, outside the venv),
so one long-lived `gst-launch-1.0 pipewiresrc fd=FD path=NODE ! videoconvert ! BGRx ! fdsink`
child (Debian's gstreamer1.0-pipewire, -tools, -plugins-base) writes raw BGRx frames of a
known size to a pipe; a reader thread keeps the newest. The portal's PipeWire remote is handed
to the child as the same file descriptor number (pass_fds). Starting the child costs most of a
second once; a frame after that costs a pipe read (docs/wayland.md has the figures).

The compositor sends a frame when the screen changes (damage), so `frame(after=t)` waits,
briefly, for one newer than the last input sent, and otherwise gives the newest it has.

The child must not outlive the app: it holds the portal's PipeWire remote, and with it the
screen cast (GNOME's "sharing" indicator stays while it runs). `close()` ends it, but a
killed app (SIGKILL, a crash) runs no code; and a still screen sends no frame, so a child
writing to a dead pipe would not notice either. So it runs under a small `sh` watchdog
(WATCHDOG) that holds the read end of a pipe whose only writer is this process: when the
process dies the kernel closes that writer, the watchdog's `read` returns, and it kills the
child (tests/wayland/test_portal_cleanup.py). Not PR_SET_PDEATHSIG: it fires when the
*thread* that started the child ends (here a pool's worker), and needs a preexec_fn, which
is not safe in a process with threads.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

FIRST_FRAME_TIMEOUT_S = 10.0
#: how long a grab after an input waits for the frame that shows it (the compositor sends one
#: per change, at most one per refresh): past this, the screen did not change
FRESH_FRAME_WAIT_S = 0.15


#: runs "$@" (the gst-launch command) in the background with stdout and stderr (this
#: process's pipes), lets go of its own copies of them (so the reader sees EOF when the child
#: ends), waits for EOF on stdin, whose only writer is this process, then kills the child
WATCHDOG = '"$@" & child=$!; exec >/dev/null 2>&1; read -r _; kill -KILL "$child"; wait "$child"'


class FrameError(RuntimeError):
    """The stream gives no frames (GStreamer missing, the stream ended)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One BGRx frame and when it arrived (time.monotonic())."""

    bgra: bytes
    width: int
    height: int
    arrived: float


def gst_command(node: int, fd: int, width: int, height: int) -> list[str]:
    source = ["pipewiresrc", f"path={node}", "always-copy=true", "do-timestamp=true"]
    if fd >= 0:
        source.insert(1, f"fd={fd}")
    caps = f"video/x-raw,format=BGRx,width={width},height={height}"
    return [
        "gst-launch-1.0",
        "-q",
        *source,
        "!",
        "videoconvert",
        "!",
        "videoscale",
        "!",
        caps,
        "!",
        "fdsink",
        "fd=1",
        "sync=false",
    ]


class FrameStream:
    """A running pipewiresrc child and the newest frame it wrote."""

    def __init__(self, node: int, fd: int, width: int, height: int) -> None:
        if shutil.which("gst-launch-1.0") is None:
            raise FrameError(
                "gst-launch-1.0 not found: install gstreamer1.0-tools gstreamer1.0-pipewire "
                "gstreamer1.0-plugins-base"
            )
        self.width, self.height = width, height
        self._size = width * height * 4
        self._frame: Frame | None = None
        self._error = ""
        self._changed = threading.Condition()
        self._process = subprocess.Popen(
            ["sh", "-c", WATCHDOG, "pipewire-frames", *gst_command(node, fd, width, height)],
            pass_fds=(fd,) if fd >= 0 else (),
            stdin=subprocess.PIPE,  # never written: its end is the watchdog's "app alive"
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, name="pipewire-frames", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        stdout = self._process.stdout
        while True:
            data = stdout.read(self._size)
            if len(data) < self._size:
                break
            with self._changed:
                self._frame = Frame(data, self.width, self.height, time.monotonic())
                self._changed.notify_all()
        stderr = self._process.stderr.read() if self._process.stderr else b""
        lines = stderr.decode(errors="replace").strip().splitlines()
        with self._changed:
            self._error = f"the screen stream ended: {lines[-1] if lines else 'no reason given'}"
            self._changed.notify_all()

    def frame(self, *, after: float = 0.0, wait: float = FRESH_FRAME_WAIT_S) -> Frame:
        """The newest frame; one that arrived after `after` if it comes within `wait`."""
        with self._changed:
            self._changed.wait_for(
                lambda: self._frame is not None or bool(self._error), FIRST_FRAME_TIMEOUT_S
            )
            if self._frame is None:
                raise FrameError(self._error or "no frame of the screen stream within 10 s")
            if self._frame.arrived <= after:
                self._changed.wait_for(
                    lambda: self._frame is not None and self._frame.arrived > after, wait
                )
            if self._error:
                raise FrameError(self._error)
            return self._frame

    @property
    def pid(self) -> int:
        """The watchdog's process id (its group holds the gst-launch child too)."""
        return self._process.pid

    def close(self) -> None:
        """End the child: its watchdog's stdin closed (the watchdog kills the child and
        waits for it); a watchdog that did not end in time is killed with its group (still
        ours: its leader is not reaped yet)."""
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=3)
        self._reader.join(timeout=5)
        for pipe in (self._process.stdout, self._process.stderr):
            if pipe is not None:
                pipe.close()
