"""`desktop-agent doctor`, desktop part: display, capture, input, clipboard, inventory, hotkey
(and takeover on Wayland, where the backend is the portal)."""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_agent.core.errors import ObservationError

if TYPE_CHECKING:
    from desktop_agent.desktop.portal import PortalParts


@dataclass(frozen=True, slots=True)
class DoctorItem:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def run_doctor(*, hotkey: str = "ctrl+alt+esc", monitor: int = 1) -> list[DoctorItem]:
    """Check what the desktop adapters need; each failing item says how to fix it. A Wayland
    session is checked as its backend (the portal) works: `wayland_doctor`."""
    if sys.platform.startswith("linux"):
        from desktop_agent.desktop.wayland import session_kind

        if session_kind() == "wayland":
            return wayland_doctor()
    display = check_display()
    items = [display]
    if not display.ok:
        skipped = "skipped: no display"
        items += [
            DoctorItem(name, False, skipped, display.fix)
            for name in ("capture", "input", "clipboard", "inventory", "hotkey")
        ]
        return items
    checks: list[tuple[str, Callable[[], DoctorItem]]] = [
        ("capture", lambda: check_capture(monitor)),
        ("input", check_input),
        ("clipboard", check_clipboard),
        ("inventory", check_inventory),
        ("hotkey", lambda: check_hotkey(hotkey)),
    ]
    items.extend(_guarded(name, check) for name, check in checks)
    return items


def _guarded(name: str, check: Callable[[], DoctorItem]) -> DoctorItem:
    try:
        return check()
    except Exception as error:  # noqa: BLE001 - a check must report, never crash the doctor
        return DoctorItem(name, False, f"unexpected error: {error}", "report this as a bug")


def check_display() -> DoctorItem:
    if sys.platform == "win32":
        from desktop_agent.desktop.win32 import enable_dpi_awareness

        return DoctorItem(
            "display", True, f"Windows desktop, DPI awareness: {enable_dpi_awareness()}"
        )
    name = os.environ.get("DISPLAY")
    if not name:
        wayland = (
            " (a Wayland session without XWayland)" if os.environ.get("WAYLAND_DISPLAY") else ""
        )
        return DoctorItem(
            "display",
            False,
            f"no X display: DISPLAY is not set{wayland}",
            "run inside an X11 session (or XWayland), or start Xvfb and export DISPLAY",
        )
    try:
        from Xlib import display

        connection = display.Display(name)
    except Exception as error:  # noqa: BLE001 - Xlib raises several kinds
        return DoctorItem(
            "display",
            False,
            f"cannot open X display {name}: {error}",
            "check DISPLAY and XAUTHORITY",
        )
    try:
        screen = connection.screen()
        detail = f"X11 display {name}, {screen.width_in_pixels}x{screen.height_in_pixels}"
    finally:
        connection.close()
    return DoctorItem("display", True, detail)


def check_capture(monitor: int = 1, runs: int = 5) -> DoctorItem:
    from desktop_agent.desktop.capture import ScreenCapture, encode, thumbnail

    capture = ScreenCapture(monitor=monitor)
    try:
        monitors = capture.monitors()
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            shot = capture.grab()
            encode(shot.image, "jpeg", 80)
            thumbnail(shot.image)
            times.append((time.perf_counter() - started) * 1000)
    except ObservationError as error:
        return DoctorItem("capture", False, str(error), "check the display and the monitor setting")
    finally:
        capture.close()
    chosen = monitors[monitor]
    detail = (
        f"monitor {monitor} of {len(monitors) - 1} ({chosen.width}x{chosen.height} at "
        f"{chosen.left},{chosen.top}) → {shot.size[0]}x{shot.size[1]} JPEG "
        f"in {statistics.median(times):.1f} ms (median of {runs}, {capture.scaler} scaler)"
    )
    return DoctorItem("capture", True, detail)


