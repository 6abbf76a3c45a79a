"""A fake `uiautomation` module fed with control trees (tests/unit/desktop/data/uia_*.json).

It mirrors the parts of uiautomation 2.0.29 the UIA backend uses, as the real library behaves
(read in yinkaisheng/Python-UIAutomation-for-Windows, uiautomation/uiautomation.py at the
2.0.29 tag): GetRootControl, GetForegroundControl (None when no window is in front: tree
"foreground": null), Control properties (Name, ControlTypeName, BoundingRectangle, IsEnabled,
HasKeyboardFocus, IsPassword, IsOffscreen, NativeWindowHandle), GetChildren,
UIAutomationInitializerInThread, and:

- `GetPattern(PatternId.X)` → the pattern, or None when the control lacks it; a COMError
  (the control vanished) is swallowed and gives None as well (uiautomation.py:6862-6876,
  `except comtypes.COMError: pass`).
- `SetFocus()` → bool; a COMError gives False, it never raises (uiautomation.py:6918-6927).
- `SetActive(waitTime)` on every WindowControl and PaneControl (the TopLevel mixin,
  uiautomation.py:9336-9347): False unless the control is top-level; it reads
  NativeWindowHandle first, so a vanished control raises COMError there.
- Pattern actions return bool (a spec's "fails": ["Invoke", ...] makes them return False)
  and take `waitTime`, whose default is bound when the library is imported to its module's
  OPERATION_WAIT_TIME (0.5 s, uiautomation.py:36): the real one sleeps that long after each
  action; the fake records it. The package re-exports the module's names
  (uiautomation/__init__.py: `from .uiautomation import *`), so setting OPERATION_WAIT_TIME
  on the package changes no default and nothing the module reads: the fake's package
  attribute is a copy too.
- `UIAutomationInitializerInThread()` calls CoInitializeEx in its __init__ (not __enter__)
  and CoUninitialize in __exit__ / __del__ (uiautomation.py:10225-10262); a COM call from a
  thread that did not initialise COM fails with COMError CO_E_NOTINITIALIZED, as comtypes
  does. The thread that imports the fake (comtypes initialises COM on import) counts as
  initialised, like the real import.

A control whose spec has "vanished": true raises COMError on every property read and call
(UIA_E_ELEMENTNOTAVAILABLE), as a control whose window closed does.
Every call is recorded, with the thread it came from.

Below the library, the comtypes objects it wraps (its `Control.Element`, uiautomation.py:6929;
`_AutomationClient.instance().IUIAutomation`, uiautomation.py:50-67), as far as a UIA
CacheRequest needs them (learn.microsoft.com: IUIAutomation::CreateCacheRequest,
IUIAutomationCacheRequest, IUIAutomationElement::BuildUpdatedCache / GetCachedChildren /
GetCachedPropertyValue):
- `CreateCacheRequest()`: AddProperty(id), TreeScope (default TreeScope_Element), TreeFilter.
- `element.BuildUpdatedCache(request)`: ONE cross-process call; a copy of the element with the
  requested properties (and children, at each level the scope covers) read at that moment.
  Elements gone from the provider are not in it; a vanished element itself raises COMError.
- `CachedName` & co.: in-process, no call; a property the request did not ask for fails
  ("returns a failure code if the requested property was not previously cached").
- `GetCachedChildren()`: the cached children; at a level whose children were cached but
  which has none, a NULL array ("the value of this property is 0"), which comtypes hands back
  as a NULL pointer: falsy, and any member read raises ValueError("NULL COM pointer
  access"); at a level whose children were not asked for, an error.
Every cross-process call (a property read, each step of GetChildren, BuildUpdatedCache) is a
round trip: `Log.reads` counts them and `Log.now`, the fake's clock, advances by the modelled
cost (`call_s` a call, `element_s` per element a cache carries back).
"""

from __future__ import annotations

import json
import sys
import threading
import types
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
#: uiautomation's default pause after each action (its OPERATION_WAIT_TIME), in seconds
OPERATION_WAIT_TIME = 0.5


