"""Windows UI Automation (the `uiautomation` package): the foreground window's controls, the
top-level windows, and invoke / set_value / focus through UIA patterns.

Every call runs on the one inventory thread, which initialises COM for itself first.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

from desktop_agent.desktop.inventory.base import RawElement, WalkLimits, clean_name

log = logging.getLogger(__name__)

#: uiautomation ControlTypeName → the role the model sees; anything else is structure
ROLES = {
    "ButtonControl": "button",
    "SplitButtonControl": "button",
    "CheckBoxControl": "checkbox",
    "RadioButtonControl": "radio",
    "EditControl": "edit",
    "DocumentControl": "edit",
    "ComboBoxControl": "combobox",
    "MenuItemControl": "menuitem",
    "TabItemControl": "tab",
    "HyperlinkControl": "link",
    "ListItemControl": "listitem",
    "TreeItemControl": "treeitem",
    "DataItemControl": "cell",
    "SliderControl": "slider",
    "SpinnerControl": "spinbutton",
}


def _rect(control: Any) -> tuple[int, int, int, int] | None:
    box = control.BoundingRectangle
    width, height = box.right - box.left, box.bottom - box.top
    if width <= 0 or height <= 0:
        return None
    return int(box.left), int(box.top), int(width), int(height)


class UiaInventory:
    """UI Automation inventory and actions; `uiautomation` is imported on the thread."""

    name = "uia"

    def __init__(self) -> None:
        self._auto: Any = None
        self._com: Any = None

    def thread_init(self) -> None:
        import uiautomation

        self._auto = uiautomation
        # COM must be initialised on the thread that talks to UIA; it stays so for its life
        self._com = uiautomation.UIAutomationInitializerInThread()
        self._com.__enter__()

    # -- listing -------------------------------------------------------------------------

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        auto = self._auto
        foreground = auto.GetForegroundControl()
        foreground_handle = getattr(foreground, "NativeWindowHandle", None)
        found = self._windows(foreground_handle, limits)
        if foreground is not None and not limits.expired():
            found.extend(self._walk(foreground, limits, limits.max_elements - len(found)))
        return found[: limits.max_elements], "uia"

    def _windows(self, foreground_handle: int | None, limits: WalkLimits) -> list[RawElement]:
        windows = []
        for control in self._auto.GetRootControl().GetChildren():
            if limits.expired():
                break
            try:
                if control.IsOffscreen or not control.Name:
                    continue
                rect = _rect(control)
                if rect is None:
                    continue
                handle = control.NativeWindowHandle
                windows.append(
                    RawElement(
                        role="window",
                        name=control.Name,
                        rect=rect,
                        enabled=bool(control.IsEnabled),
                        focused=bool(handle) and handle == foreground_handle,
                        native=control,
                    )
                )
            except Exception as error:  # noqa: BLE001 - COM errors of a window that closed
                log.debug("skipping a top-level window: %s", error)
        return windows

    def _walk(self, root: Any, limits: WalkLimits, budget: int) -> list[RawElement]:
        found: list[RawElement] = []
        queue: deque[tuple[Any, int]] = deque([(root, 0)])
        visited = 0
        while queue and len(found) < budget and visited < limits.max_nodes:
            if limits.expired():
                log.debug("UIA walk cut at the deadline after %d nodes", visited)
                break
            control, depth = queue.popleft()
            visited += 1
            try:
                if depth > 0 and control.IsOffscreen:
                    continue
                role = ROLES.get(control.ControlTypeName)
                if role is not None:
                    rect = _rect(control)
                    if rect is not None:
                        found.append(
                            RawElement(
                                role=role,
                                name=control.Name or "",
                                rect=rect,
                                enabled=bool(control.IsEnabled),
                                focused=bool(control.HasKeyboardFocus),
                                password=bool(control.IsPassword),
                                native=control,
                            )
                        )
                if depth < limits.max_depth:
                    queue.extend((child, depth + 1) for child in control.GetChildren())
            except Exception as error:  # noqa: BLE001 - COM errors of a control that vanished
                log.debug("skipping a UIA control: %s", error)
        return found

    # -- actions ---------------------------------------------------------------------------

    def _pattern(self, control: Any, name: str) -> Any:
        return control.GetPattern(getattr(self._auto.PatternId, name))

    def invoke(self, control: Any) -> str:
        pattern = self._pattern(control, "InvokePattern")
        if pattern is not None:
            pattern.Invoke()
            return "UIA Invoke"
        pattern = self._pattern(control, "TogglePattern")
        if pattern is not None:
            pattern.Toggle()
            return "UIA Toggle"
        pattern = self._pattern(control, "SelectionItemPattern")
        if pattern is not None:
            pattern.Select()
            return "UIA Select"
        pattern = self._pattern(control, "ExpandCollapsePattern")
        if pattern is not None:
            pattern.Expand()
            return "UIA Expand"
        pattern = self._pattern(control, "LegacyIAccessiblePattern")
        action = str(getattr(pattern, "DefaultAction", "") or "") if pattern is not None else ""
        if action:
            pattern.DoDefaultAction()
            return f"UIA default action {clean_name(action)!r}"
        raise LookupError("the element supports no UIA invoke, toggle or select pattern; use click")

    def set_value(self, control: Any, value: str) -> str:
        pattern = self._pattern(control, "ValuePattern")
        if pattern is not None:
            if getattr(pattern, "IsReadOnly", False):
                raise LookupError("the element's value is read-only")
            pattern.SetValue(value)
            return "UIA SetValue"
        pattern = self._pattern(control, "RangeValuePattern")
        if pattern is not None:
            try:
                pattern.SetValue(float(value))
            except ValueError:
                raise LookupError(f"the element takes a number, not {value!r}") from None
            return "UIA RangeValue"
        raise LookupError("the element supports no UIA value pattern; use click and type_text")

    def focus(self, control: Any) -> str:
        if hasattr(control, "SetActive"):  # top-level windows (WindowControl, PaneControl)
            control.SetActive()
            return f'focused window "{clean_name(control.Name)}"'
        control.SetFocus()
        return "focused it through UIA"

    def activate_window(self, title: str) -> str:
        wanted = title.casefold()
        names = []
        for control in self._auto.GetRootControl().GetChildren():
            name = control.Name or ""
            if not name or control.IsOffscreen:
                continue
            if wanted in name.casefold():
                return self.focus(control)
            names.append(name)
        listed = ", ".join(f'"{clean_name(n)}"' for n in names[:8]) or "none"
        raise LookupError(f"no window titled {title!r}; open windows: {listed}")

    def close(self) -> None:
        if self._com is not None:
            self._com.__exit__(None, None, None)
            self._com = None
