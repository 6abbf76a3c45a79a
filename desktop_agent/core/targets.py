"""What an action acted on (an ElementRef), and finding it again on another screen.

A routine step keeps the identity of its target — role, name, the window it was in and
its place in that window — so that a later run can find it wherever the window now is
and act where it is now. Only the active window's controls are listed (the inventory
walks the window in front), so a control's window is the active one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from desktop_agent.core.builtin_tools import spec_of
from desktop_agent.core.call_risk import PASSWORD_ROLES
from desktop_agent.core.models import Element, ElementRef, Observation
from desktop_agent.core.tools import ToolSpec

WINDOW_ROLE = "window"
#: "title — program" (our X11 label) or "title - program" (a window's own title)
_APP_SUFFIX = re.compile(r"\s[—–-]\s([^—–-]+)$")


def active_window(observation: Observation) -> Element | None:
    return next((e for e in observation.elements if e.role == WINDOW_ROLE and e.focused), None)


def controls(observation: Observation) -> list[Element]:
    return [e for e in observation.elements if e.role != WINDOW_ROLE]


def app_of(label: str) -> str:
    """The program part of a window label ("notes.txt - L3afpad" → "l3afpad"); the whole
    label when it names none."""
    found = _APP_SUFFIX.search(label)
    return (found.group(1) if found else label).strip().casefold()


def acts_in_a_window(tool: ToolSpec | str) -> bool:
    """`tool` acts on an element, a point or the focused control: every tool but those whose
    spec says they act on none (a tool nothing is known of counts as acting somewhere)."""
    return not spec_of(tool).windowless


def element_ref(
    tool: ToolSpec | str, args: Mapping[str, Any], observation: Observation
) -> ElementRef | None:
    """The identity of what `tool(args)` acts on in `observation`, by the tool's traits; None
    for a call that acts on no element or window (wait, launch_app)."""
    spec = spec_of(tool)
    window = active_window(observation)
    target: Element | None = None
    how: str
    element_id = args.get("element")
    if spec.aims and isinstance(element_id, int):
        target, how = observation.element(element_id), "element"
    elif spec.pointer and isinstance(x := args.get(spec.points[0][0]), int):
        # a y not given (None in the validated call's values) reads as the top row
        y = args.get(spec.points[0][1])
        target, how = _under(observation, x, y if isinstance(y, int) else 0), "point"
    elif spec.keyboard or spec.text_field:
        target = next((e for e in controls(observation) if e.focused), None)
        how = "focus"
    else:
        return None
    if target is not None and target.role == WINDOW_ROLE:
        window, target = target, None
    if target is None and window is None:
        return None
    if target is None:
        assert window is not None
        return ElementRef("window", WINDOW_ROLE, window.name, window.name, window.box, window.box)
    return ElementRef(
        how,  # type: ignore[arg-type]  # one of the literal's values, set above
        target.role,
        target.name,
        window.name if window else "",
        target.box,
        window.box if window else None,
        target.password or target.role in PASSWORD_ROLES,
    )


def _under(observation: Observation, x: int, y: int) -> Element | None:
    """The smallest listed element whose box holds the point (a control before its window)."""
    holding = [e for e in observation.elements if _holds(e.box, x, y)]
    return min(holding, key=lambda e: (e.role == WINDOW_ROLE, e.box[2] * e.box[3]), default=None)


def _holds(box: tuple[int, int, int, int], x: int, y: int) -> bool:
    left, top, width, height = box
    return left <= x < left + width and top <= y < top + height


@dataclass(frozen=True, slots=True)
class Found:
    """Where a reference is now: its window and (unless only the window was known) element."""

    window: Element | None
    element: Element | None


def find_again(
    ref: ElementRef, observation: Observation, *, same_window: bool = False
) -> Found | str:
    """The reference's element on this screen, or why it is not there (one line).

    The window must be the active one, known by its label or else by its program (a title
    that names another file is the same editor) — by its label only with `same_window` (a
    step nobody is asked about: the same browser showing another site is not where it was
    taught); the element is the one with the same role and name there (the focused one, for
    a focus reference), the nearest to where it was in its window when there are several.
    """
    window = active_window(observation)
    if same_window and not ref.window:
        return "no window was active when it was taught, and nobody is asked about it"
    if ref.window:
        if window is None:
            return f'no window is active; expected "{ref.window}"'
        if window.name != ref.window:
            if app_of(window.name) != app_of(ref.window):
                return f'the active window is "{window.name}", not "{ref.window}"'
            if same_window:
                return (
                    f'the active window is "{window.name}", not "{ref.window}" (the same '
                    "program; a step nobody is asked about acts only in the window it was "
                    "taught in)"
                )
    if ref.how == "window":
        return Found(window, None)
    candidates = [e for e in controls(observation) if e.role == ref.role and e.name == ref.name]
    if ref.how == "focus":
        candidates = [e for e in candidates if e.focused]
    if ref.password:
        # a password field's text goes into a password field, never into a look-alike
        candidates = [e for e in candidates if e.password or e.role in PASSWORD_ROLES]
    if not candidates:
        where = f' in "{ref.window}"' if ref.window else ""
        focused = "focused " if ref.how == "focus" else ""
        return f'no {focused}{ref.role} "{ref.name}"{where}'
    return Found(window, min(candidates, key=lambda e: _distance(ref, e, window)))


def _distance(ref: ElementRef, element: Element, window: Element | None) -> float:
    """How far `element` is from where `ref` was, in its window (both measured from the
    window's top left and as fractions of its size, the nearer of the two: a resized window
    keeps some controls where they were and stretches others)."""
    old, new = _centre(ref.box), _centre(element.box)
    if ref.window_box is None or window is None:
        return float(abs(old[0] - new[0]) + abs(old[1] - new[1]))
    ol, ot, ow, oh = ref.window_box
    nl, nt, nw, nh = window.box
    by_offset = abs((old[0] - ol) - (new[0] - nl)) + abs((old[1] - ot) - (new[1] - nt))
    by_fraction = (
        abs((old[0] - ol) / max(ow, 1) - (new[0] - nl) / max(nw, 1)) * nw
        + abs((old[1] - ot) / max(oh, 1) - (new[1] - nt) / max(nh, 1)) * nh
    )
    return float(min(by_offset, by_fraction))


def _centre(box: tuple[int, int, int, int]) -> tuple[int, int]:
    return box[0] + box[2] // 2, box[1] + box[3] // 2


def relocate(args: Mapping[str, Any], ref: ElementRef, found: Found) -> dict[str, Any]:
    """`args` pointed at where the reference is now: an element id becomes the element's id
    on this screen; a point keeps its place inside its element (or window) as that moved."""
    moved = dict(args)
    now = found.element or found.window
    if now is None:
        return moved
    if isinstance(moved.get("element"), int):
        # its id on this screen, a window's too (a step taught on a window of the list is
        # found as the window): the taught id names another element here
        moved["element"] = now.id
        return moved
    if ref.how not in ("point", "window") or not isinstance(moved.get("x"), int):
        return moved
    dx, dy = now.box[0] - ref.box[0], now.box[1] - ref.box[1]
    for x_key, y_key in (("x", "y"), ("to_x", "to_y")):
        if isinstance(moved.get(x_key), int) and isinstance(moved.get(y_key), int):
            moved[x_key], moved[y_key] = moved[x_key] + dx, moved[y_key] + dy
    if ref.how == "point":
        # a resized control: the point stays inside it
        left, top, width, height = now.box
        moved["x"] = min(max(moved["x"], left), left + width - 1)
        moved["y"] = min(max(moved["y"], top), top + height - 1)
    return moved