#: UIA_E_ELEMENTNOTAVAILABLE, CO_E_NOTINITIALIZED, E_INVALIDARG (a property not cached)
ELEMENT_NOT_AVAILABLE = -2147220991
NOT_INITIALIZED = -2147221008
INVALID_ARG = -2147024809

#: uiautomation.py's ControlType / ControlTypeNames (149-240): the ids the trees' names map to
CONTROL_TYPES = {
    "ButtonControl": 50000, "CalendarControl": 50001, "CheckBoxControl": 50002,
    "ComboBoxControl": 50003, "EditControl": 50004, "HyperlinkControl": 50005,
    "ImageControl": 50006, "ListItemControl": 50007, "ListControl": 50008, "MenuControl": 50009,
    "MenuBarControl": 50010, "MenuItemControl": 50011, "ProgressBarControl": 50012,
    "RadioButtonControl": 50013, "ScrollBarControl": 50014, "SliderControl": 50015,
    "SpinnerControl": 50016, "StatusBarControl": 50017, "TabControl": 50018,
    "TabItemControl": 50019, "TextControl": 50020, "ToolBarControl": 50021,
    "ToolTipControl": 50022, "TreeControl": 50023, "TreeItemControl": 50024,
    "CustomControl": 50025, "GroupControl": 50026, "ThumbControl": 50027,
    "DataGridControl": 50028, "DataItemControl": 50029, "DocumentControl": 50030,
    "SplitButtonControl": 50031, "WindowControl": 50032, "PaneControl": 50033,
    "HeaderControl": 50034, "HeaderItemControl": 50035, "TableControl": 50036,
    "TitleBarControl": 50037, "SeparatorControl": 50038, "SemanticZoomControl": 50039,
    "AppBarControl": 50040,
}  # fmt: skip
CONTROL_TYPE_NAMES = {number: name for name, number in CONTROL_TYPES.items()}
#: uiautomation.py's PropertyId (321-560) of the properties a cache may hold → the spec's key
PROPERTIES = {
    30001: "rect", 30002: "pid", 30003: "type", 30005: "name", 30008: "focus",
    30010: "enabled", 30019: "password", 30020: "handle", 30022: "offscreen",
}  # fmt: skip
#: TreeScope (UIAutomationClient.h)
SCOPE_ELEMENT, SCOPE_CHILDREN, SCOPE_DESCENDANTS = 1, 2, 4


class COMError(Exception):
    """_ctypes.COMError: what a UIA call on a vanished element (or from a thread without COM)
    raises."""

    def __init__(self, hresult: int = ELEMENT_NOT_AVAILABLE) -> None:
        text = {NOT_INITIALIZED: "CoInitialize has not been called."}.get(
            hresult, "An event was unable to invoke any of the subscribers"
        )
        super().__init__(hresult, text, None)


class PatternId:
    InvokePattern = 10000
    ValuePattern = 10002
    RangeValuePattern = 10003
    ExpandCollapsePattern = 10005
    SelectionItemPattern = 10010
    TextPattern = 10014
    TogglePattern = 10015
    LegacyIAccessiblePattern = 10018


_PATTERN_IDS = {name: value for name, value in vars(PatternId).items() if name.endswith("Pattern")}


@dataclass
class Rect:
    left: int
    top: int
    right: int
    bottom: int

    def width(self) -> int:
        return self.right - self.left

    def height(self) -> int:
        return self.bottom - self.top


