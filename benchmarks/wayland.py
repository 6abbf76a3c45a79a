"""Capture and input cost per turn on the Wayland path (the portal) next to X11's (mss, XTest).

Wayland: a headless GNOME desk (eval/wayland_desk.py, 1280x720) with native l3afpad; the
consent dialog answered by the test rig (tests/support/wayland.py). X11: an Xvfb desk of the
same size with l3afpad. Medians over --runs of:
  * grab: ScreenCapture.grab() at 1280 wide of an unchanged screen (the portal: the newest
    PipeWire frame, read from gst-launch's pipe);
  * grab after input: a key typed, then grab() (the portal waits up to 150 ms for a frame newer
    than the input, pipewire_frames.FRESH_FRAME_WAIT_S);
  * click: a click in the text area (the portal: motion, a 30 ms settle, press, release);
  * key: one character typed.
Wayland without ScreenCast (the Screenshot portal, desktop/portal.PortalScreenshots): grab
only (no input there): the real xdg-desktop-portal frontend, a 1280x720 PNG the backend
writes (the stand-in of tests/wayland/test_screenshot_fallback.py: gnome-shell's own picture
taking is not on this desk and not counted), read, decoded and deleted.

    .venv/bin/python benchmarks/wayland.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_agent.desktop.capture import ScreenCapture  # noqa: E402
from desktop_agent.eval.desk import start_xsession, wait_until  # noqa: E402
from desktop_agent.eval.wayland_desk import start_wayland_session  # noqa: E402
from tests.support.gtk import still_gtk_env  # noqa: E402
from tests.support.wayland import AtspiRig, person_answers  # noqa: E402

SIZE = (1280, 720)
CENTRE = (640, 400)


def median_ms(action: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(capture: ScreenCapture, driver: Any, runs: int) -> dict[str, float]:
    capture.grab()
    driver.click(*CENTRE, "left", 1)

    def after_input() -> None:
        driver.type_char("x")
        capture.grab()

    return {
        "grab": median_ms(capture.grab, runs),
        "grab after input": median_ms(after_input, runs),
        "click": median_ms(lambda: driver.click(*CENTRE, "left", 1), runs),
        "key": median_ms(lambda: driver.type_char("y"), runs),
    }


def wayland(runs: int) -> dict[str, float]:
    from desktop_agent.desktop.wayland import PortalDesk, PortalDriver, PortalScreen

    session = start_wayland_session(*SIZE)
    saved = dict(os.environ)
    try:
        os.environ.pop("DISPLAY", None)
        os.environ.update({k: v for k, v in session.env.items() if k != "XDG_CONFIG_HOME"})
        config = Path(tempfile.mkdtemp(prefix="da-bench-gtk-"))
        editor = session.spawn(["l3afpad"], extra_env=still_gtk_env(config))
        rig = AtspiRig(session)
        desk = PortalDesk()
        try:
            rig.wait_for("application", "l3afpad")
            capture = ScreenCapture(
                width=SIZE[0], scaler="pillow", screen=lambda: PortalScreen(desk)
            )
            with person_answers(rig) as errors:
                capture.grab()
            assert not errors, errors
            wait_until(lambda: rig.find("window", "Remote desktop") is None, timeout=20)
            return measure(capture, PortalDriver(desk), runs)
        finally:
            desk.close()
            rig.close()
            session.stop(editor)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        session.close()


def wayland_screenshots(runs: int) -> dict[str, float]:
    from desktop_agent.desktop.wayland import SCREENSHOT, PortalDesk, PortalScreen
    from desktop_agent.eval.wayland_desk import PORTALS_DIR
    from tests.support.dbus_service import DBusService
    from tests.wayland.test_screenshot_fallback import BACKEND, picture

    gtk = Path(PORTALS_DIR, "gtk.portal").read_text(encoding="utf-8")
    ours = f"[portal]\nDBusName={BACKEND}\nInterfaces=org.freedesktop.impl.portal.Screenshot;\n"
    session = start_wayland_session(
        *SIZE, portal_files={"gtk.portal": gtk, "datest.portal": ours + "UseIn=gnome\n"}
    )
    folder = Path(tempfile.mkdtemp(prefix="da-bench-shots-"))
    image = picture()

    def screenshot(body: Any, sender: str) -> tuple[str, tuple[Any, ...]]:
        path = folder / f"shot-{time.monotonic_ns()}.png"
        image.save(path)  # Pillow's default PNG level, as a desktop writes its PNG
        return "ua{sv}", (0, {"uri": ("s", path.as_uri())})

    assert session.dbus_address
    backend = DBusService(
        session.dbus_address,
        BACKEND,
        {("org.freedesktop.impl.portal.Screenshot", "Screenshot"): screenshot},
    )
    saved = dict(os.environ)
    try:
        os.environ.pop("DISPLAY", None)
        os.environ.update({k: v for k, v in session.env.items() if k != "XDG_CONFIG_HOME"})
        desk = PortalDesk()
        try:
            capture = ScreenCapture(
                width=SIZE[0], scaler="pillow", screen=lambda: PortalScreen(desk)
            )
            capture.grab()
            assert desk.way == SCREENSHOT
            return {"grab": median_ms(capture.grab, runs)}
        finally:
            desk.close()
    finally:
        os.environ.clear()
        os.environ.update(saved)
        backend.close()
        session.close()


def x11(runs: int) -> dict[str, float]:
    from desktop_agent.desktop.input import PyAutoGuiDriver

    session = start_xsession(*SIZE, atspi=False)
    saved = dict(os.environ)
    try:
        os.environ["DISPLAY"] = session.display
        config = Path(tempfile.mkdtemp(prefix="da-bench-gtk-"))
        editor = session.spawn(["l3afpad"], extra_env=still_gtk_env(config))
        try:
            wait_until(
                lambda: session.xdotool(
                    "search", "--onlyvisible", "--class", "l3afpad", check=False
                ),
                timeout=20,
                what="l3afpad's window",
            )
            capture = ScreenCapture(width=SIZE[0], scaler="pillow")
            return measure(capture, PyAutoGuiDriver(), runs)
        finally:
            session.stop(editor)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        session.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    results = {
        "X11 (Xvfb, mss, XTest)": x11(args.runs),
        "Wayland (portal)": wayland(args.runs),
        "Wayland (Screenshot)": wayland_screenshots(args.runs),
    }
    names = list(next(iter(results.values())))
    print(f"{'ms, median of ' + str(args.runs):<24}" + "".join(f"{n:>18}" for n in names))
    for path, figures in results.items():
        print(
            f"{path:<24}"
            + "".join(f"{figures[n]:>18.1f}" if n in figures else f"{'-':>18}" for n in names)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
