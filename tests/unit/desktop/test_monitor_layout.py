"""monitor = auto without a screen: the setting's values, elements placed on their monitors,
and the prompt's account of the monitors."""

from __future__ import annotations

import pytest

from desktop_agent.core.models import MonitorArea, Observation, ScreenLayout, parse_monitor
from desktop_agent.desktop.geometry import layout_of, mapping_for, monitor_at
from desktop_agent.desktop.inventory import RawElement, place_elements, to_elements
from desktop_agent.planner.prompt import observation_text
from desktop_agent.settings import Settings

#: [0] the union, [1] the primary, then a monitor left of it (Windows: negative origin)
MONITORS = [
    MonitorArea(0, -1280, 0, 3200, 1080),
    MonitorArea(1, 0, 0, 1920, 1080, primary=True),
    MonitorArea(2, -1280, 56, 1280, 1024),
]


def test_auto_is_the_default_and_0_still_means_all() -> None:
    assert Settings().monitor == "auto"
    assert Settings(monitor=0).monitor == "all"
    assert Settings(monitor="2").monitor == 2  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="monitor must be auto, all or a monitor number"):
        parse_monitor("left")


def test_auto_picks_the_monitor_holding_most_of_the_active_window() -> None:
    straddling = (-300, 100, 400, 300)  # 300 px on the left monitor, 100 on the primary
    assert monitor_at(MONITORS, straddling) == 2
    assert monitor_at(MONITORS, (5000, 5000, 1, 1)) == 1  # off every monitor: the primary
    assert monitor_at(MONITORS, None) == 1


def test_elements_of_other_monitors_are_listed_apart_with_their_monitor() -> None:
    layout = layout_of(MONITORS, 2)
    mapping = mapping_for(MONITORS[2], (1280, 1024))
    raw = [
        RawElement("window", "Editor", (-1200, 100, 600, 400), focused=True),
        RawElement("window", "Mail", (100, 100, 800, 600)),
        RawElement("window", "desktop-agent", (200, 200, 300, 300), own=True),
    ]
    listed, _ = to_elements(raw, mapping, (1280, 1024))
    shown, elsewhere = place_elements(raw, listed, mapping, (1280, 1024), layout)

    assert [(e.id, e.name, e.monitor, e.box) for e in shown] == [
        (1, "Editor", 2, (80, 44, 600, 400))
    ]
    # the app's own window is never listed, wherever it is
    assert [(e.id, e.name, e.monitor) for e in elsewhere] == [(2, "Mail", 1)]


def test_the_prompt_says_which_monitor_is_shown_and_lists_the_others() -> None:
    layout = layout_of(MONITORS, 2)
    mail = RawElement("window", "Mail", (100, 100, 80, 60))
    mapping = mapping_for(MONITORS[2], (1280, 1024))
    _, elsewhere = place_elements([mail], (), mapping, (1280, 1024), layout)
    observation = Observation(b"", "image/png", 1280, 1024, layout=layout, elsewhere=elsewhere)
    text = observation_text(observation)

    assert "The image shows monitor 2, 1280x1024 at -1280,56" in text
    assert "monitor 1 (the primary), 1920x1080 at 0,0" in text
    assert '[1] window "Mail" on monitor 1' in text
    single = Observation(
        b"", "image/png", 1920, 1080,
        layout=ScreenLayout(MonitorArea(1, 0, 0, 1920, 1080, True),
                            (MonitorArea(1, 0, 0, 1920, 1080, True),)),
    )  # fmt: skip
    assert "monitor" not in observation_text(single)
