"""Coordinate mapping on synthetic monitor layouts: offsets, negative origins, DPI scales."""

from __future__ import annotations

import pytest

from desktop_agent.core.errors import ObservationError
from desktop_agent.core.models import MonitorArea
from desktop_agent.desktop.geometry import (
    image_size,
    mapping_for,
    order_monitors,
    pick_monitor,
    point_to_screen,
    rect_to_image,
)

# mss layout: [0] is the union of all monitors, then one entry per monitor
SIDE_BY_SIDE_LEFT_SECONDARY = [
    {"left": -2560, "top": -360, "width": 4480, "height": 1440},
    {"left": -2560, "top": -360, "width": 2560, "height": 1440},
    {"left": 0, "top": 0, "width": 1920, "height": 1080, "is_primary": True},
]


def test_primary_monitor_is_numbered_one_whatever_the_platform_order() -> None:
    monitors = order_monitors(SIDE_BY_SIDE_LEFT_SECONDARY)

    assert monitors[1] == MonitorArea(1, 0, 0, 1920, 1080, primary=True)
    assert monitors[2] == MonitorArea(2, -2560, -360, 2560, 1440)
    assert monitors[0] == MonitorArea(0, -2560, -360, 4480, 1440)


def test_without_a_primary_flag_the_monitor_at_the_origin_is_primary() -> None:
    raw = [{k: v for k, v in m.items() if k != "is_primary"} for m in SIDE_BY_SIDE_LEFT_SECONDARY]

    assert order_monitors(raw)[1] == MonitorArea(1, 0, 0, 1920, 1080, primary=True)


def test_a_missing_monitor_is_an_observation_error_naming_the_choices() -> None:
    monitors = order_monitors(SIDE_BY_SIDE_LEFT_SECONDARY)

    with pytest.raises(ObservationError, match="monitor 3 does not exist: this screen has 2"):
        pick_monitor(monitors, 3)


@pytest.mark.parametrize(
    ("monitor", "width", "size"),
    [
        (MonitorArea(1, 0, 0, 1920, 1080), 1280, (1280, 720)),
        (MonitorArea(1, 0, 0, 2560, 1600), 1280, (1280, 800)),
        (MonitorArea(1, 0, 0, 1024, 768), 1280, (1024, 768)),  # never upscaled
        (MonitorArea(1, 0, 0, 3840, 2160), 1000, (1000, 562)),
    ],
)
def test_screenshot_size_keeps_the_aspect_and_never_upscales(
    monitor: MonitorArea, width: int, size: tuple[int, int]
) -> None:
    assert image_size(monitor, width) == size


def test_primary_1920_at_1280_maps_by_one_and_a_half() -> None:
    mapping = mapping_for(MonitorArea(1, 0, 0, 1920, 1080), (1280, 720))

    assert mapping.to_screen(0, 0) == (0, 0)
    assert mapping.to_screen(640, 360) == (960, 540)
    assert mapping.to_screen(1280, 720) == (1920, 1080)


def test_secondary_monitor_left_of_primary_maps_to_negative_coordinates() -> None:
    secondary = order_monitors(SIDE_BY_SIDE_LEFT_SECONDARY)[2]
    mapping = mapping_for(secondary, image_size(secondary, 1280))

    assert image_size(secondary, 1280) == (1280, 720)
    assert mapping.to_screen(0, 0) == (-2560, -360)
    assert mapping.to_screen(640, 360) == (-1280, 360)
    assert point_to_screen(1279, 719, mapping, (1280, 720)) == (-2, 1078)


def test_all_monitors_as_one_image_maps_from_the_union_origin() -> None:
    union = order_monitors(SIDE_BY_SIDE_LEFT_SECONDARY)[0]
    size = image_size(union, 1120)
    mapping = mapping_for(union, size)

    assert size == (1120, 360)
    # the primary's top-left corner is at union offset (2560, 360): 1/4 across, 1/4 down
    assert mapping.to_screen(640, 90) == (0, 0)


def test_dpi_unaware_input_at_150_percent_divides_physical_pixels() -> None:
    # a 4K monitor at 150 %: capture is physical, input coordinates of a DPI-unaware
    # process are logical (2560x1440)
    monitor = MonitorArea(1, 0, 0, 3840, 2160)
    size = image_size(monitor, 1280)
    mapping = mapping_for(monitor, size, input_scale=1.5)

    assert mapping.scale_x == pytest.approx(2.0)
    assert mapping.to_screen(640, 360) == (1280, 720)
    assert mapping.to_screen(1280, 720) == (2560, 1440)


def test_dpi_aware_secondary_at_125_percent_above_the_primary() -> None:
    monitor = MonitorArea(1, -400, -1350, 2400, 1350)
    mapping = mapping_for(monitor, image_size(monitor, 1280))

    assert mapping.to_screen(0, 0) == (-400, -1350)
    assert mapping.to_screen(1280, 720) == (2000, 0)


def test_element_rectangle_maps_into_screenshot_pixels_and_back() -> None:
    mapping = mapping_for(MonitorArea(1, 0, 0, 1920, 1080), (1280, 720))

    box = rect_to_image((660, 347, 39, 25), mapping, (1280, 720))

    # 660/1.5 = 440 .. 699/1.5 = 466; 347/1.5 = 231.3 .. 372/1.5 = 248: outward to whole pixels
    assert box == (440, 231, 26, 17)


def test_rectangle_on_another_monitor_is_dropped_and_a_straddling_one_clipped() -> None:
    primary = MonitorArea(1, 0, 0, 1920, 1080)
    mapping = mapping_for(primary, (1280, 720))

    assert rect_to_image((-800, 100, 400, 300), mapping, (1280, 720)) is None
    assert rect_to_image((-300, 0, 600, 150), mapping, (1280, 720)) == (0, 0, 200, 100)
    assert rect_to_image((100, 100, 0, 20), mapping, (1280, 720)) is None


def test_a_point_aims_at_the_centre_of_the_screen_pixels_it_covers() -> None:
    mapping = mapping_for(MonitorArea(1, 100, 50, 1920, 1080), (1280, 720))

    # screenshot pixel 1 covers screen pixels 1.5-3.0 (offset 100): centre 102.25 → 102
    assert point_to_screen(1, 1, mapping) == (102, 52)
    assert point_to_screen(0, 0, mapping) == (100, 50)


def test_a_point_outside_the_screenshot_is_refused_with_its_coordinates() -> None:
    mapping = mapping_for(MonitorArea(1, 0, 0, 1920, 1080), (1280, 720))

    with pytest.raises(ValueError, match=r"point \(1280, 10\) is outside the 1280x720 screenshot"):
        point_to_screen(1280, 10, mapping, (1280, 720))


def test_every_screenshot_pixel_maps_onto_the_screen_pixels_it_shows() -> None:
    monitor = MonitorArea(1, -1366, 200, 1366, 768)
    size = image_size(monitor, 1280)
    mapping = mapping_for(monitor, size)

    for x in range(0, size[0], 7):
        for y in range(0, size[1], 11):
            sx, sy = point_to_screen(x, y, mapping, size)
            # the centre of the screen pixel hit lies in the area screenshot pixel (x, y)
            # was scaled from
            assert int((sx + 0.5 - monitor.left) / mapping.scale_x) == x
            assert int((sy + 0.5 - monitor.top) / mapping.scale_y) == y
