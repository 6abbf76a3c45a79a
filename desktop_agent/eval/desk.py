"""A private X desktop (Xvfb + openbox, + D-Bus and the AT-SPI bus) for eval tasks and tests.

`start_xsession()` starts everything in its own process groups, waits on conditions (the
display number Xvfb writes when it accepts clients, the window manager's EWMH check window,
the AT-SPI bus answering), and `XSession.close()` ends it all by process group. The eval's
`--desk private` runs each task on one; the tests' `xsession` fixture (tests/support/xdisplay.py)
shares one per test session.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

ATSPI_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
READY_TIMEOUT_S = 10.0


class XSessionError(RuntimeError):
    """The private desktop could not be started."""


def wait_until(
    condition: Callable[[], Any], *, timeout: float = 5.0, interval: float = 0.01, what: str = ""
) -> Any:
    """Poll `condition` until it returns something truthy; that value, or TimeoutError."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:.1f} s waiting for {what or condition}")
        time.sleep(interval)


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (read from /proc)."""
    tree = _children_map()
    found: list[int] = []
    todo = list(tree.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(tree.get(child, []))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop_process_group(process: subprocess.Popen[Any], *, timeout: float = 3.0) -> None:
    """End a process started with start_new_session=True, its group and its descendants."""
    try:
        _stop(process, timeout)
    finally:
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _stop(process: subprocess.Popen[Any], timeout: float) -> None:
    pids = [process.pid, *descendants(process.pid)]
    groups = set()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            groups.add(os.getpgid(pid))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, sig)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            continue
        try:
            wait_until(lambda: not any(_alive(pid) for pid in pids), timeout=timeout)
            return
        except TimeoutError:
            continue


@dataclass
class XSession:
    """A running private desktop; `env` holds DISPLAY (and DBUS_SESSION_BUS_ADDRESS)."""

    display: str
    width: int
    height: int
    dbus_address: str | None = None
    processes: list[subprocess.Popen[Any]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        env = {"DISPLAY": self.display, "XDG_SESSION_TYPE": "x11"}
        if self.dbus_address:
            env["DBUS_SESSION_BUS_ADDRESS"] = self.dbus_address
        return env

    def child_env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("WAYLAND_DISPLAY", None)
        # a program started on this desk shows on it: not offscreen because the starting
        # process is (tests/gui/conftest.py sets it in os.environ when pytest collects it)
        env.pop("QT_QPA_PLATFORM", None)
        env.update(self.env)
        if not self.dbus_address:
            # no session bus: stop GTK from auto-launching one through dbus-x11
            env["NO_AT_BRIDGE"] = "1"
            env["DBUS_SESSION_BUS_ADDRESS"] = "disabled:"
        env.update(extra or {})
        return env

    def spawn(
        self, argv: Sequence[str], *, extra_env: dict[str, str] | None = None, **kwargs: Any
    ) -> subprocess.Popen[Any]:
        """Start a program on this desktop in its own session; close() ends it."""
        process = subprocess.Popen(
            list(argv),
            env=self.child_env(extra_env),
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=kwargs.pop("stdout", subprocess.DEVNULL),
            stderr=kwargs.pop("stderr", subprocess.DEVNULL),
            **kwargs,
        )
        self.processes.append(process)
        return process

    def xdotool(self, *args: str, timeout: float = 20, check: bool = True) -> str:
        """`xdotool ARGS` on this desktop; its output, stripped."""
        done = subprocess.run(
            ["xdotool", *args],
            env=self.child_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
        )
        return done.stdout.strip()

    def ask(self, *call: str) -> str:
        """`dbus-send --print-reply CALL` on this desktop's session bus: its reply, or "" when
        the call failed."""
        argv = ["dbus-send", f"--bus={self.dbus_address}", "--print-reply", *call]
        result = subprocess.run(
            argv, capture_output=True, text=True, timeout=5, env=self.child_env(), check=False
        )
        return result.stdout if result.returncode == 0 else ""

    def owned(self, name: str) -> bool:
        """Whether a program owns the bus name `name` on this desktop's session bus. Ask this
        before calling a service: a call to an unowned name has the bus start the program its
        service file names (D-Bus activation), a second one beside the one being started."""
        reply = self.ask(
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            f"string:{name}",
        )
        return "boolean true" in reply

    def stop(self, process: subprocess.Popen[Any]) -> None:
        stop_process_group(process)
        if process in self.processes:
            self.processes.remove(process)

    def close(self) -> None:
        for process in reversed(self.processes):
            stop_process_group(process)
        self.processes.clear()


SessionT = TypeVar("SessionT", bound=XSession)


def _read_line(fd: int, timeout: float, what: str) -> str:
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise XSessionError(f"{what} did not answer within {timeout:.0f} s")
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 256)
        if not chunk:
            raise XSessionError(f"{what} exited before it was ready")
        data += chunk
    return data.split(b"\n", 1)[0].decode().strip()


def start_x_server(session: XSession, argv: Sequence[str], what: str) -> None:
    """Start the X server `argv` (its program, then its options) in its own process group;
    `session.display` is the display it took, once it writes the number (-displayfd)."""
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            [argv[0], "-displayfd", str(write_end), *argv[1:]],
            pass_fds=(write_end,),
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        session.processes.append(process)
        os.close(write_end)
        write_end = -1
        session.display = ":" + _read_line(read_end, READY_TIMEOUT_S, what)
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def _wm_running(display_name: str) -> bool:
    from Xlib import X, display

    connection = display.Display(display_name)
    try:
        check = connection.intern_atom("_NET_SUPPORTING_WM_CHECK")
        prop = connection.screen().root.get_full_property(check, X.AnyPropertyType)
        return bool(prop and prop.value)
    finally:
        connection.close()


def _start_dbus_and_atspi(session: XSession) -> None:
    daemon = session.spawn(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE,
    )
    assert daemon.stdout is not None
    session.dbus_address = _read_line(daemon.stdout.fileno(), READY_TIMEOUT_S, "dbus-daemon")
    session.spawn([ATSPI_LAUNCHER, "--launch-immediately"])

    # ask for the name first: a method call to an unowned name would make the bus start a
    # second launcher by D-Bus activation
    wait_until(
        lambda: session.owned("org.a11y.Bus"),
        timeout=READY_TIMEOUT_S,
        interval=0.02,
        what="the AT-SPI bus launcher",
    )
    wait_until(
        lambda: (
            "unix:"
            in session.ask("--dest=org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus.GetAddress")
        ),
        timeout=READY_TIMEOUT_S,
        interval=0.02,
        what="the AT-SPI bus",
    )


def bring_up(session: SessionT, start_display: Callable[[], None], *, atspi: bool) -> SessionT:
    """`session` once `start_display()` gave it a display, (atspi=True) a D-Bus session with
    AT-SPI started and openbox runs; what did start is ended when any of it fails."""
    try:
        start_display()
        if atspi:
            _start_dbus_and_atspi(session)
        session.spawn(["openbox", "--sm-disable"])
        wait_until(lambda: _wm_running(session.display), timeout=READY_TIMEOUT_S, what="openbox")
    except BaseException:
        session.close()
        raise
    return session


def missing_programs(*, atspi: bool = True) -> list[str]:
    wanted = ["Xvfb", "openbox", "xdotool"] + (["dbus-daemon", "dbus-send"] if atspi else [])
    missing = [name for name in wanted if shutil.which(name) is None]
    if atspi and not os.path.exists(ATSPI_LAUNCHER):
        missing.append(ATSPI_LAUNCHER)
    return missing


def start_xsession(width: int = 1920, height: int = 1080, *, atspi: bool = True) -> XSession:
    """Start Xvfb at width x height, openbox, and (atspi=True) a D-Bus session with AT-SPI."""
    missing = missing_programs(atspi=atspi)
    if missing:
        raise XSessionError(
            f"cannot start the test desktop: {', '.join(missing)} not found; "
            "run scripts/bootstrap (it installs xvfb openbox xdotool dbus at-spi2-core)"
        )
    session = XSession(display="", width=width, height=height)
    xvfb = ["Xvfb", "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp", "-noreset"]
    return bring_up(session, lambda: start_x_server(session, xvfb, "Xvfb"), atspi=atspi)


def tray_owned(display_name: str) -> bool:
    """Whether a system tray host (trayer) owns the tray selection of screen 0."""
    from Xlib import X, display

    connection = display.Display(display_name)
    try:
        atom = connection.intern_atom("_NET_SYSTEM_TRAY_S0")
        return bool(connection.get_selection_owner(atom) != X.NONE)
    finally:
        connection.close()


def start_tray(session: XSession, *options: str) -> subprocess.Popen[Any]:
    """trayer at the top right of `session` (plus `options`), once it owns the tray."""
    tray = session.spawn(["trayer", "--edge", "top", "--align", "right", *options])
    wait_until(lambda: tray_owned(session.display), timeout=10, what="the tray host")
    return tray


def close_window(display_name: str, window: int | str) -> None:
    """Ask the window manager to close `window`, as its title bar's close button does.

    A `_NET_CLOSE_WINDOW` request to the root window: openbox answers it with
    WM_DELETE_WINDOW to the client. Unlike a typed alt+F4 it does not depend on which
    window has the keyboard focus at that instant (which, under load, it sometimes had not).
    """
    from Xlib import X, display, protocol

    connection = display.Display(display_name)
    try:
        target = connection.create_resource_object("window", int(window))
        request = protocol.event.ClientMessage(
            window=target,
            client_type=connection.intern_atom("_NET_CLOSE_WINDOW"),
            data=(32, [X.CurrentTime, 2, 0, 0, 0]),  # 2: sent by a pager / the user
        )
        mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
        connection.screen().root.send_event(request, event_mask=mask)
        connection.sync()
    finally:
        connection.close()


def rerun_on_xvfb(flag: str = "--xvfb") -> int:
    """Run this script again (without `flag`) as a Qt app on a private Xvfb + openbox desktop."""
    session = start_xsession(1920, 1080, atspi=False)
    try:
        argv = [arg for arg in sys.argv if arg != flag]
        env = session.child_env({"QT_QPA_PLATFORM": "xcb"})
        return subprocess.run([sys.executable, *argv], env=env, check=False).returncode
    finally:
        session.close()


@dataclass
class _SavedEnv:
    values: dict[str, str | None]

    def restore(self) -> None:
        for key, value in self.values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def use_xsession(session: XSession) -> _SavedEnv:
    """Point this process at `session` (DISPLAY, D-Bus); the returned object restores it."""
    loaded = sys.modules.get("pyautogui")
    if loaded is not None:
        bound = getattr(getattr(loaded, "platformModule", None), "_display", None)
        name = bound.get_display_name() if bound is not None else None
        if name and name != session.display:
            raise XSessionError(
                f"pyautogui was imported for display {name} before the test desktop "
                f"{session.display} started; it would act on the wrong screen"
            )
    keys = ["DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_SESSION_TYPE", "WAYLAND_DISPLAY"]
    saved = _SavedEnv({key: os.environ.get(key) for key in keys})
    os.environ.pop("WAYLAND_DISPLAY", None)
    os.environ.update(session.env)
    if not session.dbus_address:
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = "disabled:"
    return saved


def release_pyautogui() -> None:
    """Close the X connections pyautogui (and mouseinfo) opened at import, and the pipes
    pyscreeze and mouseinfo left open, so the session ends without ResourceWarnings. pyautogui is
    unusable in this process afterwards."""
    for module_name, attribute in (
        ("pyautogui._pyautogui_x11", "_display"),
        ("mouseinfo", "_display"),
    ):
        module = sys.modules.get(module_name)
        connection = getattr(module, attribute, None) if module else None
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close()
    for module_name in ("pyscreeze", "mouseinfo"):
        module = sys.modules.get(module_name)
        which = getattr(module, "whichProc", None) if module else None
        if which is not None:
            for stream in (which.stdout, which.stderr):
                if stream is not None:
                    stream.close()
