"""Finding a routine's target again, number for number (mutants of core/targets.py that lived)."""

from __future__ import annotations

import pytest

from desktop_agent.core.models import Element, ElementRef
from desktop_agent.core.targets import Found, _distance, element_ref, find_again, relocate
from tests.fakes import make_observation

WAS = ElementRef("point", "button", "OK", "Editor", (140, 90, 20, 20), (100, 50, 400, 300))
#: the window moved by (200, 100) and doubled in size
NOW = Element(1, "window", "Editor", (300, 150, 800, 600), focused=True)


def at(x: int, y: int) -> Element:
    """A 20 x 20 OK button whose centre is at (x, y)."""
    return Element(2, "button", "OK", (x - 10, y - 10, 20, 20))


def test_without_a_window_the_distance_is_between_the_centres() -> None:
    # the centre was at (150, 100); now at (175, 145)
    no_window_box = ElementRef("point", "button", "OK", "Editor", WAS.box, None)
    assert _distance(no_window_box, at(175, 145), NOW) == 70.0
    assert _distance(WAS, at(175, 145), None) == 70.0


def test_in_a_resized_window_a_control_kept_at_its_offset_is_near() -> None:
    # it was 50, 50 into its window; now 53, 57 in: 10 by offset, 90 by fraction
    assert _distance(WAS, at(353, 207), NOW) == 10.0


def test_in_a_resized_window_a_control_kept_at_its_fraction_is_near() -> None:
    # it was 1/8, 1/6 into its window; now 103/800, 107/600 in: 110 by offset, 10 by fraction
    assert _distance(WAS, at(403, 257), NOW) == pytest.approx(10.0)


def test_a_point_keeps_its_place_in_a_moved_window() -> None:
    ref = ElementRef("window", "window", "Editor", "Editor", (100, 50, 400, 300), None)
    moved = relocate({"x": 950, "y": 60, "to_x": 600, "to_y": 500}, ref, Found(NOW, None))
    # moved by (200, 100); not kept inside the window: only a point on a control is
    assert moved == {"x": 1150, "y": 160, "to_x": 800, "to_y": 600}


def test_a_point_on_a_control_stays_inside_it_when_it_shrank() -> None:
    ref = ElementRef("point", "button", "OK", "Editor", (140, 90, 40, 40), None)
    found = Found(NOW, Element(2, "button", "OK", (340, 190, 10, 10)))
    # moved by (200, 100) to (375, 275), then kept on the button's last pixel
    assert relocate({"x": 175, "y": 175}, ref, found) == {"x": 349, "y": 199}
    # and on its first one from the other side
    assert relocate({"x": 100, "y": 50}, ref, found) == {"x": 340, "y": 190}


def test_only_a_point_or_window_reference_moves_a_point() -> None:
    focus = ElementRef("focus", "text", "Body", "Editor", (140, 90, 40, 40), None)
    found = Found(NOW, Element(2, "text", "Body", (340, 190, 10, 10)))
    assert relocate({"x": 150, "y": 100}, focus, found) == {"x": 150, "y": 100}


def test_a_drag_end_without_both_coordinates_is_left_as_it_is() -> None:
    ref = ElementRef("window", "window", "Editor", "Editor", (100, 50, 400, 300), None)
    moved = relocate({"x": 150, "y": 60, "to_x": 600}, ref, Found(NOW, None))
    assert moved == {"x": 350, "y": 160, "to_x": 600}


def test_a_step_on_a_window_of_the_list_acts_on_that_window_where_it_is_now() -> None:
    # red team: a step taught on a window element (click or focus_window {element: 2}) is
    # found as its window; its element id was kept as taught, and here 2 is another element
    # (an "Erase" button), which a routine granted click would have pressed unasked
    taught = make_observation([Element(1, "button", "Save", (10, 10, 40, 20)), EDITOR_AT_2])
    ref = element_ref("click", {"element": 2}, taught)
    assert ref is not None and ref.how == "window"
    now = make_observation([EDITOR, Element(2, "button", "Erase", (10, 10, 40, 20))])
    found = find_again(ref, now, same_window=True)

    assert found == Found(EDITOR, None)
    assert relocate({"element": 2}, ref, found) == {"element": 1}


def test_the_centre_of_a_box_is_whole_and_takes_width_and_height_apart() -> None:
    unwindowed = ElementRef("point", "button", "OK", "", (140, 90, 21, 21), None)
    assert _distance(unwindowed, Element(2, "button", "OK", (140, 90, 20, 20)), None) == 0.0
    wide = ElementRef("point", "button", "OK", "", (140, 90, 40, 20), None)
    assert _distance(wide, Element(2, "button", "OK", (150, 80, 20, 40)), None) == 0.0


EDITOR = Element(1, "window", "notes.txt - L3afpad", (0, 0, 800, 600), focused=True)
OTHER_FILE = Element(1, "window", "todo.txt - L3afpad", (0, 0, 800, 600), focused=True)
EDITOR_AT_2 = Element(2, "window", EDITOR.name, EDITOR.box, focused=True)


def test_a_window_reference_is_found_as_its_window() -> None:
    ref = ElementRef("window", "window", EDITOR.name, EDITOR.name, EDITOR.box, EDITOR.box)
    assert find_again(ref, make_observation([EDITOR])) == Found(EDITOR, None)


