"""The agent cannot reach its own controls: input aimed at the app's own windows is refused.

With click and hotkey grants a run could otherwise focus the app's window, open its settings
and allow itself more. The desktop adapters keep the app's windows (window class / app name
`desktop-agent`: the main window, its dialogs, the tray menu, the acting panel) out of the
element list and hand them to the core as `Observation.own_windows` (the parts no other
window covers); `own_window_refusal` says why a call must not run, before any policy, grant
or question — no answer of anybody's makes it run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from desktop_agent.core.builtin_tools import spec_of
from desktop_agent.core.call_risk import box_holds, folded
from desktop_agent.core.models import Element, Observation
from desktop_agent.core.tools import ToolSpec

APP_NAME = "desktop-agent"
#: what a FocusProbe answers when the app's own window is the active one: its keys would go
#: to the app's controls (the probe knows it at action time; the observation may be older)
OWN_WINDOW_ROLE = APP_NAME


def own_window_refusal(
    tool: ToolSpec | str,
    args: Mapping[str, Any],
    observation: Observation,
    focused_role: str | None = None,
) -> str:
    """Why `tool(args)` (the validated arguments) would act on the app's own windows, or "",
    by the tool's traits (a name: the built-in tool's). `focused_role`: the focus probe's
    answer at action time (OWN_WINDOW_ROLE: the app's window is the active one now, whatever
    the observation showed)."""
    spec = spec_of(tool)
    own = observation.own_windows
    if spec.window_field:
        return _focus_refusal(args.get(spec.window_field), own)
    if spec.keyboard and focused_role == OWN_WINDOW_ROLE:
        return (
            "the app's own window has the keyboard focus now: the agent may not type into its "
            "own controls (click the window to type into first)"
        )
    if not own:
        return ""
    if spec.keyboard:
        focused = next((window for window in own if window.focused), None)
        if focused is not None:
            return (
                f'the app\'s own window "{focused.name}" has the keyboard focus: the agent may '
                "not type into its own controls (click the window to type into first)"
            )
        return ""
    for x, y in _points(spec, args, observation):
        window = next((w for w in own if box_holds(w.box, x, y)), None)
        if window is not None:
            return (
                f'the point ({x}, {y}) is on the app\'s own window "{window.name}": the agent '
                "may not use its own controls"
            )
    return ""


def _focus_refusal(title: object, own: tuple[Element, ...]) -> str:
    """A title that names the app, or that a backend's match (the title *contained* in a
    window's, any case) would find in one of its windows: "Agent" is in "Desktop Agent"."""
    if not isinstance(title, str):
        return ""
    wanted, plain = _words(title), title.casefold()
    if "desktop agent" in wanted or any(
        wanted in _words(window.name) or plain in window.name.casefold() for window in own
    ):
        return f"{title!r} names the app's own window: the agent may not focus its own controls"
    return ""


def _words(text: str) -> str:
    """`text` as titles are compared here: folded as the gate folds names (lookalike letters,
    invisible characters), dashes as spaces, one space between words."""
    return " ".join(folded(text).replace("-", " ").split())


def _points(
    spec: ToolSpec, args: Mapping[str, Any], observation: Observation
) -> Iterator[tuple[int, int]]:
    """Where a pointer call presses, moves or scrolls: its points, or its element's centre."""
    element_id = args.get("element")
    if isinstance(element_id, int) and spec.pointer:
        element = observation.element(element_id)
        if element is not None:
            yield element.center
    for x_name, y_name in spec.points:
        x, y = args.get(x_name), args.get(y_name)
        if isinstance(x, int) and isinstance(y, int):
            yield x, y
