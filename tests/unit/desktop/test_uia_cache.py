"""The UIA inventory reads a window through one cache request, within its budget, and never
acts on elements listed by an inventory thread that was abandoned (issue 37 item 8)."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.errors import ToolError
from desktop_agent.core.models import MonitorArea
from desktop_agent.core.ports import ToolContext
from desktop_agent.desktop.inventory import WalkLimits
from desktop_agent.desktop.inventory.uia import UiaInventory
from desktop_agent.desktop.observer import DesktopObserver
from tests.unit.desktop import fake_uiautomation
from tests.unit.desktop.fakes import FakeCapture, FakeDriver, executor_with

PRIMARY = MonitorArea(1, 0, 0, 1920, 1080, primary=True)
#: the modelled cost of one cross-process UIA call and of each element a cache brings back
#: (assumed, not measured on Windows: docs/windows-checklist.md check 42 measures it)
CALL_S = 0.0005
ELEMENT_S = 0.00002
BUDGET_S = 0.1


def form(buttons: int) -> dict[str, Any]:
    """A window of `buttons` buttons in groups of ten, behind a menu bar (a settings page)."""
    groups = [
        {
            "type": "GroupControl",
            "name": f"Group {g}",
            "rect": [10, 40 + 30 * g, 1900, 70 + 30 * g],
            "children": [
                {
                    "type": "ButtonControl",
                    "name": f"Option {g}.{b}",
                    "rect": [10 + 150 * b, 40 + 30 * g, 150 + 150 * b, 70 + 30 * g],
                    "patterns": ["InvokePattern"],
                }
                for b in range(10)
            ],
        }
        for g in range(buttons // 10)
    ]
    window = {
        "type": "WindowControl",
        "name": "Settings",
        "rect": [0, 0, 1920, 1040],
        "handle": 501,
        "children": [{"type": "PaneControl", "name": "", "rect": [0, 30, 1920, 1040],
                      "children": groups}],
    }  # fmt: skip
    other = {"type": "WindowControl", "name": "Notes", "rect": [100, 100, 600, 500], "handle": 502}
    root = {"type": "PaneControl", "name": "Desktop 1", "rect": [0, 0, 1920, 1080],
            "handle": 65552, "children": [window, other]}  # fmt: skip
    return {"foreground": 501, "root": root}


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch) -> fake_uiautomation.Log:
    module, log = fake_uiautomation.load_tree(form(200))
    log.call_s, log.element_s = CALL_S, ELEMENT_S
    monkeypatch.setitem(sys.modules, "uiautomation", module)
    return log


def test_a_window_of_200_controls_is_listed_within_the_budget_in_three_calls(
    settings: fake_uiautomation.Log,
) -> None:
    # on old main every property was its own call and every child two more: at 0.5 ms a
    # call the 0.1 s budget ended after the windows and a few buttons
    backend = UiaInventory()
    backend.thread_init()
    limits = WalkLimits(deadline=BUDGET_S, clock=lambda: settings.now)

    raw, used = backend.snapshot(limits)

    assert used == "uia"
    names = [e.name for e in raw]
    assert names[:2] == ["Settings", "Notes"]
    assert len(raw) == limits.max_elements == 150
    assert names[2:5] == ["Option 0.0", "Option 0.1", "Option 0.2"]
    assert settings.now <= BUDGET_S
    # the foreground's handle, the desktop's children, the window's subtree
    assert settings.reads == 3


def test_an_element_of_the_cached_walk_is_a_live_control_for_actions(
    settings: fake_uiautomation.Log,
) -> None:
    backend = UiaInventory()
    backend.thread_init()
    raw, _ = backend.snapshot(WalkLimits())
    button = next(e for e in raw if e.name == "Option 3.4")

    assert backend.invoke(button.native) == "UIA Invoke"
    assert settings.calls[-1][:2] == ("Invoke", "Option 3.4")
    settings_window = next(e for e in raw if e.name == "Settings")
    assert backend.focus(settings_window.native) == 'focused window "Settings"'


def test_the_foreground_subtree_is_not_asked_for_once_the_deadline_passed(
    settings: fake_uiautomation.Log,
) -> None:
    # each call costs one "second": the handle and the windows' cache use the whole budget
    settings.call_s, settings.element_s = 1.0, 0.0
    backend = UiaInventory()
    backend.thread_init()

    raw, _ = backend.snapshot(WalkLimits(deadline=2.0, clock=lambda: settings.now))

    assert [(e.role, e.name) for e in raw] == [("window", "Settings"), ("window", "Notes")]
    assert settings.reads == 2


def test_a_level_without_children_is_a_null_array_and_an_uncached_level_an_error(
    settings: fake_uiautomation.Log,
) -> None:
    # the fake as the documentation says (GetCachedChildren): the walk must stop at a leaf
    # without reading the NULL array's Length, which comtypes answers with ValueError
    module = sys.modules["uiautomation"]
    iuia = module.uiautomation._AutomationClient.instance().IUIAutomation
    request = iuia.CreateCacheRequest()
    request.AddProperty(30005)
    request.TreeScope = 2  # TreeScope_Children
    desktop = module.GetRootControl().Element.BuildUpdatedCache(request)
    notes = desktop.GetCachedChildren().GetElement(1)

    assert notes.CachedName == "Notes"
    with pytest.raises(fake_uiautomation.COMError):
        notes.GetCachedChildren()  # its children were not asked for
    with pytest.raises(fake_uiautomation.COMError):
        desktop.CachedName  # noqa: B018 - the desktop itself was not in the scope
    request.TreeScope = 7  # TreeScope_Subtree
    leaf = module.GetRootControl().Element.BuildUpdatedCache(request).GetCachedChildren()
    empty = leaf.GetElement(1).GetCachedChildren()
    assert not empty
    with pytest.raises(ValueError, match="NULL COM pointer access"):
        empty.Length  # noqa: B018


async def test_an_element_listed_by_an_abandoned_inventory_thread_is_never_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # issue 37 item 8: the thread was given up because a UIA call hung; what it listed may
    # belong to that hung provider. On old main the invoke went ahead on the new thread.
    module, log = fake_uiautomation.load("uia_login.json")
    monkeypatch.setitem(sys.modules, "uiautomation", module)
    observer = DesktopObserver(backend=UiaInventory(), capture=FakeCapture(PRIMARY, (1280, 720)))
    executor = executor_with(FakeDriver(), observer=observer)
    try:
        observation = await observer.observe()
        cancel = next(e for e in observation.elements if e.name == "Cancel")
        assert observer.inventory is not None
        observer.inventory.abandon_thread("a call hung")
        spec, args = builtin_registry().validate("invoke", {"element": cancel.id})
        with pytest.raises(ToolError, match="listed by an accessibility thread .*; observe again"):
            await executor.execute(spec, args, ToolContext("run", observation, threading.Event()))
        assert not [call for call in log.calls if call[0] == "Invoke"]

        # a new observation lists it anew, on the new thread: usable
        again = await observer.observe()
        cancel = next(e for e in again.elements if e.name == "Cancel")
        spec, args = builtin_registry().validate("invoke", {"element": cancel.id})
        await executor.execute(spec, args, ToolContext("run", again, threading.Event()))
        assert [call[:2] for call in log.calls if call[0] == "Invoke"] == [("Invoke", "Cancel")]
    finally:
        observer.close()
        executor.close()