def test_why_a_step_nobody_is_asked_about_is_not_played_is_said_in_full() -> None:
    nowhere = ElementRef("point", "button", "OK", "", (0, 0, 10, 10), None)
    assert find_again(nowhere, make_observation([EDITOR]), same_window=True) == (
        "no window was active when it was taught, and nobody is asked about it"
    )
    taught = ElementRef("point", "button", "OK", EDITOR.name, (0, 0, 10, 10), EDITOR.box)
    assert find_again(taught, make_observation([OTHER_FILE]), same_window=True) == (
        'the active window is "todo.txt - L3afpad", not "notes.txt - L3afpad" (the same '
        "program; a step nobody is asked about acts only in the window it was taught in)"
    )


def test_a_missing_control_of_no_window_names_no_window() -> None:
    nowhere = ElementRef("point", "button", "OK", "", (0, 0, 10, 10), None)
    assert find_again(nowhere, make_observation([])) == 'no button "OK"'


def test_of_two_like_controls_the_one_at_its_old_place_in_the_moved_window_is_found() -> None:
    # the window moved by (200, 100); the OK button was 50, 50 into it
    ref = ElementRef("point", "button", "OK", EDITOR.name, (140, 90, 20, 20), (100, 50, 400, 300))
    moved = Element(1, "window", EDITOR.name, (300, 150, 400, 300), focused=True)
    in_place = Element(2, "button", "OK", (340, 190, 20, 20))  # 50, 50 into the window
    on_the_old_spot = Element(3, "button", "OK", (140, 90, 20, 20))  # where it was on screen
    screen = make_observation([moved, on_the_old_spot, in_place])
    assert find_again(ref, screen) == Found(moved, in_place)


def test_a_window_grown_from_one_pixel_keeps_a_control_at_its_fraction() -> None:
    # a 1 x 1 window whose control's centre was at its far corner (fraction 1, 1)
    ref = ElementRef("point", "button", "OK", "Editor", (91, 41, 20, 20), (100, 50, 1, 1))
    grown = Element(1, "window", "Editor", (300, 150, 800, 600), focused=True)
    assert _distance(ref, at(1100, 750), grown) == 0.0  # at the grown window's far corner
    # and a window shrunk to one pixel: the far corner of the old window, the new one's
    was = ElementRef("point", "button", "OK", "Editor", (890, 640, 20, 20), (100, 50, 800, 600))
    shrunk = Element(1, "window", "Editor", (300, 150, 1, 1), focused=True)
    assert _distance(was, at(301, 151), shrunk) == 0.0


WINDOW = Element(1, "window", "Editor", (100, 50, 400, 300), focused=True)
BUTTON = Element(2, "button", "OK", (140, 90, 20, 20))


@pytest.mark.parametrize(
    ("x", "y", "role"),
    [
        (140, 90, "button"),  # the button's first pixel
        (159, 109, "button"),  # its last
        (160, 100, "window"),  # one right of it
        (150, 110, "window"),  # one below it
        (139, 100, "window"),  # one left of it
        (150, 89, "window"),  # one above it
    ],
)
def test_a_point_names_the_control_whose_box_holds_it_edge_pixels_included(
    x: int, y: int, role: str
) -> None:
    ref = element_ref("click", {"x": x, "y": y}, make_observation([WINDOW, BUTTON]))
    assert ref is not None and ref.role == role


def test_a_point_in_no_box_in_line_with_a_control_names_no_control() -> None:
    # in the button's column but below the window: in no box at all
    lone = make_observation([BUTTON])
    assert element_ref("click", {"x": 150, "y": 500}, lone) is None
    assert element_ref("click", {"x": 600, "y": 100}, lone) is None


def test_of_two_controls_under_a_point_the_smaller_by_area_is_named() -> None:
    bar = Element(3, "tool bar", "Tools", (140, 90, 100, 10))  # area 1000, height 10
    tall = Element(4, "button", "Go", (140, 90, 20, 20))  # area 400, height 20
    ref = element_ref("click", {"x": 145, "y": 95}, make_observation([WINDOW, bar, tall]))
    assert ref is not None and ref.name == "Go"


def test_a_point_without_its_y_is_read_on_the_top_row() -> None:
    top = Element(3, "button", "Menu", (140, 0, 20, 1))  # only row 0
    ref = element_ref("click", {"x": 145}, make_observation([top]))
    assert ref is not None and ref.name == "Menu"
    # the validated call's values name every field: a y not given is None there
    ref = element_ref("scroll", {"amount": -3, "x": 145, "y": None}, make_observation([top]))
    assert ref is not None and ref.name == "Menu"


def test_a_value_set_without_an_element_goes_to_the_focused_control() -> None:
    field = Element(3, "text", "Name", (140, 90, 100, 20), focused=True)
    ref = element_ref("set_value", {"value": "x"}, make_observation([WINDOW, field]))
    assert ref == ElementRef("focus", "text", "Name", "Editor", field.box, WINDOW.box)


def test_a_point_on_the_window_alone_refers_to_the_window_in_full() -> None:
    ref = element_ref("click", {"x": 400, "y": 300}, make_observation([WINDOW, BUTTON]))
    assert ref == ElementRef("window", "window", "Editor", "Editor", WINDOW.box, WINDOW.box)


def test_a_control_with_no_active_window_is_in_no_window() -> None:
    ref = element_ref("click", {"x": 150, "y": 100}, make_observation([BUTTON]))
    assert ref == ElementRef("point", "button", "OK", "", BUTTON.box, None)
