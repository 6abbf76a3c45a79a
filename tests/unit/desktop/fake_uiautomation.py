"""A fake `uiautomation` module fed with control trees (tests/unit/desktop/data/uia_*.json).

It mirrors the parts of uiautomation 2.x the UIA backend uses: GetRootControl,
GetForegroundControl, Control properties (Name, ControlTypeName, BoundingRectangle,
IsEnabled, HasKeyboardFocus, IsPassword, IsOffscreen, NativeWindowHandle), GetChildren,
GetPattern(PatternId.X) → pattern or None, SetFocus / SetActive, and
UIAutomationInitializerInThread. Every call is recorded, with the thread it came from.
"""

from __future__ import annotations

import json
import threading
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"


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
    reads: int = 0

    def record(self, what: str, control: Control, arg: Any = None) -> None:
        self.calls.append((what, control.Name, arg))
        self.threads.add(threading.get_ident())


class _Pattern:
    def __init__(self, control: Control, name: str) -> None:
        self._control = control
        self._name = name

    def Invoke(self) -> None:  # noqa: N802 - mirrors uiautomation
        self._control._log.record("Invoke", self._control)

    def Toggle(self) -> None:  # noqa: N802
        self._control._log.record("Toggle", self._control)

    def Select(self) -> None:  # noqa: N802
        self._control._log.record("Select", self._control)

    def Expand(self) -> None:  # noqa: N802
        self._control._log.record("Expand", self._control)

    def DoDefaultAction(self) -> None:  # noqa: N802
        self._control._log.record("DoDefaultAction", self._control)

    @property
    def DefaultAction(self) -> str:  # noqa: N802
        return str(self._control._spec.get("default_action", ""))

    @property
    def IsReadOnly(self) -> bool:  # noqa: N802
        return bool(self._control._spec.get("readonly", False))

    @property
    def Value(self) -> str:  # noqa: N802
        return str(self._control._spec.get("value", ""))

    def SetValue(self, value: Any) -> None:  # noqa: N802
        self._control._spec["value"] = value
        self._control._log.record("SetValue", self._control, value)


class Control:
    def __init__(self, spec: dict[str, Any], log: Log) -> None:
        self._spec = spec
        self._log = log
        self._children = [Control(child, log) for child in spec.get("children", [])]

    def _read(self, key: str, default: Any) -> Any:
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
        self._log.reads += 1
        return list(self._children)

    def GetPattern(self, pattern_id: int) -> _Pattern | None:  # noqa: N802
        for name in self._spec.get("patterns", []):
            if _PATTERN_IDS[name] == pattern_id:
                return _Pattern(self, name)
        return None

    def SetFocus(self) -> bool:  # noqa: N802
        self._log.record("SetFocus", self)
        return True

    def __repr__(self) -> str:
        return f"<{self.ControlTypeName} {self.Name!r}>"


class TopLevelControl(Control):
    """WindowControl / PaneControl: the top-level mixin adds SetActive."""

    def SetActive(self) -> bool:  # noqa: N802
        self._log.record("SetActive", self)
        return True


def load(name: str) -> tuple[types.ModuleType, Log]:
    """A module object standing in for `uiautomation`, over the tree in data/<name>.json."""
    tree = json.loads((DATA / name).read_text(encoding="utf-8"))
    log = Log()
    root = Control(tree["root"], log)
    root._children = [
        TopLevelControl(child, log)
        if child["type"] in ("WindowControl", "PaneControl")
        else Control(child, log)
        for child in tree["root"].get("children", [])
    ]
    handles = {child.NativeWindowHandle: child for child in root._children}
    log.reads = 0

    class UIAutomationInitializerInThread:
        def __enter__(self) -> UIAutomationInitializerInThread:
            log.com_threads.append(threading.get_ident())
            return self

        def __exit__(self, *exc: object) -> bool:
            return False

    module = types.ModuleType("uiautomation")
    module.PatternId = PatternId  # type: ignore[attr-defined]
    module.GetRootControl = lambda: root  # type: ignore[attr-defined]
    module.GetForegroundControl = lambda: handles[tree["foreground"]]  # type: ignore[attr-defined]
    module.UIAutomationInitializerInThread = UIAutomationInitializerInThread  # type: ignore[attr-defined]
    return module, log
