"""On a Wayland session whose desktop has the GlobalShortcuts portal, the stop is bound through
it, and the portal's Activated signal stops a real run (`desktop-agent run`, a real process)
before any model request or input. The portal is the test's (tests/support/global_shortcuts.py,
on a private session bus): no desktop here has one."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from desktop_agent.desktop.doctor import wayland_doctor
from desktop_agent.desktop.hotkey import PORTAL_SHORTCUT_ID
from desktop_agent.desktop.portal import probe
from tests.e2e.conftest import Cli, json_lines
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
    # the model server never answers its listing: the run is still being checked
    server = model(script=[], hang_checks=True)
    wayland = {
        "DBUS_SESSION_BUS_ADDRESS": address,
        "XDG_SESSION_TYPE": "wayland",
        "WAYLAND_DISPLAY": "wayland-da-test",
    }
    process = cli.start_run("open the editor", server, "--approve", "all", env=wayland)
    wait_until(
        lambda: server.models_requests or process.poll() is not None,
        timeout=30,
        what="the model check",
    )
    assert process.poll() is None, process.communicate()
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
    out, err = process.communicate(timeout=30)

    assert process.returncode == 2, err
    events = json_lines(out)
    assert [e["type"] for e in events] == ["run_started", "run_finished"]
    final = events[-1]["run"]
    assert (final["status"], final["stop_reason"]) == ("stopped", "user_stop")
    assert final["step_count"] == 0  # no screenshot, no decision, no input
    assert server.requests == [], "no chat request after the stop"
    stored = json.loads(cli.call("show", final["id"], "--json").stdout.splitlines()[-1])
    assert stored["run"]["status"] == "stopped"
    assert "stop hotkey pressed" in log.read_text()

    # doctor says which path holds the stop
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    hotkey = {item.name: item for item in wayland_doctor(probe())}["hotkey"]
    assert hotkey.ok and "GlobalShortcuts portal v1 holds the stop" in hotkey.detail
