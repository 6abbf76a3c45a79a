"""On a Wayland session whose desktop has the GlobalShortcuts portal, the stop is bound through
it, and the portal's Activated signal stops a real run (`desktop-agent run`, a real process)
before any model request or input. The portal is the test's (tests/support/global_shortcuts.py,
on a private session bus): no desktop here has one."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from desktop_agent.desktop.doctor import wayland_doctor
from desktop_agent.desktop.hotkey import PORTAL_SHORTCUT_ID
from desktop_agent.desktop.portal import probe
from tests.e2e.conftest import Cli
from tests.e2e.stopped import assert_stopped_before_any_model_request, start_checked_run
from tests.support.global_shortcuts import GlobalShortcutsPortal, private_session_bus
from tests.support.model_server import ModelServer
from tests.support.xdisplay import wait_until


@pytest.fixture
def shortcuts_portal() -> Iterator[tuple[str, GlobalShortcutsPortal]]:
    with private_session_bus() as address:
        portal = GlobalShortcutsPortal(address)
        try:
            yield address, portal
        finally:
            portal.close()


def test_the_portals_activated_signal_stops_a_run_before_any_model_request_or_input(
    cli: Cli,
    model: Callable[..., ModelServer],
    shortcuts_portal: tuple[str, GlobalShortcutsPortal],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    address, portal = shortcuts_portal
    wayland = {
        "DBUS_SESSION_BUS_ADDRESS": address,
        "XDG_SESSION_TYPE": "wayland",
        "WAYLAND_DISPLAY": "wayland-da-test",
    }
    process, server = start_checked_run(cli, model, env=wayland)
    # the app bound the stop through the portal before its run's first turn
    wait_until(lambda: portal.bound, timeout=30, what="BindShortcuts")
    assert list(portal.bound[0]) == [PORTAL_SHORTCUT_ID]
    assert portal.bound[0][PORTAL_SHORTCUT_ID]["preferred_trigger"] == ("s", "CTRL+ALT+Escape")
    log = cli.data_dir / "desktop-agent.log"
    wait_until(
        lambda: log.exists() and "global stop hotkey ctrl+alt+esc is on" in log.read_text(),
        timeout=10,
        what="the stop armed",
    )

    portal.activate("another-apps-shortcut", session="/org/freedesktop/portal/desktop/x")
    portal.activate(PORTAL_SHORTCUT_ID)
    assert_stopped_before_any_model_request(cli, process, server)
    assert "stop hotkey pressed" in log.read_text()

    # doctor says which path holds the stop
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    hotkey = {item.name: item for item in wayland_doctor(probe())}["hotkey"]
    assert hotkey.ok and "GlobalShortcuts portal v1 holds the stop" in hotkey.detail
