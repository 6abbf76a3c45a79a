"""Where the desktop's portal has no ScreenCast, the capture takes the Screenshot portal's way.

A real headless GNOME desk whose xdg-desktop-portal (1.16, the real frontend) is given a
desktop without ScreenCast and RemoteDesktop: its backends' descriptions (XDG_DESKTOP_PORTAL_DIR)
are GTK's and one Screenshot backend. That backend stands in for xdg-desktop-portal-gnome's,
which takes its pictures through gnome-shell's org.gnome.Shell.Screenshot: gnome-shell is not
on this desk (mutter alone; measured: GNOME's backend never answers here). It implements
org.freedesktop.impl.portal.Screenshot as flatpak/xdg-desktop-portal
data/org.freedesktop.impl.portal.Screenshot.xml says (at 094c1ed, lines 69-78: Screenshot(o
handle, s app_id, s parent_window, a{sv} options) -> (u response, a{sv} results); results
"uri s", lines 60-66) and writes a PNG of a known picture; the product reads it through the real
frontend and the file URI, and deletes the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from desktop_agent.desktop.capture import ScreenCapture
from desktop_agent.desktop.doctor import run_doctor
from desktop_agent.desktop.wayland import SCREENSHOT, PortalDesk, PortalScreen
from desktop_agent.eval.desk import XSessionError
from desktop_agent.eval.wayland_desk import PORTALS_DIR, WaylandSession, start_wayland_session
from tests.support.dbus_service import DBusService

BACKEND = "org.freedesktop.impl.portal.desktop.datest"
SIZE = (1280, 720)


def picture() -> Image.Image:
    """A 'screen' no two places of which look alike: red by x, green by y, blue fixed."""
    image = Image.new("RGB", SIZE)
    image.putdata([(x % 256, y % 256, 77) for y in range(SIZE[1]) for x in range(SIZE[0])])
    return image


@pytest.fixture(scope="module")
def shots_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def wayland_session(shots_folder: Path) -> Iterator[WaylandSession]:
    """A headless GNOME desk whose portal offers the Screenshot portal and no ScreenCast."""
    gtk = Path(PORTALS_DIR, "gtk.portal").read_text(encoding="utf-8")
    ours = (
        f"[portal]\nDBusName={BACKEND}\n"
        "Interfaces=org.freedesktop.impl.portal.Screenshot;\nUseIn=gnome\n"
    )
    try:
        session = start_wayland_session(
            *SIZE, portal_files={"gtk.portal": gtk, "datest.portal": ours}
        )
    except (XSessionError, TimeoutError) as error:
        pytest.fail(f"the Wayland tests need a headless GNOME desk: {error}", pytrace=False)
    image = picture()
    taken: list[int] = []

    def screenshot(body: tuple[Any, ...], sender: str) -> tuple[str, tuple[Any, ...]]:
        path = shots_folder / f"Screenshot-{len(taken)}.png"
        image.save(path, compress_level=1)
        taken.append(1)
        return "ua{sv}", (0, {"uri": ("s", path.as_uri())})

    assert session.dbus_address
    backend = DBusService(
        session.dbus_address,
        BACKEND,
        {("org.freedesktop.impl.portal.Screenshot", "Screenshot"): screenshot},
    )
    try:
        yield session
    finally:
        backend.close()
        session.close()


def test_without_screencast_the_capture_reads_the_screenshot_portals_file_and_deletes_it(
    wayland_env: WaylandSession, shots_folder: Path
) -> None:
    items = {item.name: item for item in run_doctor()}
    assert items["capture"].ok and "Screenshot portal" in items["capture"].detail
    assert "no ScreenCast" in items["capture"].detail
    assert not items["input"].ok  # no RemoteDesktop: said, with its fix
    assert items["input"].fix

    desk = PortalDesk()
    capture = ScreenCapture(width=SIZE[0], scaler="pillow", screen=lambda: PortalScreen(desk))
    try:
        # no question on this desk: xdg-desktop-portal 1.16 lets a program outside a sandbox
        # take screenshots (GNOME's backend may ask: docs/wayland-checklist.md check 14)
        shot = capture.grab()
        assert desk.way == SCREENSHOT
        assert shot.size == SIZE
        assert shot.image.tobytes() == picture().tobytes()
        # the portal's file is read and deleted; a second grab takes a second picture
        assert os.listdir(shots_folder) == []
        again = capture.grab()
        assert again.image.getpixel((300, 200)) == (300 % 256, 200, 77)
        assert os.listdir(shots_folder) == []
        # nothing started a RemoteDesktop or ScreenCast session (there is none to start)
        assert not desk.session.started
    finally:
        desk.close()
