"""Own windows and grants, case by case (mutants of core/own_windows.py, core/permissions.py)."""

from __future__ import annotations

from desktop_agent.core.models import Element, Observation, Policy, Risk
from desktop_agent.core.own_windows import OWN_WINDOW_ROLE, own_window_refusal
from desktop_agent.core.permissions import Permissions
from desktop_agent.mcp.gate import SessionGrants
from tests.fakes import make_observation

SAVE = Element(2, "button", "Save", (1120, 20, 60, 30))
PANEL = Element(0, "window", "Desktop Agent — Settings", (1100, 0, 180, 80))
FOCUSED_PANEL = Element(0, "window", "Desktop Agent — Settings", (1100, 0, 180, 80), focused=True)


def screen(*own: Element) -> Observation:
    return make_observation([SAVE]).with_(own_windows=own)


def test_focusing_a_window_by_its_element_is_not_a_title_of_the_app() -> None:
    assert own_window_refusal("focus_window", {"title": None, "element": 2}, screen(PANEL)) == ""


def test_a_title_that_matches_an_own_window_only_once_folded_is_refused() -> None:
    # "Sеttings" with a Cyrillic е: not in the window's name as typed, but the same word folded
    refusal = own_window_refusal("focus_window", {"title": "S\u0435ttings"}, screen(PANEL))
    assert "names the app's own window" in refusal


def test_an_element_pressed_through_the_accessibility_api_has_no_point() -> None:
    # the Save button's centre lies under the app's panel, but invoke sends no pointer event
    assert own_window_refusal("invoke", {"element": 2}, screen(PANEL)) == ""
    assert own_window_refusal("set_value", {"element": 2, "text": "x"}, screen(PANEL)) == ""
    assert own_window_refusal("wait", {"seconds": 1}, screen(PANEL)) == ""


def test_a_pointer_call_without_both_coordinates_has_no_point_of_them() -> None:
    assert own_window_refusal("click", {"x": 1150, "y": None}, screen(PANEL)) == ""
    assert own_window_refusal("click", {"x": None, "y": 40}, screen(PANEL)) == ""


def test_each_refusal_says_why_in_full() -> None:
    keys_now = own_window_refusal("type_text", {"text": "x"}, screen(), OWN_WINDOW_ROLE)
    assert keys_now == (
        "the app's own window has the keyboard focus now: the agent may not type into its "
        "own controls (click the window to type into first)"
    )
    keys = own_window_refusal("hotkey", {"keys": ["ctrl", "s"]}, screen(FOCUSED_PANEL))
    assert keys == (
        'the app\'s own window "Desktop Agent — Settings" has the keyboard focus: the agent '
        "may not type into its own controls (click the window to type into first)"
    )
    point = own_window_refusal("click", {"x": 1150, "y": 40}, screen(PANEL))
    assert point == (
        'the point (1150, 40) is on the app\'s own window "Desktop Agent — Settings": the '
        "agent may not use its own controls"
    )


def test_an_answer_asked_for_before_the_second_stop_all_grants_nothing() -> None:
    permissions = Permissions()
    grants = SessionGrants(lambda: permissions.revocations)
    permissions.revoke_all_task_grants()
    asked_at = grants.mark()  # asked after the first stop-all
    permissions.revoke_all_task_grants()  # the answer arrives after a second one
    grants.grant("click", asked_at=asked_at)
    assert grants.tools() == frozenset()


def test_a_run_grant_allows_an_ordinary_call_unless_told_it_is_sensitive() -> None:
    permissions = Permissions()
    run = permissions.for_run("r1")
    run.grant_for_run("click")
    assert run.decide("click", Risk.INPUT) is Policy.ALLOW
    assert run.decide("click", Risk.INPUT, sensitive=True) is Policy.ASK
    assert permissions.decide("r1", "click", Risk.INPUT) is Policy.ALLOW