@dataclass
class Log:
    calls: list[tuple[str, str, Any]] = field(default_factory=list)
    threads: set[int] = field(default_factory=set)
    com_threads: list[int] = field(default_factory=list)
    #: per thread, CoInitializeEx calls not yet matched by CoUninitialize (COM counts them)
    com_live: Counter[int] = field(default_factory=Counter)
    #: the waitTime of every action: the real library sleeps that long after it
    waits: list[float] = field(default_factory=list)
    reads: int = 0
    #: per thread, the CoInitializeEx flags its initializer used (0 MTA, 2 STA)
    apartments: dict[int, int] = field(default_factory=dict)
    #: the handle of the window in front (GetForegroundControl)
    foreground: int | None = None
    #: Windows refuses this process the foreground (it is in the background): SetActive
    #: leaves the window in front where it is
    foreground_locked: bool = False
    #: the fake's clock (s): each round trip advances it by call_s (+ element_s per element
    #: a cache carries back); `sleep` makes the cost real time as well (benchmarks)
    now: float = 0.0
    call_s: float = 0.0
    element_s: float = 0.0
    sleep: Any = None
    #: the desktop's spec: its children are the top-level windows
    root_spec: Any = None

    def trip(self, elements: int = 0) -> None:
        """One cross-process round trip."""
        self.reads += 1
        cost = self.call_s + elements * self.element_s
        self.now += cost
        if self.sleep is not None and cost:
            self.sleep(cost)

    def com(self) -> None:
        """comtypes: a call from a thread that has not initialised COM fails."""
        if self.com_live[threading.get_ident()] <= 0:
            raise COMError(NOT_INITIALIZED)

    def record(self, what: str, control: Control, arg: Any = None) -> None:
        self.calls.append((what, control.Name, arg))
        self.threads.add(threading.get_ident())

    def act(self, what: str, control: Control, wait: float, arg: Any = None) -> bool:
        """Record an action; its bool result as the library returns it."""
        control._check()
        self.record(what, control, arg)
        self.waits.append(wait)
        return what not in control._spec.get("fails", [])


class _Pattern:
    def __init__(self, control: Control, name: str) -> None:
        self._control = control
        self._name = name

    def _act(self, what: str, wait: float, arg: Any = None) -> bool:
        return self._control._log.act(what, self._control, wait, arg)

    def Invoke(self, waitTime: float = OPERATION_WAIT_TIME) -> bool:  # noqa: N802, N803 - mirrors uiautomation
        return self._act("Invoke", waitTime)

    def Toggle(self, waitTime: float = OPERATION_WAIT_TIME) -> bool:  # noqa: N802, N803
        return self._act("Toggle", waitTime)

    def Select(self, waitTime: float = OPERATION_WAIT_TIME) -> bool:  # noqa: N802, N803
        return self._act("Select", waitTime)

    def Expand(self, waitTime: float = OPERATION_WAIT_TIME) -> bool:  # noqa: N802, N803
        return self._act("Expand", waitTime)

    def DoDefaultAction(self, waitTime: float = OPERATION_WAIT_TIME) -> bool:  # noqa: N802, N803
        return self._act("DoDefaultAction", waitTime)

    @property
    def DefaultAction(self) -> str:  # noqa: N802
        return str(self._control._read("default_action", ""))

    @property
    def IsReadOnly(self) -> bool:  # noqa: N802
        return bool(self._control._read("readonly", False))

    @property
    def Value(self) -> str:  # noqa: N802
        return str(self._control._read("value", ""))

    def SetValue(self, value: Any, waitTime: float = OPERATION_WAIT_TIME) -> bool:  # noqa: N802, N803
        ok = self._act("SetValue", waitTime, value)
        if ok:
            self._control._spec["value"] = value
        return ok