def check_input() -> DoctorItem:
    from desktop_agent.desktop.input import PyAutoGuiDriver

    fix = "pip install pyautogui, then pip install --force-reinstall --no-deps python-xlib==0.33"
    if sys.platform.startswith("linux"):
        from Xlib import display

        connection = display.Display()
        try:
            xtest = connection.has_extension("XTEST")
        finally:
            connection.close()
        if not xtest:
            return DoctorItem(
                "input",
                False,
                "the X server has no XTEST extension",
                "enable XTEST in the X server",
            )
    try:
        position = PyAutoGuiDriver().position()
    except Exception as error:  # noqa: BLE001 - import or Xauth problems of pyautogui
        return DoctorItem("input", False, f"pyautogui does not work: {error}", fix)
    return DoctorItem("input", True, f"pyautogui, fail-safe on, pointer at {position}")


def check_clipboard() -> DoctorItem:
    if sys.platform == "win32":
        return DoctorItem("clipboard", True, "Windows clipboard (user32)")
    if shutil.which("xclip") is None:
        return DoctorItem(
            "clipboard",
            False,
            "xclip not found: non-ASCII text cannot be typed",
            "apt install xclip",
        )
    return DoctorItem("clipboard", True, "xclip (non-ASCII text is pasted, then restored)")


def check_inventory() -> DoctorItem:
    from desktop_agent.desktop.inventory import WalkLimits, choose_backend

    backend = choose_backend()
    why_not = getattr(backend, "reason", "")
    try:
        backend.thread_init()
        started = time.perf_counter()
        elements, used = backend.snapshot(WalkLimits(deadline=time.monotonic() + 1.0))
        took = (time.perf_counter() - started) * 1000
    finally:
        backend.close()
    detail = f"{backend.name}: {len(elements)} elements in {took:.0f} ms"
    if backend.name == "x11":
        return DoctorItem(
            "inventory",
            True,
            f"{detail}; AT-SPI not used: {why_not}",
            "for the controls inside windows: install at-spi2-core and run "
            "at-spi-bus-launcher in the session",
        )
    if backend.name == "none":
        return DoctorItem("inventory", False, why_not, "the model will see screenshots only")
    if not elements:
        detail += " (no windows open)"
    elif used != backend.name:
        detail += f" (the active window is not accessible; {used} listed the windows)"
    return DoctorItem("inventory", True, detail)


def check_hotkey(combo: str) -> DoctorItem:
    import asyncio

    from desktop_agent.desktop.hotkey import HotkeyUnavailable, hotkey_backend, start_global_hotkey

    loop = asyncio.new_event_loop()
    try:
        handle = start_global_hotkey(combo, lambda: None, loop)
    except HotkeyUnavailable as error:
        return DoctorItem(
            "hotkey",
            False,
            str(error),
            "choose another stop hotkey, or close the program holding it",
        )
    finally:
        loop.close()
    handle.stop()
    return DoctorItem("hotkey", True, f"{combo} is free ({hotkey_backend()})")


# ── Wayland: the xdg-desktop-portal backend ─────────────────────────────────────────────

PORTAL_FIX = (
    "install xdg-desktop-portal with the desktop's backend (GNOME: xdg-desktop-portal-gnome, "
    "KDE: xdg-desktop-portal-kde); wlroots compositors have no RemoteDesktop portal: log in "
    "to an X11 session there"
)
GSTREAMER_FIX = "apt install gstreamer1.0-tools gstreamer1.0-pipewire gstreamer1.0-plugins-base"
STOP_FIX = (
    "`desktop-agent doctor --stop-shortcut` binds Ctrl+Alt+Esc to `desktop-agent stop-all` "
    "(GNOME: a custom shortcut; KDE: a command shortcut, read when Plasma's shortcut service "
    "starts); the tray and the window's Stop work meanwhile"
)


