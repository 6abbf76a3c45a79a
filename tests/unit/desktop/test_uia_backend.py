"""The Windows UI Automation backend against a fake `uiautomation` fed with control trees."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.errors import ToolError
from desktop_agent.core.models import MonitorArea
from desktop_agent.core.ports import ToolContext
from desktop_agent.desktop.geometry import mapping_for
from desktop_agent.desktop.inventory import InventoryRunner, WalkLimits, to_elements
from desktop_agent.desktop.inventory.base import NoSuchWindow
from desktop_agent.desktop.inventory.uia import UiaInventory
from desktop_agent.desktop.observer import DesktopObserver
from tests.unit.desktop import fake_uiautomation
from tests.unit.desktop.fakes import FakeCapture, FakeDriver, executor_with

PRIMARY = MonitorArea(1, 0, 0, 1920, 1080, primary=True)
NO_PAINT = (
    "no window titled 'Paint'; open windows: "
    '"Untitled - Notepad", "Documents - File Explorer", "Taskbar"$'
)


@pytest.fixture
def notepad(monkeypatch: pytest.MonkeyPatch) -> fake_uiautomation.Log:
    module, log = fake_uiautomation.load("uia_notepad.json")
    monkeypatch.setitem(sys.modules, "uiautomation", module)
    return log


@pytest.fixture
def login(monkeypatch: pytest.MonkeyPatch) -> fake_uiautomation.Log:
    module, log = fake_uiautomation.load("uia_login.json")
    monkeypatch.setitem(sys.modules, "uiautomation", module)
    return log


def snapshot(limits: WalkLimits | None = None) -> tuple[UiaInventory, list[Any], str]:
    backend = UiaInventory()
    backend.thread_init()
    raw, used = backend.snapshot(limits or WalkLimits())
    return backend, raw, used


def test_notepad_lists_visible_windows_then_its_interactive_controls(
    notepad: fake_uiautomation.Log,
) -> None:
    _, raw, used = snapshot()

    assert used == "uia"
    assert [(e.role, e.name, e.focused) for e in raw] == [
        ("window", "Untitled - Notepad", True),
        ("window", "Documents - File Explorer", False),
        ("window", "Taskbar", False),
        # breadth first: the window's children, then grandchildren, ...
        ("edit", "Text Editor", True),
        ("button", "Minimize", False),
        ("button", "Maximize", False),
        ("button", "Close", False),
        ("menuitem", "File", False),
        ("menuitem", "Edit", False),
        ("menuitem", "Format", False),
        ("menuitem", "View", False),
        ("menuitem", "Help", False),
        ("menuitem", "System", False),
    ]
    edit = next(e for e in raw if e.role == "edit")
    assert edit.rect == (208, 151, 944, 619)  # right/bottom turned into width/height


def test_notepad_inventory_text_in_screenshot_pixels(notepad: fake_uiautomation.Log) -> None:
    _, raw, _ = snapshot()

    elements, natives = to_elements(raw, mapping_for(PRIMARY, (1280, 720)), (1280, 720))

    text = "\n".join(element.line() for element in elements)
    # (200, 100)-(1160, 800) / 1.5 = (133.3, 66.7)-(773.3, 533.3), widened to whole pixels
    assert text.splitlines()[:4] == [
        '[1] window "Untitled - Notepad" @ 133,66 641x468 focused',
        '[2] window "Taskbar" @ 0,693 1280x27',
        '[3] edit "Text Editor" @ 138,100 630x414 focused',
        '[4] button "Minimize" @ 676,67 31x21',
    ]
    # the Explorer window on the monitor left of the primary is not on this screenshot
    assert "File Explorer" not in text
    assert set(natives) == {element.id for element in elements}


def test_sign_in_dialog_marks_password_disabled_and_skips_offscreen(
    login: fake_uiautomation.Log,
) -> None:
    _, raw, _ = snapshot()

    flags = {(e.role, e.name): (e.enabled, e.focused, e.password) for e in raw}
    assert flags[("edit", "Password")] == (True, True, True)
    assert flags[("button", "Sign in")] == (False, False, False)
    assert ("listitem", "old") not in flags
    assert ("listitem", "lab") in flags
    # static text and images are structure, not elements
    assert not any(e.name == "Logo" for e in raw)
    assert [e.name for e in raw if e.role == "edit"] == ["User name", "Password", "Server"]


def test_walk_stops_at_the_element_and_depth_limits(notepad: fake_uiautomation.Log) -> None:
    _, raw, _ = snapshot(WalkLimits(max_elements=5))
    assert len(raw) == 5

    _, shallow, _ = snapshot(WalkLimits(max_depth=1))
    assert [e.name for e in shallow if e.role != "window"] == ["Text Editor"]


def test_walk_returns_what_it_has_when_the_deadline_passes(
    notepad: fake_uiautomation.Log,
) -> None:
    # the walk reads one cached subtree in-process, asking the clock before each node: a
    # clock that ticks at each look passes the deadline half-way through the window
    ticks = iter(range(1_000))
    limits = WalkLimits(deadline=10, clock=lambda: next(ticks))

    _, raw, _ = snapshot(limits)

    _, full, _ = snapshot()
    assert 0 < len(raw) < len(full)
    assert [e.name for e in raw] == [e.name for e in full[: len(raw)]]


def test_invoke_uses_invoke_then_toggle_select_and_default_action(
    login: fake_uiautomation.Log,
) -> None:
    backend, raw, _ = snapshot()
    by_name = {e.name: e.native for e in raw}

    assert backend.invoke(by_name["Cancel"]) == "UIA Invoke"
    assert backend.invoke(by_name["Remember me"]) == "UIA Toggle"
    assert backend.invoke(by_name["lab"]) == "UIA Select"
    assert backend.invoke(by_name["Forgot password?"]) == "UIA default action 'Jump'"
    assert [call[:2] for call in login.calls] == [
        ("Invoke", "Cancel"),
        ("Toggle", "Remember me"),
        ("Select", "lab"),
        ("DoDefaultAction", "Forgot password?"),
    ]
    # uiautomation sleeps OPERATION_WAIT_TIME (0.5 s) after an action unless told 0
    assert login.waits == [0.0, 0.0, 0.0, 0.0]


def test_invoke_without_a_pattern_says_to_click(notepad: fake_uiautomation.Log) -> None:
    backend, raw, _ = snapshot()
    text_editor = next(e.native for e in raw if e.name == "Text Editor")

    with pytest.raises(LookupError, match="no UIA invoke, toggle or select pattern; use click"):
        backend.invoke(text_editor)


def test_set_value_through_the_value_pattern_and_refused_when_read_only(
    login: fake_uiautomation.Log,
) -> None:
    backend, raw, _ = snapshot()
    by_name = {e.name: e.native for e in raw}

    assert backend.set_value(by_name["User name"], "grace") == "UIA SetValue"
    assert login.calls[-1] == ("SetValue", "User name", "grace")
    with pytest.raises(LookupError, match="read-only"):
        backend.set_value(by_name["Server"], "other")
    with pytest.raises(LookupError, match="no UIA value pattern"):
        backend.set_value(by_name["Cancel"], "x")


def test_focus_window_by_title_activates_the_top_level_window(
    notepad: fake_uiautomation.Log,
) -> None:
    backend, _, _ = snapshot()

    assert backend.activate_window("file explorer") == 'focused window "Documents - File Explorer"'
    assert notepad.calls[-1][:2] == ("SetActive", "Documents - File Explorer")
    with pytest.raises(
        LookupError,
        match=NO_PAINT,
    ):
        backend.activate_window("Paint")


async def test_invoke_tool_runs_on_the_thread_that_initialised_com(
    login: fake_uiautomation.Log,
) -> None:
    observer = DesktopObserver(backend=UiaInventory(), capture=FakeCapture(PRIMARY, (1280, 720)))
    executor = executor_with(FakeDriver(), observer=observer)
    try:
        observation = await observer.observe()
        cancel = next(e for e in observation.elements if e.name == "Cancel")
        spec, args = builtin_registry().validate("invoke", {"element": cancel.id})

        result = await executor.execute(
            spec,
            args,
            ToolContext("run", observation.with_(screenshot_path="x.jpg"), threading.Event()),
        )
    finally:
        observer.close()
        executor.close()

    assert result.ok
    assert result.summary == f'invoked [{cancel.id}] button "Cancel" (UIA Invoke)'
    assert observation.inventory_backend == "uia"
    assert len(login.com_threads) == 1
    assert login.threads == {login.com_threads[0]}
    assert login.com_threads[0] != threading.get_ident()


async def test_set_value_on_an_element_without_a_value_pattern_is_a_clear_tool_error(
    login: fake_uiautomation.Log,
) -> None:
    observer = DesktopObserver(backend=UiaInventory(), capture=FakeCapture(PRIMARY, (1280, 720)))
    executor = executor_with(FakeDriver(), observer=observer)
    try:
        observation = await observer.observe()
        box = next(e for e in observation.elements if e.name == "Remember me")
        spec, args = builtin_registry().validate("set_value", {"element": box.id, "value": "x"})
        with pytest.raises(ToolError, match="no UIA value pattern; use click and type_text"):
            await executor.execute(spec, args, ToolContext("run", observation, threading.Event()))
    finally:
        observer.close()
        executor.close()


def test_runner_picks_no_backend_on_windows_without_uiautomation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from desktop_agent.desktop.inventory import choose_backend

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "uiautomation", None)

    backend = choose_backend()

    assert backend.name == "none"
    assert "pip install uiautomation" in getattr(backend, "reason", "")


def test_runner_picks_uia_on_windows(
    monkeypatch: pytest.MonkeyPatch, notepad: fake_uiautomation.Log
) -> None:
    from desktop_agent.desktop.inventory import choose_backend

    monkeypatch.setattr(sys, "platform", "win32")

    runner = InventoryRunner()
    try:
        raw, used = runner.submit(lambda backend: backend.snapshot(WalkLimits())).result(5)
    finally:
        runner.close()
    assert choose_backend().name == "uia"
    assert used == "uia" and raw


def test_an_action_the_library_reports_failed_is_an_error_not_a_success(
    login: fake_uiautomation.Log,
) -> None:
    backend, raw, _ = snapshot()
    by_name = {e.name: e.native for e in raw}
    by_name["Cancel"]._spec["fails"] = ["Invoke"]
    by_name["User name"]._spec["fails"] = ["SetValue"]

    with pytest.raises(LookupError, match="the element did not accept UIA Invoke"):
        backend.invoke(by_name["Cancel"])
    with pytest.raises(LookupError, match="the element did not accept UIA SetValue"):
        backend.set_value(by_name["User name"], "grace")
    assert by_name["User name"]._spec.get("value") != "grace"


def test_a_control_that_vanished_is_skipped_by_the_walk_and_fails_the_action(
    notepad: fake_uiautomation.Log,
) -> None:
    backend, raw, _ = snapshot()
    file_menu = next(e.native for e in raw if e.name == "File")
    file_menu._spec["vanished"] = True

    _, after, _ = snapshot()
    with pytest.raises(LookupError, match="the element is gone"):
        backend.invoke(file_menu)
    assert "File" not in [e.name for e in after]
    assert "Edit" in [e.name for e in after]


def test_a_vanished_control_is_gone_for_every_action_never_a_click_to_try(
    login: fake_uiautomation.Log,
) -> None:
    # GetPattern swallows the COMError and answers None, SetFocus answers False: without a
    # second look the model would be told to click where the control was
    backend, raw, _ = snapshot()
    by_name = {e.name: e.native for e in raw}
    for name in ("Cancel", "User name"):
        by_name[name]._spec["vanished"] = True

    with pytest.raises(LookupError, match="the element is gone .*; observe again"):
        backend.invoke(by_name["Cancel"])
    with pytest.raises(LookupError, match="the element is gone .*; observe again"):
        backend.set_value(by_name["User name"], "grace")
    with pytest.raises(LookupError, match="the element is gone .*; observe again"):
        backend.focus(by_name["User name"])
    assert login.calls == []


def test_the_backend_sets_no_library_global_and_passes_wait_time_zero(
    login: fake_uiautomation.Log,
) -> None:
    # the package's OPERATION_WAIT_TIME is a copy (uiautomation/__init__.py star-imports):
    # setting it changes nothing, so only waitTime=0 on each call counts
    backend, raw, _ = snapshot()
    backend.invoke(next(e.native for e in raw if e.name == "Cancel"))

    assert sys.modules["uiautomation"].OPERATION_WAIT_TIME == fake_uiautomation.OPERATION_WAIT_TIME
    assert login.waits == [0.0]


def test_after_a_hung_inventory_thread_the_new_thread_keeps_its_com(
    login: fake_uiautomation.Log,
) -> None:
    # the initializer's __del__ uninitialises COM on whatever thread drops it: replacing the
    # old one on the new thread would undo the new thread's CoInitializeEx
    runner = InventoryRunner(UiaInventory())
    try:
        runner.submit(lambda backend: backend.snapshot(WalkLimits())).result(5)
        runner.abandon_thread("a call hung")
        raw, used = runner.submit(lambda backend: backend.snapshot(WalkLimits())).result(5)
    finally:
        runner.close()

    assert used == "uia" and raw
    assert len(login.com_threads) == 2
    first, second = login.com_threads
    assert first != second != threading.get_ident()


def test_without_a_foreground_window_only_the_windows_are_listed(
    notepad: fake_uiautomation.Log, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.modules["uiautomation"], "GetForegroundControl", lambda: None)

    _, raw, used = snapshot()

    assert used == "uia"
    assert [(e.role, e.focused) for e in raw] == [("window", False)] * 3


def test_focus_on_a_pane_that_is_not_top_level_falls_back_to_set_focus(
    notepad: fake_uiautomation.Log,
) -> None:
    backend, _, _ = snapshot()
    pane = fake_uiautomation._control(
        {"type": "PaneControl", "name": "Inner pane", "rect": [0, 0, 10, 10]}, notepad
    )

    assert backend.focus(pane) == "focused it through UIA"
    assert notepad.calls[-1][:2] == ("SetFocus", "Inner pane")
    pane._spec["fails"] = ["SetFocus"]
    with pytest.raises(LookupError, match="did not accept the focus"):
        backend.focus(pane)


async def test_a_failed_uia_invoke_fails_the_invoke_step(login: fake_uiautomation.Log) -> None:
    observer = DesktopObserver(backend=UiaInventory(), capture=FakeCapture(PRIMARY, (1280, 720)))
    executor = executor_with(FakeDriver(), observer=observer)
    try:
        observation = await observer.observe()
        cancel = next(e for e in observation.elements if e.name == "Cancel")
        native = observer.native(observation, cancel.id)
        assert native is not None
        native._spec["fails"] = ["Invoke"]
        spec, args = builtin_registry().validate("invoke", {"element": cancel.id})
        with pytest.raises(ToolError, match="the element did not accept UIA Invoke"):
            await executor.execute(spec, args, ToolContext("run", observation, threading.Event()))
    finally:
        observer.close()
        executor.close()


def test_focus_window_by_title_never_finds_the_apps_own_window(
    notepad: fake_uiautomation.Log, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the app's main window, first among the top-level windows, holds "Agent" in its title
    own = fake_uiautomation.TopLevelControl(
        {"type": "WindowControl", "name": "Desktop Agent", "rect": [0, 0, 800, 600],
         "handle": 4242, "class": "Qt6QWindowIcon"},
        notepad,
        top_level=True,
    )  # fmt: skip
    root = sys.modules["uiautomation"].GetRootControl()
    monkeypatch.setattr(root, "_children", [own, *root._children])
    backend, _, _ = snapshot()

    # the model's mistake (NoSuchWindow): the loop's breaker does not count it
    with pytest.raises(NoSuchWindow, match="no window titled 'Agent'"):
        backend.activate_window("Agent")
    assert not [call for call in notepad.calls if call[:2] == ("SetActive", "Desktop Agent")]


def test_a_window_windows_refused_to_bring_to_the_front_fails_the_focus(
    notepad: fake_uiautomation.Log,
) -> None:
    # issue 37 item 9: SetActive is SetForegroundWindow, which Windows refuses to a process
    # in the background; on old main the step said "focused window" all the same
    backend, _, _ = snapshot()
    notepad.foreground_locked = True

    with pytest.raises(LookupError, match='Windows did not bring "Documents - File Explorer"'):
        backend.activate_window("File Explorer")

    notepad.foreground_locked = False
    assert backend.activate_window("File Explorer") == 'focused window "Documents - File Explorer"'


def test_the_inventory_thread_is_a_multithreaded_apartment(
    notepad: fake_uiautomation.Log, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 37 item 8: uiautomation's initializer left comtypes' default, the STA
    monkeypatch.setattr(sys, "coinit_flags", None, raising=False)  # undone after the test
    monkeypatch.delattr(sys, "coinit_flags")  # as a fresh process has it: unset
    done: list[int] = []

    def on_the_thread() -> None:
        UiaInventory().thread_init()
        done.append(threading.get_ident())

    thread = threading.Thread(target=on_the_thread)
    thread.start()
    thread.join(5)

    assert done and notepad.apartments[done[0]] == 0  # COINIT_MULTITHREADED