class Control:
    def __init__(self, spec: dict[str, Any], log: Log, *, element: Element | None = None) -> None:
        self._spec = spec
        self._log = log
        self._made: list[Control] | None = None
        self._element = element

    @property
    def _children(self) -> list[Control]:
        if self._made is None:
            self._made = [_control(child, self._log) for child in self._spec.get("children", [])]
        return self._made

    @_children.setter
    def _children(self, children: list[Control]) -> None:
        self._made = children

    @property
    def Element(self) -> Element:  # noqa: N802
        """The comtypes IUIAutomationElement it wraps (uiautomation.py:6929)."""
        if self._element is None:
            self._element = Element(self._spec, self._log, top_level=self._is_top_level())
        return self._element

    def _is_top_level(self) -> bool:
        return False

    def _check(self) -> None:
        self._log.com()
        if self._spec.get("vanished"):
            raise COMError

    def _read(self, key: str, default: Any) -> Any:
        self._check()
        self._log.trip()
        return self._spec.get(key, default)

    @property
    def Name(self) -> str:  # noqa: N802
        return str(self._read("name", ""))

    @property
    def ControlTypeName(self) -> str:  # noqa: N802
        return str(self._read("type", "Control"))

    @property
    def ClassName(self) -> str:  # noqa: N802
        return str(self._read("class", ""))

    @property
    def BoundingRectangle(self) -> Rect:  # noqa: N802
        return Rect(*self._read("rect", [0, 0, 0, 0]))

    @property
    def IsEnabled(self) -> bool:  # noqa: N802
        return bool(self._read("enabled", True))

    @property
    def HasKeyboardFocus(self) -> bool:  # noqa: N802
        return bool(self._read("focus", False))

    @property
    def IsPassword(self) -> bool:  # noqa: N802
        return bool(self._read("password", False))

    @property
    def IsOffscreen(self) -> bool:  # noqa: N802
        return bool(self._read("offscreen", False))

    @property
    def NativeWindowHandle(self) -> int:  # noqa: N802
        return int(self._read("handle", 0))

    def GetChildren(self) -> list[Control]:  # noqa: N802
        """uiautomation.py:7050: GetFirstChildControl, then per child its CurrentControlType
        (CreateControlFromElement, 6465) and GetNextSiblingControl: 1 + 2 calls a child."""
        self._check()
        children = list(self._children)
        for _ in range(1 + 2 * len(children)):
            self._log.trip()
        return children

    def GetPattern(self, pattern_id: int) -> _Pattern | None:  # noqa: N802
        try:
            self._check()
        except COMError:
            return None  # uiautomation.py:6875: `except comtypes.COMError as ex: pass`
        for name in self._spec.get("patterns", []):
            if _PATTERN_IDS[name] == pattern_id:
                return _Pattern(self, name)
        return None

    def SetFocus(self) -> bool:  # noqa: N802
        try:
            return self._log.act("SetFocus", self, 0.0)
        except COMError:
            return False  # uiautomation.py:6925: `except comtypes.COMError: return False`

    def __repr__(self) -> str:
        return f"<{self.ControlTypeName} {self.Name!r}>"


class TopLevelControl(Control):
    """WindowControl / PaneControl: the TopLevel mixin adds SetActive, which is False for a
    control that is not a top-level window (the library checks IsTopLevel first)."""

    def __init__(
        self,
        spec: dict[str, Any],
        log: Log,
        *,
        top_level: bool = False,
        element: Element | None = None,
    ) -> None:
        super().__init__(spec, log, element=element)
        self._top_level = top_level

    def _is_top_level(self) -> bool:
        return self._top_level

    def SetActive(self, waitTime: float = OPERATION_WAIT_TIME) -> bool:  # noqa: N802, N803
        """SetForegroundWindow underneath (uiautomation.py, TopLevel.SetActive): the window
        comes to the front unless Windows' foreground lock refuses it to a background
        process (`Log.foreground_locked`); refused, it only flashes its taskbar button, and
        the answer may still be true."""
        self._check()  # IsTopLevel() reads NativeWindowHandle first
        if not self._top_level:
            return False
        done = self._log.act("SetActive", self, waitTime)
        if done and not self._log.foreground_locked:
            self._log.foreground = self.NativeWindowHandle
        return done


def _control(
    spec: dict[str, Any], log: Log, *, top_level: bool = False, element: Element | None = None
) -> Control:
    if spec.get("type") in ("WindowControl", "PaneControl"):
        return TopLevelControl(spec, log, top_level=top_level, element=element)
    return Control(spec, log, element=element)


