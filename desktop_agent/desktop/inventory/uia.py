"""Windows UI Automation (the `uiautomation` package): the foreground window's controls, the
top-level windows, and invoke / set_value / focus through UIA patterns.

Every call runs on the one inventory thread, which initialises COM for itself first.
uiautomation sleeps OPERATION_WAIT_TIME (0.5 s) after each action unless told otherwise: every
action here passes waitTime=0 (setting the package's OPERATION_WAIT_TIME would change nothing:
the package holds a copy, and the defaults were bound at import). Its actions return False
when they fail; GetPattern answers None and SetFocus False for a control that vanished (they
swallow its COMError), so a missing pattern or a refusal is followed by a property read that
tells "gone" (COMError) from "does not support it". Both fail the step with a one-line reason
(LookupError); a vanished control says to observe again, never to click where it was.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop_agent.desktop.inventory import uia_cache
from desktop_agent.desktop.inventory.base import NoSuchWindow, RawElement, WalkLimits, clean_name
from desktop_agent.store.data_dir import resolve_data_dir

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


#: controls whose name is text shown on the screen, not a control's label: read as texts
#: beside the element list (a label, a page's paragraph), never listed
TEXT_TYPES = frozenset({"TextControl"})

#: passed to every uiautomation action: no sleep after it
NO_WAIT = 0.0


def _gone(error: Exception) -> bool:
    """A COMError (_ctypes.COMError): the control vanished under the call."""
    return type(error).__name__ == "COMError"


def _vanished(what: str) -> LookupError:
    return LookupError(
        f"the element is gone ({what} failed: its window closed or changed); observe again"
    )


def _alive(control: Any) -> bool:
    """Whether the control still exists: a property read of a vanished one raises COMError
    (UIA_E_ELEMENTNOTAVAILABLE), which GetPattern and SetFocus swallow."""
    try:
        control.BoundingRectangle  # noqa: B018 - the read is the probe
    except Exception as error:
        if _gone(error):
            return False
        raise
    return True


def _checked(
    what: str, action: Callable[..., Any], control: Any, *args: Any, wait: bool = True
) -> None:
    """Run a uiautomation action on `control` (with waitTime=0 where it takes one);
    LookupError when it reports failure or the control is gone."""
    try:
        ok = action(*args, waitTime=NO_WAIT) if wait else action(*args)
    except Exception as error:
        if _gone(error):
            raise _vanished(what) from None
        raise
    if ok is False:
        if not _alive(control):
            raise _vanished(what)
        raise LookupError(f"the element did not accept {what}")


def _rect(box: tuple[int, int, int, int]) -> tuple[int, int, int, int] | None:
    """(left, top, right, bottom) as (left, top, width, height); None when empty."""
    left, top, right, bottom = box
    if right <= left or bottom <= top:
        return None
    return left, top, right - left, bottom - top


def is_own(control: Any) -> bool:
    """One of this app's own windows: made by this process (the app's engine runs in it), or
    titled as the app's windows are ("Desktop Agent…": main window, dialogs, acting panel)."""
    return _own(str(control.Name or ""), getattr(control, "ProcessId", None))


def _own(title: str, process: int | None) -> bool:
    return process == os.getpid() or title.startswith("Desktop Agent")


COINIT_MULTITHREADED = 0x0
#: the data dir's folder for comtypes' generated wrappers (the frozen app's)
COMTYPES_GEN = "comtypes-gen"


def generate_into(folder: Path) -> None:
    """Have comtypes write the wrappers it generates (UIAutomationCore's, on uiautomation's
    first use) into `folder`, first on comtypes.gen's path. By default it writes them into
    its own package folder when that is writable (comtypes/client/_code_cache.py
    `_find_gen_dir`; `comtypes.client.gen_dir`, which GetModule writes to): on a per-user
    install that is the bundle's `_internal\\comtypes\\gen`, files the installer did not put
    there and the uninstaller leaves behind. Call before uiautomation is imported."""
    import comtypes.client
    import comtypes.gen

    folder.mkdir(parents=True, exist_ok=True)
    comtypes.client.gen_dir = str(folder)
    path = list(comtypes.gen.__path__)
    if str(folder) not in path:
        comtypes.gen.__path__ = [str(folder), *path]


