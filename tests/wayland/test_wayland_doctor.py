"""`doctor` on the headless GNOME desk: the portal backend named, each part's true state."""

from __future__ import annotations

from desktop_agent.desktop.doctor import run_doctor
from desktop_agent.eval.wayland_desk import WaylandSession
from tests.support.wayland import AtspiRig


def test_doctor_on_gnome_wayland_names_the_portal_and_each_parts_state(
    wayland_env: WaylandSession, atspi_rig: AtspiRig
) -> None:
    items = {item.name: item for item in run_doctor()}

    assert list(items) == [
        "display", "capture", "input", "clipboard", "inventory", "hotkey", "takeover",
    ]  # fmt: skip
    display = items["display"]
    assert display.ok and f"Wayland session {wayland_env.display} (GNOME)" in display.detail
    # xdg-desktop-portal 1.16 with GNOME 43's backend (Debian 12)
    assert "RemoteDesktop v1, ScreenCast v4" in display.detail
    assert items["capture"].ok and "asks at each start" in items["capture"].detail
    assert items["input"].ok and "keysyms" in items["input"].detail
    assert "GlobalShortcuts portal: none" in items["hotkey"].detail
    assert "stop-all" in items["hotkey"].fix
    for name in ("clipboard", "hotkey", "takeover"):
        assert not items[name].ok and items[name].fix, name
    # the desk's AT-SPI bus answers: the active window's controls, placed from the capture
    assert items["inventory"].ok and "placed where the window is found" in items["inventory"].detail
    # the doctor read the portal's properties only: no session, so no consent dialog
    assert atspi_rig.find("window", "Remote desktop") is None