class _NullArray:
    """A NULL IUIAutomationElementArray pointer as comtypes hands it back: falsy, and any
    member read raises ValueError (comtypes' "NULL COM pointer access")."""

    def __bool__(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        raise ValueError("NULL COM pointer access")


class ElementArray:
    """IUIAutomationElementArray: a client-side array, read without a call."""

    def __init__(self, elements: list[Element]) -> None:
        self._elements = elements

    @property
    def Length(self) -> int:  # noqa: N802
        return len(self._elements)

    def GetElement(self, index: int) -> Element:  # noqa: N802
        return self._elements[index]


class CacheRequest:
    """IUIAutomationCacheRequest: the properties to cache and the scope (default: the
    element only)."""

    def __init__(self) -> None:
        self.properties: list[int] = []
        self.TreeScope = SCOPE_ELEMENT
        self.TreeFilter: Any = "ControlViewCondition"

    def AddProperty(self, property_id: int) -> None:  # noqa: N802
        if property_id not in PROPERTIES:
            raise COMError(INVALID_ARG)
        self.properties.append(property_id)


class Element:
    """IUIAutomationElement over a spec: live (Current*) through uiautomation's Control, or
    with a cache (`BuildUpdatedCache`)."""

    def __init__(
        self,
        spec: dict[str, Any],
        log: Log,
        *,
        top_level: bool = False,
        cached: dict[int, Any] | None = None,
        children: list[Element] | None = None,
    ) -> None:
        self._spec = spec
        self._log = log
        self.top_level = top_level
        self._cached = cached
        self._cached_children = children

    def BuildUpdatedCache(self, request: CacheRequest) -> Element:  # noqa: N802
        self._log.com()
        if self._spec.get("vanished"):
            raise COMError
        count = [0]
        copy = self._cache(self._spec, request, request.TreeScope, self.top_level, count)
        self._log.trip(elements=count[0])
        return copy

    def _cache(
        self,
        spec: dict[str, Any],
        request: CacheRequest,
        scope: int,
        top_level: bool,
        count: list[int],
    ) -> Element:
        count[0] += 1
        values = None
        if scope & SCOPE_ELEMENT:
            values = {pid: spec.get(PROPERTIES[pid]) for pid in request.properties}
        children = None
        if scope & (SCOPE_CHILDREN | SCOPE_DESCENDANTS):
            # Children: the children's own properties, not their children; Descendants (and
            # Subtree): every level below, each with its children
            below = SCOPE_ELEMENT
            if scope & SCOPE_DESCENDANTS:
                below |= SCOPE_CHILDREN | SCOPE_DESCENDANTS
            children = [
                self._cache(child, request, below, spec is self._log.root_spec, count)
                for child in spec.get("children", [])
                if not child.get("vanished")  # gone from the provider: not in the cache
            ]
        return Element(spec, self._log, top_level=top_level, cached=values, children=children)

    def _cached_value(self, property_id: int) -> Any:
        if self._cached is None or property_id not in self._cached:
            raise COMError(INVALID_ARG)
        return self._cached[property_id]

    @property
    def CachedControlType(self) -> int:  # noqa: N802
        return CONTROL_TYPES.get(str(self._cached_value(30003) or "CustomControl"), 50025)

    @property
    def CachedName(self) -> str:  # noqa: N802
        return str(self._cached_value(30005) or "")

    @property
    def CachedBoundingRectangle(self) -> Rect:  # noqa: N802
        return Rect(*(self._cached_value(30001) or [0, 0, 0, 0]))

    @property
    def CachedIsEnabled(self) -> int:  # noqa: N802
        value = self._cached_value(30010)
        return int(True if value is None else value)

    @property
    def CachedHasKeyboardFocus(self) -> int:  # noqa: N802
        return int(bool(self._cached_value(30008)))

    @property
    def CachedIsPassword(self) -> int:  # noqa: N802
        return int(bool(self._cached_value(30019)))

    @property
    def CachedIsOffscreen(self) -> int:  # noqa: N802
        return int(bool(self._cached_value(30022)))

    @property
    def CachedNativeWindowHandle(self) -> int | None:  # noqa: N802
        # a void* (UIA_HWND): comtypes gives None for a NULL one
        return int(self._cached_value(30020) or 0) or None

    @property
    def CachedProcessId(self) -> int:  # noqa: N802
        return int(self._cached_value(30002) or 0)

    def GetCachedChildren(self) -> ElementArray | _NullArray:  # noqa: N802
        if self._cached_children is None:
            raise COMError(INVALID_ARG)
        if not self._cached_children:
            return _NullArray()
        return ElementArray(self._cached_children)


def control_from(element: Element, log: Log) -> Control:
    """uiautomation's ControlConstructors[type](element=...) over a fake element."""
    return _control(element._spec, log, top_level=element.top_level, element=element)


def _constructors(log: Log) -> dict[int, Any]:
    """ControlConstructors (uiautomation.py:10180): control type id → class(element=...)."""

    def make(element: Element) -> Control:
        return control_from(element, log)

    return dict.fromkeys(CONTROL_TYPE_NAMES, make)


def load(name: str) -> tuple[types.ModuleType, Log]:
    """A module object standing in for `uiautomation`, over the tree in data/<name>.json."""
    return load_tree(json.loads((DATA / name).read_text(encoding="utf-8")))


def load_tree(tree: dict[str, Any]) -> tuple[types.ModuleType, Log]:
    """A module object standing in for `uiautomation`, over `tree` (data/uia_*.json's shape)."""
    log = Log()
    root = Control(tree["root"], log)
    root._children = [
        _control(child, log, top_level=True) for child in tree["root"].get("children", [])
    ]
    # comtypes initialises COM on the thread that imports it
    log.com_live[threading.get_ident()] += 1
    handles = {child.NativeWindowHandle: child for child in root._children}
    log.reads = 0
    log.now = 0.0

    class UIAutomationInitializerInThread:
        """uiautomation.py:10225: CoInitializeEx in __init__, CoUninitialize on exit."""

        def __init__(self, debug: bool = False) -> None:
            self._thread = threading.get_ident()
            # comtypes.CoInitializeEx() with no flags: sys.coinit_flags, else the STA (2)
            log.apartments[self._thread] = getattr(sys, "coinit_flags", 2)
            log.com_threads.append(self._thread)
            log.com_live[self._thread] += 1
            self.inited = True

        def __enter__(self) -> UIAutomationInitializerInThread:
            return self

        def __exit__(self, *exc: object) -> None:
            self.Uninitialize()

        def __del__(self) -> None:
            self.Uninitialize()

        def Uninitialize(self) -> None:  # noqa: N802 - mirrors uiautomation
            if self.inited:
                # CoUninitialize acts on the calling thread, whichever that is
                log.com_live[threading.get_ident()] -= 1
                self.inited = False

    module = types.ModuleType("uiautomation")
    module.PatternId = PatternId  # type: ignore[attr-defined]
    module.GetRootControl = lambda: root  # type: ignore[attr-defined]
    log.foreground = tree["foreground"]
    module.GetForegroundControl = lambda: handles.get(log.foreground)  # type: ignore[attr-defined]
    module.OPERATION_WAIT_TIME = OPERATION_WAIT_TIME  # type: ignore[attr-defined]
    module.COMError = COMError  # type: ignore[attr-defined]
    module.UIAutomationInitializerInThread = UIAutomationInitializerInThread  # type: ignore[attr-defined]
    module.ControlTypeNames = dict(CONTROL_TYPE_NAMES)  # type: ignore[attr-defined]
    module.ControlConstructors = _constructors(log)  # type: ignore[attr-defined]
    log.root_spec = tree["root"]
    automation = types.SimpleNamespace(
        CreateCacheRequest=CacheRequest,
        RawViewCondition="RawViewCondition",
        ControlViewCondition="ControlViewCondition",
    )
    client = types.SimpleNamespace(IUIAutomation=automation)
    # the package's submodule (uiautomation/uiautomation.py), where _AutomationClient lives
    module.uiautomation = types.SimpleNamespace(  # type: ignore[attr-defined]
        _AutomationClient=types.SimpleNamespace(instance=lambda: client)
    )
    return module, log