class UiaInventory:
    """UI Automation inventory and actions; `uiautomation` is imported on the thread."""

    name = "uia"

    def __init__(self) -> None:
        self._auto: Any = None
        self._com: Any = None
        #: initializers of threads left hung: kept, so their __del__ (CoUninitialize on the
        #: thread that drops them) never undoes the COM of the thread that replaced them
        self._left_com: list[Any] = []
        #: the screen texts the last snapshot's walk passed (read_texts)
        self._texts: list[RawElement] = []

    def thread_init(self) -> None:
        # a UI Automation client belongs on an MTA thread that owns no windows (this one):
        # on an STA its calls are marshalled through a message pump, and an element made on
        # a thread that was abandoned and replaced may be used only from its own apartment
        # (learn.microsoft.com, "Understanding Threading Issues", UI Automation). comtypes'
        # CoInitializeEx — at its import and in uiautomation's initializer — takes
        # sys.coinit_flags when set, else the STA (comtypes/__init__.py CoInitializeEx)
        sys.coinit_flags = COINIT_MULTITHREADED  # type: ignore[attr-defined]
        if getattr(sys, "frozen", False):
            generate_into(resolve_data_dir() / COMTYPES_GEN)
        import uiautomation

        self._auto = uiautomation
        if self._com is not None:
            self._left_com.append(self._com)
        # COM must be initialised on the thread that talks to UIA (the initializer's
        # __init__ does it); it stays so for the thread's life
        self._com = uiautomation.UIAutomationInitializerInThread()

    # -- listing -------------------------------------------------------------------------

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        self._texts = []
        auto = self._auto
        iuia = uia_cache.automation(auto)
        foreground = auto.GetForegroundControl()
        foreground_handle = getattr(foreground, "NativeWindowHandle", None)
        found = self._windows(iuia, foreground_handle, limits)
        # this app's own window in front: its controls are not the agent's to list
        ours = any(item.own and item.focused for item in found)
        if foreground is not None and not ours and not limits.expired():
            found.extend(self._walk(iuia, foreground, limits, limits.max_elements - len(found)))
        return found[: limits.max_elements], "uia"

    def _control(self, cached: uia_cache.Cached) -> Any:
        """uiautomation's Control of the right class over a cached element, made without a
        call (CreateControlFromElement would read CurrentControlType again)."""
        make = self._auto.ControlConstructors.get(cached.type_id)
        return make(element=cached.element) if make is not None else None

    def _windows(
        self, iuia: Any, foreground_handle: int | None, limits: WalkLimits
    ) -> list[RawElement]:
        """The desktop's children, their properties in one call (TreeScope_Children)."""
        root = self._auto.GetRootControl().Element
        try:
            listed = root.BuildUpdatedCache(uia_cache.request(iuia, uia_cache.TREE_SCOPE_CHILDREN))
            elements = list(uia_cache.children(listed))
        except Exception as error:  # noqa: BLE001 - COM errors: no windows this turn
            log.debug("cannot list the top-level windows: %s", error)
            return []
        windows = []
        for element in elements:
            window = uia_cache.read(element)
            rect = _rect(window.box)
            control = self._control(window)
            if window.offscreen or not window.name or rect is None or control is None:
                continue
            windows.append(
                RawElement(
                    role="window",
                    name=window.name,
                    rect=rect,
                    enabled=window.enabled,
                    focused=bool(window.handle) and window.handle == foreground_handle,
                    own=_own(window.name, window.process),
                    native=control,
                )
            )
        return windows

    def _walk(self, iuia: Any, root: Any, limits: WalkLimits, budget: int) -> list[RawElement]:
        """The foreground window's controls, breadth first, from one cached subtree."""
        try:
            tree = root.Element.BuildUpdatedCache(
                uia_cache.request(iuia, uia_cache.TREE_SCOPE_SUBTREE)
            )
        except Exception as error:  # noqa: BLE001 - the window closed under the call
            log.debug("cannot read the foreground window's controls: %s", error)
            return []
        found: list[RawElement] = []
        queue: deque[tuple[Any, int]] = deque([(tree, 0)])
        visited = 0
        while queue and len(found) < budget and visited < limits.max_nodes:
            if limits.expired():
                log.debug("UIA walk cut at the deadline after %d nodes", visited)
                break
            element, depth = queue.popleft()
            visited += 1
            node = uia_cache.read(element)
            if depth > 0 and node.offscreen:
                continue
            type_name = self._auto.ControlTypeNames.get(node.type_id, "")
            role = ROLES.get(type_name)
            rect = _rect(node.box)
            if type_name in TEXT_TYPES and rect is not None and node.name:
                # what a label or a page's paragraph says: screen text the guard reads
                self._texts.append(RawElement("label", node.name, rect, contents=True))
            if role is not None and rect is not None:
                control = self._control(node)
                if control is not None:
                    found.append(
                        RawElement(
                            role=role,
                            name=node.name,
                            rect=rect,
                            enabled=node.enabled,
                            focused=node.focused,
                            password=node.password,
                            native=control,
                        )
                    )
            if depth < limits.max_depth:
                queue.extend((child, depth + 1) for child in uia_cache.children(element))
        return found

    def read_texts(self, limits: WalkLimits) -> list[RawElement]:
        """The texts the last snapshot's walk of the foreground window passed on its way (its
        labels' and paragraphs' names: UIA's TextControls), read in the walk's one cached
        call; the injection guard reads them and the prompt fences them. Not read (left for
        a later pass): edit and document contents, other windows' controls, and any OCR."""
        return list(self._texts)

    # -- actions ---------------------------------------------------------------------------

    def _pattern(self, control: Any, name: str) -> Any:
        """The pattern, or None; GetPattern swallows the COMError of a vanished control."""
        return control.GetPattern(getattr(self._auto.PatternId, name))

    def _none_fits(self, control: Any, what: str, message: str) -> LookupError:
        """No pattern fitted: say so, unless the control is gone (then observe again)."""
        return LookupError(message) if _alive(control) else _vanished(what)

    def invoke(self, control: Any) -> str:
        for name, method, how in (
            ("InvokePattern", "Invoke", "UIA Invoke"),
            ("TogglePattern", "Toggle", "UIA Toggle"),
            ("SelectionItemPattern", "Select", "UIA Select"),
            ("ExpandCollapsePattern", "Expand", "UIA Expand"),
        ):
            pattern = self._pattern(control, name)
            if pattern is not None:
                _checked(how, getattr(pattern, method), control)
                return how
        pattern = self._pattern(control, "LegacyIAccessiblePattern")
        action = str(getattr(pattern, "DefaultAction", "") or "") if pattern is not None else ""
        if action:
            how = f"UIA default action {clean_name(action)!r}"
            _checked(how, pattern.DoDefaultAction, control)
            return how
        raise self._none_fits(
            control,
            "UIA invoke",
            "the element supports no UIA invoke, toggle or select pattern; use click",
        )

    def set_value(self, control: Any, value: str) -> str:
        pattern = self._pattern(control, "ValuePattern")
        if pattern is not None:
            if getattr(pattern, "IsReadOnly", False):
                raise LookupError("the element's value is read-only")
            _checked("UIA SetValue", pattern.SetValue, control, value)
            return "UIA SetValue"
        pattern = self._pattern(control, "RangeValuePattern")
        if pattern is not None:
            try:
                number = float(value)
            except ValueError:
                raise LookupError(f"the element takes a number, not {value!r}") from None
            _checked("UIA RangeValue", pattern.SetValue, control, number)
            return "UIA RangeValue"
        raise self._none_fits(
            control,
            "UIA SetValue",
            "the element supports no UIA value pattern; use click and type_text",
        )

    def focus(self, control: Any) -> str:
        # every WindowControl/PaneControl has SetActive; it is False unless top-level
        activate = getattr(control, "SetActive", None)
        if activate is not None:
            try:
                if activate(waitTime=NO_WAIT):
                    return self._in_front(control)
            except Exception as error:
                if not _gone(error):
                    raise
                raise LookupError("the window is gone; observe again") from None
        _checked("the focus", control.SetFocus, control, wait=False)
        return "focused it through UIA"

    def _in_front(self, control: Any) -> str:
        """The summary of a window SetActive brought to the front, after checking that it is:
        SetActive is SetForegroundWindow, which Windows refuses to a background process (the
        foreground lock: "the system restricts which processes can set the foreground
        window", learn.microsoft.com, SetForegroundWindow) and then only flashes the
        taskbar button, and its answer did not say so. LookupError when another window is
        still in front."""
        front = self._auto.GetForegroundControl()
        wanted = control.NativeWindowHandle
        if front is None or front.NativeWindowHandle != wanted:
            raise LookupError(
                f'Windows did not bring "{clean_name(control.Name)}" to the front (a program '
                "in the background may not take the foreground; its taskbar button may "
                "flash): click the window or its taskbar button instead"
            )
        return f'focused window "{clean_name(control.Name)}"'

    def activate_window(self, title: str) -> str:
        wanted = title.casefold()
        names = []
        for control in self._auto.GetRootControl().GetChildren():
            name = control.Name or ""
            if not name or control.IsOffscreen or is_own(control):
                continue  # never the app's own windows (the agent may not use its controls)
            if wanted in name.casefold():
                return self.focus(control)
            names.append(name)
        listed = ", ".join(f'"{clean_name(n)}"' for n in names[:8]) or "none"
        raise NoSuchWindow(f"no window titled {title!r}; open windows: {listed}")

    def close(self) -> None:
        if self._com is not None:
            self._com.Uninitialize()
            self._com = None
