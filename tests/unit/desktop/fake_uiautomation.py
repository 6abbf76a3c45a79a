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


#: UIA_E_ELEMENTNOTAVAILABLE and CO_E_NOTINITIALIZED
ELEMENT_NOT_AVAILABLE = -2147220991
NOT_INITIALIZED = -2147221008


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
    def __init__(self, spec: dict[str, Any], log: Log) -> None:
        self._spec = spec
        self._log = log
        self._children = [_control(child, log) for child in spec.get("children", [])]

    def _check(self) -> None:
        self._log.com()
        if self._spec.get("vanished"):
            raise COMError

    def _read(self, key: str, default: Any) -> Any:
        self._check()
        self._log.reads += 1
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
        self._check()
        self._log.reads += 1
        return list(self._children)

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

    def __init__(self, spec: dict[str, Any], log: Log, *, top_level: bool = False) -> None:
        super().__init__(spec, log)
        self._top_level = top_level

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


def _control(spec: dict[str, Any], log: Log, *, top_level: bool = False) -> Control:
    if spec.get("type") in ("WindowControl", "PaneControl"):
        return TopLevelControl(spec, log, top_level=top_level)
    return Control(spec, log)


def load(name: str) -> tuple[types.ModuleType, Log]:
    """A module object standing in for `uiautomation`, over the tree in data/<name>.json."""
    tree = json.loads((DATA / name).read_text(encoding="utf-8"))
    log = Log()
    root = Control(tree["root"], log)
    root._children = [
        _control(child, log, top_level=True) for child in tree["root"].get("children", [])
    ]
    # comtypes initialises COM on the thread that imports it
    log.com_live[threading.get_ident()] += 1
    handles = {child.NativeWindowHandle: child for child in root._children}
    log.reads = 0

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
    return module, log
