"""The tray controller (actions, state icons, no-tray path) and the panel shown while acting."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSystemTrayIcon

from desktop_agent.ui.acting_panel import ActingPanel
from desktop_agent.ui.tray import UNAVAILABLE_MESSAGE, TrayController

pytestmark = [pytest.mark.gui]


@pytest.fixture
def tray(qapp: Any) -> Iterator[TrayController]:
    controller = TrayController()
    yield controller
    controller.dispose()


# ── tray ────────────────────────────────────────────────────────────────────


def test_offscreen_has_no_tray_and_says_so_once(
    qapp: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="desktop_agent.ui.tray"):
        controller = TrayController()
        controller.set_state("running")
        controller.notify("Run finished", "completed in 4 steps")  # a no-op, not an error
        controller.show()
    assert QSystemTrayIcon.isSystemTrayAvailable() is False
    assert controller.available is False
    assert controller.visible is False
    assert [r.getMessage() for r in caplog.records].count(UNAVAILABLE_MESSAGE) == 1
    controller.dispose()


def test_menu_holds_show_pause_stop_all_and_quit(tray: TrayController) -> None:
    texts = [action.text() for action in tray.menu.actions() if not action.isSeparator()]
    assert texts == ["&Show Desktop Agent", "&Pause", "S&top all runs", "&Quit"]


def test_show_stop_all_and_quit_actions_emit_their_signals(
    tray: TrayController, qtbot: Any
) -> None:
    with qtbot.waitSignal(tray.show_requested, timeout=1000):
        tray.show_action.trigger()
    with qtbot.waitSignal(tray.stop_all_requested, timeout=1000):
        tray.stop_all_action.trigger()
    with qtbot.waitSignal(tray.quit_requested, timeout=1000):
        tray.quit_action.trigger()


def test_pause_action_asks_to_pause_while_running_and_to_resume_while_paused(
    tray: TrayController, qtbot: Any
) -> None:
    tray.set_state("running")
    with qtbot.waitSignal(tray.pause_toggled, timeout=1000) as paused:
        tray.pause_action.trigger()
    assert paused.args == [True]
    tray.set_state("paused")
    assert tray.pause_action.text() == "&Resume"
    with qtbot.waitSignal(tray.pause_toggled, timeout=1000) as resumed:
        tray.pause_action.trigger()
    assert resumed.args == [False]


def test_pause_action_is_disabled_with_nothing_running(tray: TrayController, qtbot: Any) -> None:
    tray.set_state("idle")
    assert not tray.pause_action.isEnabled()
    with qtbot.assertNotEmitted(tray.pause_toggled, wait=0):
        tray.pause_action.trigger()


def test_clicking_the_tray_icon_asks_to_show_the_window(tray: TrayController, qtbot: Any) -> None:
    with qtbot.waitSignal(tray.show_requested, timeout=1000):
        tray.on_tray_activated(QSystemTrayIcon.ActivationReason.Trigger)
    with qtbot.assertNotEmitted(tray.show_requested, wait=0):
        tray.on_tray_activated(QSystemTrayIcon.ActivationReason.Context)


def test_each_state_has_its_own_icon(tray: TrayController) -> None:
    images = {}
    for state in ("idle", "running", "paused", "failed"):
        tray.set_state(state)
        assert tray.state == state
        images[state] = tray.icon().pixmap(32, 32).toImage()
    assert len({image.cacheKey() for image in images.values()}) == 4
    states = list(images)
    for i, first in enumerate(states):
        for second in states[i + 1 :]:
            assert images[first] != images[second], f"{first} looks like {second}"
    centre_colours = {s: images[s].pixelColor(4, 16).name() for s in states}  # the disc's rim
    assert len(set(centre_colours.values())) == 4


def test_unknown_state_is_refused_with_its_name(tray: TrayController) -> None:
    with pytest.raises(ValueError, match="'busy'"):
        tray.set_state("busy")


def test_when_a_tray_is_available_the_icon_follows_the_state(qapp: Any) -> None:
    # a real tray needs a tray host (see the desktop test); here the QSystemTrayIcon is real
    controller = TrayController(available=True)
    try:
        icon = controller._tray
        assert icon is not None
        controller.set_state("failed")
        assert icon.icon().cacheKey() == controller.icon().cacheKey()
        assert "failed" in icon.toolTip()
        assert icon.contextMenu() is controller.menu
    finally:
        controller.dispose()


# ── acting panel ────────────────────────────────────────────────────────────


@pytest.fixture
def panel(qtbot: Any) -> ActingPanel:
    widget = ActingPanel()
    qtbot.addWidget(widget)
    return widget


def test_panel_shows_goal_and_step_on_top_without_taking_focus(
    panel: ActingPanel, qtbot: Any
) -> None:
    panel.show_for("Write hello in the editor and save it")
    qtbot.waitExposed(panel)
    assert panel.goal_label.text() == "Write hello in the editor and save it"
    assert panel.step_label.text() == "Starting…"
    panel.set_step("3/20 click (640, 512)")
    assert panel.step_label.text() == "3/20 click (640, 512)"
    flags = panel.windowFlags()
    for flag in (
        Qt.WindowType.WindowStaysOnTopHint,
        Qt.WindowType.FramelessWindowHint,
        Qt.WindowType.WindowDoesNotAcceptFocus,
    ):
        assert flags & flag
    assert flags & Qt.WindowType.Tool == Qt.WindowType.Tool
    assert panel.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
    panel.hide()
    assert not panel.isVisible()
    assert panel.geometry_in_screen() is None


def test_panel_elides_a_long_goal_and_keeps_it_as_tooltip(panel: ActingPanel) -> None:
    goal = "Open the editor and " + "type a very long sentence " * 20
    panel.show_for(goal)
    assert panel.goal_label.text().endswith("…")
    assert len(panel.goal_label.text()) < len(goal)
    assert panel.goal_label.toolTip() == goal
    assert panel.goal == goal


def test_panel_sits_small_in_the_top_right_corner(panel: ActingPanel, qtbot: Any) -> None:
    panel.show_for("Save the file")
    qtbot.waitExposed(panel)
    area = QGuiApplication.primaryScreen().availableGeometry()
    geometry = panel.geometry_in_screen()
    assert geometry is not None  # shown
    left, top, width, height = geometry
    ratio = panel.screen().devicePixelRatio()
    assert width == round(ActingPanel.WIDTH * ratio)
    assert height < area.height() / 4
    assert abs((left + width) / ratio - (area.right() + 1 - ActingPanel.MARGIN)) <= 1
    assert abs(top / ratio - (area.top() + ActingPanel.MARGIN)) <= 1


def test_stop_button_emits_stop_requested_once_until_shown_again(
    panel: ActingPanel, qtbot: Any
) -> None:
    panel.show_for("Save the file")
    qtbot.waitExposed(panel)
    with qtbot.waitSignal(panel.stop_requested, timeout=1000):
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    assert not panel.stop_button.isEnabled()
    assert panel.stop_button.text() == "Stopping…"
    panel.show_for("Next goal")
    assert panel.stop_button.isEnabled()
    with qtbot.waitSignal(panel.stop_requested, timeout=1000):
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)


def test_the_panel_and_the_tray_hold_their_states_as_enums(qtbot: Any) -> None:
    from desktop_agent.ui.run_on_show import PanelState
    from desktop_agent.ui.runs_state import RunsState, TrayState
    from desktop_agent.ui.task_panel import TaskPanel

    panel = TaskPanel()
    qtbot.addWidget(panel)
    panel.set_state("paused")
    assert panel.state is PanelState.PAUSED and panel.pause_button.text() == "&Resume"
    with pytest.raises(ValueError, match="unknown panel state 'sleeping'"):
        panel.set_state("sleeping")
    assert RunsState().tray_state is TrayState.IDLE
