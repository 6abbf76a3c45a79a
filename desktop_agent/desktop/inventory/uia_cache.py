"""UI Automation cache requests: a window's controls and their properties in one call.

uiautomation 2.0.29 reads each property with its own cross-process call (`Control.Name` is
`Element.CurrentName`, uiautomation.py:6608-6810) and walks children with two more per child
(`GetChildren`: GetFirstChildElement, then CurrentControlType and GetNextSiblingElement each,
uiautomation.py:6465, 6990-7059): a window of 150 controls cost about 1,500 round trips, and
the 0.1 s budget rarely got past the top-level windows. It wraps no cache request (its
`# BuildUpdatedCache`, `# GetCachedChildren`, … are comments, uiautomation.py:6528-6851), so
this module asks comtypes' IUIAutomation for one: `BuildUpdatedCache` with the properties
below and TreeScope_Subtree brings the whole subtree back in one call, and the walk reads the
copy in-process (learn.microsoft.com, "Caching UI Automation Properties and Control
Patterns"; IUIAutomationCacheRequest). The cached elements stay full references
(AutomationElementMode_Full, the default), so actions on them are live calls as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: UIA_*PropertyId (UIAutomationClient.h; uiautomation.py PropertyId, 321-560)
BOUNDING_RECTANGLE, PROCESS_ID, CONTROL_TYPE, NAME = 30001, 30002, 30003, 30005
HAS_KEYBOARD_FOCUS, IS_ENABLED, IS_PASSWORD = 30008, 30010, 30019
NATIVE_WINDOW_HANDLE, IS_OFFSCREEN = 30020, 30022
PROPERTIES = (
    CONTROL_TYPE,
    NAME,
    BOUNDING_RECTANGLE,
    IS_ENABLED,
    HAS_KEYBOARD_FOCUS,
    IS_PASSWORD,
    IS_OFFSCREEN,
    NATIVE_WINDOW_HANDLE,
    PROCESS_ID,
)
#: TreeScope (UIAutomationClient.h): the element's children / the element and all below
TREE_SCOPE_CHILDREN, TREE_SCOPE_SUBTREE = 2, 7


@dataclass(frozen=True, slots=True)
class Cached:
    """One element's cached properties, read without a call."""

    element: Any
    type_id: int
    name: str
    #: left, top, right, bottom in physical px
    box: tuple[int, int, int, int]
    enabled: bool
    focused: bool
    password: bool
    offscreen: bool
    handle: int
    process: int


def automation(auto: Any) -> Any:
    """uiautomation's IUIAutomation (its `_AutomationClient`, uiautomation.py:50-67, lives in
    the package's `uiautomation` submodule: the package star-imports only public names)."""
    return auto.uiautomation._AutomationClient.instance().IUIAutomation


def request(iuia: Any, scope: int) -> Any:
    """A cache request for PROPERTIES over `scope`, in the raw view (the view uiautomation's
    walks use: its ViewWalker is RawViewWalker, uiautomation.py:66)."""
    cache = iuia.CreateCacheRequest()
    for property_id in PROPERTIES:
        cache.AddProperty(property_id)
    cache.TreeScope = scope
    cache.TreeFilter = iuia.RawViewCondition
    return cache


def read(element: Any) -> Cached:
    box = element.CachedBoundingRectangle
    return Cached(
        element=element,
        type_id=int(element.CachedControlType),
        name=str(element.CachedName or ""),
        box=(int(box.left), int(box.top), int(box.right), int(box.bottom)),
        enabled=bool(element.CachedIsEnabled),
        focused=bool(element.CachedHasKeyboardFocus),
        password=bool(element.CachedIsPassword),
        offscreen=bool(element.CachedIsOffscreen),
        # a UIA_HWND (void*): comtypes answers None for NULL
        handle=int(element.CachedNativeWindowHandle or 0),
        process=int(element.CachedProcessId or 0),
    )


def children(element: Any) -> Iterator[Any]:
    """The cached children. A level whose children were cached but has none answers a NULL
    array (IUIAutomationElement::GetCachedChildren: "the value of this property is 0"),
    which comtypes gives as a falsy NULL pointer whose every read raises ValueError."""
    array = element.GetCachedChildren()
    if not array:
        return
    for index in range(array.Length):
        yield array.GetElement(index)