def wayland_doctor(parts: PortalParts | None = None) -> list[DoctorItem]:
    """The Wayland backend's items: display, capture, input, clipboard, inventory, hotkey,
    takeover. `parts` is what the portal offers (read from the session bus when None); the
    doctor never starts a portal session, so no consent dialog opens."""
    where = f"Wayland session {os.environ.get('WAYLAND_DISPLAY', '?')} " + (
        f"({os.environ.get('XDG_CURRENT_DESKTOP') or 'desktop unknown'})"
    )
    from desktop_agent.desktop.portal import PortalParts, PortalUnavailable, probe

    if parts is None:
        try:
            parts = probe()
        except PortalUnavailable as error:
            parts = PortalParts(0, 0, 0, 0)
            where += f"; {error}"
    display = DoctorItem(
        "display",
        bool(parts.remote_version or parts.cast_version or parts.screenshot_version),
        f"{where}: backend xdg-desktop-portal (RemoteDesktop v{parts.remote_version}, "
        f"ScreenCast v{parts.cast_version}, Screenshot v{parts.screenshot_version})",
        "" if parts.remote_version else PORTAL_FIX,
    )
    return [
        display,
        _portal_capture(parts),
        _portal_input(parts),
        DoctorItem(
            "clipboard",
            False,
            "the clipboard is X11's (xclip): text whose characters the keyboard map lacks "
            "cannot be typed through the portal",
            "type such text by hand, or use the X11 session",
        ),
        _wayland_inventory(),
        _wayland_stop(parts),
        DoctorItem(
            "takeover",
            False,
            "the person's own input cannot be told from the agent's on Wayland (no global "
            "input watch): pause_on_user_input does not pause a run",
            "stop a run with the shortcut, the tray or the window",
        ),
    ]


def _wayland_stop(parts: PortalParts) -> DoctorItem:
    """Which path holds the stop on Wayland: the GlobalShortcuts portal where the desktop has
    it (desktop/hotkey.py binds it when the app starts), else the desktop shortcut."""
    if parts.shortcuts_version >= 1:
        return DoctorItem(
            "hotkey",
            True,
            f"the GlobalShortcuts portal v{parts.shortcuts_version} holds the stop: bound when "
            "the app starts (the desktop may ask once and picks the keys; the settings' "
            "combination is its preferred trigger)",
        )
    return DoctorItem(
        "hotkey",
        False,
        "the X key grab sees no Wayland window's keys; GlobalShortcuts portal: none",
        STOP_FIX,
    )


def _wayland_inventory() -> DoctorItem:
    """AT-SPI on Wayland: the active window's controls, placed by finding the window on the
    screenshot (Wayland hides where it is)."""
    from desktop_agent.desktop.inventory.atspi import atspi_status

    usable, why = atspi_status()
    if not usable:
        return DoctorItem(
            "inventory", False, f"no element list: {why}", "the model will see screenshots only"
        )
    return DoctorItem(
        "inventory",
        True,
        "AT-SPI: the active window's controls, their boxes placed where the window is found "
        "on the screenshot (Wayland hides it); where it is not found they are listed "
        "relative to the window, not as targets",
    )


def _portal_capture(parts: PortalParts) -> DoctorItem:
    if parts.screenshot_only:
        return DoctorItem(
            "capture",
            True,
            f"Screenshot portal v{parts.screenshot_version} (the portal has no ScreenCast "
            "here): a whole-screen picture per look, a file the portal writes and the app "
            "deletes — slower than a ScreenCast (benchmarks/wayland.py)",
        )
    if not parts.capture:
        return DoctorItem(
            "capture", False, "the portal offers no ScreenCast of a monitor", PORTAL_FIX
        )
    if shutil.which("gst-launch-1.0") is None:
        return DoctorItem(
            "capture", False, "gst-launch-1.0 not found: the frames cannot be read", GSTREAMER_FIX
        )
    kept = (
        "the consent is kept (a restore token in the keyring)"
        if parts.remote_version >= 2
        else "the desktop asks at each start (RemoteDesktop v1 keeps no consent; portal >= 1.17)"
    )
    fallback = (
        f"; where it cannot start, the Screenshot portal v{parts.screenshot_version}"
        if parts.screenshot_version
        else ""
    )
    return DoctorItem(
        "capture",
        True,
        f"ScreenCast of the monitor the person picks, through PipeWire; {kept}{fallback}",
    )


def _portal_input(parts: PortalParts) -> DoctorItem:
    if not parts.remote_version:
        return DoctorItem(
            "input", False, "the desktop's portal has no RemoteDesktop: no input", PORTAL_FIX
        )
    if not parts.input:
        return DoctorItem(
            "input", False, "the RemoteDesktop portal offers no keyboard and pointer", PORTAL_FIX
        )
    return DoctorItem(
        "input",
        True,
        "RemoteDesktop keyboard and pointer (absolute motion, keys as keysyms); no fail-safe "
        "corner: the pointer cannot be read on Wayland",
    )
