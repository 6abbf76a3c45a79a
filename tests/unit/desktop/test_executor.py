"""DesktopExecutor over a recording input driver: mapping, elements, stops, key validation."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.errors import (
    InvalidArguments,
    NoSuchTarget,
    StopRequested,
    ToolError,
    UnknownTool,
)
from desktop_agent.core.models import Element, MonitorArea, Observation, ScreenMapping, ToolResult
from desktop_agent.core.ports import ToolContext
from desktop_agent.core.tools import ToolSpec
from desktop_agent.desktop import executor as executor_module
from desktop_agent.desktop.executor import WAIT_TICK_S, DesktopExecutor
from desktop_agent.desktop.inventory import RawElement
from desktop_agent.desktop.observer import DesktopObserver
from tests.unit.desktop.fakes import (
    FakeBackend,
    FakeCapture,
    FakeDriver,
    FakePaster,
    executor_with,
)

REGISTRY = builtin_registry()
#: a secondary monitor left of the primary, shown at 1280x720 (scale 1.5)
MAPPING = ScreenMapping(scale_x=1.5, scale_y=1.5, offset_x=-1920, offset_y=0)
SAVE = Element(id=7, role="button", name="Save", box=(600, 400, 80, 24))


def observation(*elements: Element, mapping: ScreenMapping = MAPPING) -> Observation:
    return Observation(
        image=b"jpeg", mime="image/jpeg", width=1280, height=720, elements=elements, mapping=mapping
    )


def context(
    obs: Observation | None = None, cancelled: threading.Event | None = None
) -> ToolContext:
    return ToolContext(
        "run", obs if obs is not None else observation(SAVE), cancelled or threading.Event()
    )


async def run(
    executor: DesktopExecutor, tool: str, ctx: ToolContext | None = None, **args: Any
) -> ToolResult:
    spec, validated = REGISTRY.validate(tool, args)
    try:
        return await executor.execute(spec, validated, ctx or context())
    finally:
        executor.close()


async def test_click_lands_where_the_mapping_says_on_a_negative_origin_monitor() -> None:
    driver = FakeDriver()

    result = await run(executor_with(driver), "click", x=640, y=360)

    assert driver.events == [("click", -960, 540, "left", 1)]
    assert result.summary == "clicked (640, 360)"
    assert result.target == (640, 360)


async def test_click_on_an_element_hits_its_centre_and_names_it() -> None:
    driver = FakeDriver()

    result = await run(executor_with(driver), "click", element=7, button="right", clicks=2)

    # centre (640, 412) → (-1920 + 640*1.5 + 0.25, 412*1.5 + 0.25) rounded
    # one click at a time, so that a stop between them clicks no more
    assert driver.events == [("click", -960, 618, "right", 1)] * 2
    assert result.summary == 'right-clicked [7] button "Save" twice'
    assert result.target == (640, 412)


async def test_a_click_on_a_fail_safe_corner_is_moved_one_pixel_inwards() -> None:
    driver = FakeDriver()
    primary = observation(mapping=ScreenMapping(1.5, 1.5, 0, 0))

    await run(executor_with(driver), "click", context(primary), x=0, y=0)

    assert driver.events == [("click", 1, 1, "left", 1)]


async def test_unknown_element_and_off_screenshot_point_fail_before_any_input() -> None:
    # the model's mistakes, not the tool's: the loop's breaker does not count them
    driver = FakeDriver()

    with pytest.raises(NoSuchTarget, match=r"no element 99 in the last observation \(ids 7-7\)"):
        await run(executor_with(driver), "click", element=99)
    with pytest.raises(
        NoSuchTarget, match=r"point \(1300, 10\) is outside the 1280x720 screenshot"
    ):
        await run(executor_with(driver), "move_mouse", x=1300, y=10)
    away = replace(
        observation(SAVE), elsewhere=(Element(8, "button", "Send", (0, 0, 0, 0), monitor=2),)
    )
    with pytest.raises(NoSuchTarget, match="^element 8 is on monitor 2, which the screenshot"):
        await run(executor_with(driver), "click", context(away), element=8)
    assert driver.events == []
    # no observation at all is ours to mend, not the model's: the breaker counts it
    no_look = ToolContext("run", None, threading.Event())
    with pytest.raises(ToolError, match="there is no observation") as raised:
        await run(executor_with(driver), "click", no_look, element=7)
    assert not isinstance(raised.value, NoSuchTarget)


async def test_unknown_key_names_are_refused_before_anything_is_pressed() -> None:
    driver = FakeDriver()

    with pytest.raises(InvalidArguments, match="unknown key 'kontrol'"):
        await run(executor_with(driver), "hotkey", keys=["kontrol", "s"])
    assert driver.events == []


async def test_hotkey_presses_canonical_names_of_aliases() -> None:
    driver = FakeDriver()

    result = await run(executor_with(driver), "hotkey", keys=["Control", "Shift", "Return"])

    assert driver.events == [("hotkey", "ctrl", "shift", "enter")]
    assert result.summary == "pressed ctrl+shift+enter"


async def test_ascii_text_is_typed_one_key_per_character_then_enter() -> None:
    driver = FakeDriver()
    paster = FakePaster()

    result = await run(
        executor_with(driver, paster=paster), "type_text", text="Hi 2\tx\r\n", enter=True
    )

    assert driver.presses == ["H", "i", "space", "2", "tab", "x", "enter", "enter"]
    assert paster.pasted == []
    assert result.summary == "typed 7 characters and pressed enter"


async def test_non_ascii_text_goes_through_the_clipboard_with_ctrl_v() -> None:
    driver = FakeDriver()
    paster = FakePaster()

    result = await run(executor_with(driver, paster=paster), "type_text", text="héllo wörld €")

    assert paster.pasted == ["héllo wörld €"]
    assert driver.events == [("hotkey", "ctrl", "v")]
    assert result.summary == "typed 13 characters (pasted through the clipboard)"


async def test_stop_during_type_text_stops_within_one_keystroke() -> None:
    cancelled = threading.Event()
    # the stop arrives while the 5th key is being pressed
    driver = FakeDriver(on_press=lambda count: cancelled.set() if count == 5 else None)

    with pytest.raises(StopRequested, match="after 5 of 26 keys"):
        await run(
            executor_with(driver, key_interval_s=0.001),
            "type_text",
            context(cancelled=cancelled),
            text="abcdefghijklmnopqrstuvwxyz",
            enter=True,
        )

    assert driver.presses == ["a", "b", "c", "d", "e"]


async def test_a_stopped_run_sends_no_input_at_all() -> None:
    driver = FakeDriver()
    cancelled = threading.Event()
    cancelled.set()

    with pytest.raises(StopRequested):
        await run(executor_with(driver), "click", context(cancelled=cancelled), x=1, y=1)
    assert driver.events == []


async def test_the_fail_safe_corner_surfaces_as_a_user_stop() -> None:
    driver = FakeDriver(raise_on="click")

    with pytest.raises(StopRequested, match="fail-safe"):
        await run(executor_with(driver), "click", x=10, y=10)


async def test_drag_moves_in_steps_and_releases_the_button_when_stopped() -> None:
    cancelled = threading.Event()
    driver = FakeDriver()
    moves: list[int] = []

    def move(x: int, y: int) -> None:
        driver.events.append(("move", x, y))
        moves.append(x)
        if len(moves) == 4:  # stop during the 3rd step
            cancelled.set()

    driver.move = move  # type: ignore[method-assign]

    with pytest.raises(StopRequested, match="during drag"):
        await run(
            executor_with(driver), "drag", context(cancelled=cancelled), x=0, y=0, to_x=100, to_y=0
        )

    kinds = [event[0] for event in driver.events]
    assert kinds == ["move", "down", "move", "move", "move", "up"]
    # released where the pointer was when the stop came (step 3 of 12 towards x=-1770)
    assert driver.events[-1] == ("up", -1883, 0, "left")


async def test_a_stop_as_the_drag_reaches_its_start_presses_no_button() -> None:
    # the pointer's move to the start was under way when the stop came: the button does not
    # go down after it (a press and its release: a click where the drag would have begun)
    cancelled = threading.Event()
    driver = FakeDriver()

    def move(x: int, y: int) -> None:
        driver.events.append(("move", x, y))
        cancelled.set()

    driver.move = move  # type: ignore[method-assign]

    with pytest.raises(StopRequested, match="during drag"):
        await run(
            executor_with(driver), "drag", context(cancelled=cancelled), x=0, y=0, to_x=100, to_y=0
        )

    assert [event[0] for event in driver.events] == ["move"]


async def test_drag_goes_from_start_to_end_with_the_left_button_held() -> None:
    driver = FakeDriver()

    result = await run(executor_with(driver), "drag", x=100, y=100, to_x=200, to_y=300)

    assert driver.events[0] == ("move", -1770, 150)
    assert driver.events[1] == ("down", -1770, 150, "left")
    assert driver.events[-2] == ("move", -1620, 450)
    assert driver.events[-1] == ("up", -1620, 450, "left")
    assert result.target == (200, 300)


async def test_scroll_at_a_point_and_without_one() -> None:
    driver = FakeDriver()

    up = await run(executor_with(driver), "scroll", amount=3, x=640, y=360)
    down = await run(executor_with(driver), "scroll", amount=-2)

    # one notch at a time, so that a stop between them turns the wheel no more
    assert driver.events == [("scroll", 1, -960, 540)] * 3 + [("scroll", -1, None, None)] * 2
    assert up.summary == "scrolled up 3 at (640, 360)"
    assert down.summary == "scrolled down 2"


class LoopClock:
    """The executor's clock and its `asyncio.sleep`, moved by the sleeps it asks for: the wait
    tool's timing is checked against the time it reads, not the machine's."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 0.0
        self.slept: list[float] = []
        self.on_sleep: Any = None
        real_sleep = asyncio.sleep

        async def sleep(seconds: float) -> None:
            self.slept.append(seconds)
            self.now += seconds
            if self.on_sleep is not None:
                self.on_sleep(self.now)
            await real_sleep(0)

        monkeypatch.setattr(executor_module, "time", SimpleNamespace(monotonic=lambda: self.now))
        monkeypatch.setattr(
            executor_module, "asyncio", SimpleNamespace(**{**vars(asyncio), "sleep": sleep})
        )


async def test_wait_ends_at_once_when_the_run_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = LoopClock(monkeypatch)
    cancelled = threading.Event()
    clock.on_sleep = lambda now: cancelled.set() if now >= 1.0 else None

    with pytest.raises(StopRequested, match="during wait"):
        await run(executor_with(FakeDriver()), "wait", context(cancelled=cancelled), seconds=30)

    # the stop flag went up 1 s into a 30 s wait; it was seen before the next tick was slept
    assert 1.0 <= clock.now < 1.0 + WAIT_TICK_S + 1e-9
    assert max(clock.slept) <= WAIT_TICK_S


async def test_wait_waits_the_seconds_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = LoopClock(monkeypatch)

    result = await run(executor_with(FakeDriver()), "wait", seconds=0.05)

    assert clock.now == pytest.approx(0.05)
    assert result.summary == "waited 0.05 s"


async def test_launch_app_of_a_missing_program_fails_naming_it() -> None:
    with pytest.raises(
        ToolError, match="program not found: 'no-such-program-xyz' \\(not on PATH\\)"
    ):
        await run(executor_with(FakeDriver()), "launch_app", command="no-such-program-xyz --help")


def wait_for_file(path: Path, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return path.read_text()


@pytest.mark.posix
async def test_launch_app_uses_no_shell(tmp_path: Path) -> None:
    out = tmp_path / "argv.txt"
    script = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text(repr(sys.argv[2:]))"
    command = f"{sys.executable} -c '{script}' {out} '$HOME' '>' x;y"

    result = await run(executor_with(FakeDriver()), "launch_app", command=command)

    # it ends as soon as it has written: "ran ... code 0", or "started" on a slow machine
    assert result.summary.split(" ", 1)[0] in ("ran", "started")
    assert result.summary.split(" ", 2)[1] == sys.executable
    written = await asyncio.to_thread(wait_for_file, out)
    assert written == repr(["$HOME", ">", "x;y"])


@pytest.mark.posix
async def test_launch_app_of_a_program_that_fails_at_once_reports_its_exit_code() -> None:
    command = f"{sys.executable} -c 'raise SystemExit(3)'"

    with pytest.raises(ToolError, match="exited at once with code 3"):
        await run(executor_with(FakeDriver()), "launch_app", command=command)


@pytest.mark.posix
async def test_unbalanced_quotes_in_a_command_are_a_clear_error() -> None:
    with pytest.raises(ToolError, match="cannot split the command"):
        await run(executor_with(FakeDriver()), "launch_app", command="l3afpad 'unclosed")


async def test_a_tool_the_desktop_does_not_know_is_unknown() -> None:
    from pydantic import BaseModel

    class NoArgs(BaseModel):
        pass

    spec = ToolSpec("teleport", "no such thing", NoArgs, REGISTRY.get("click").risk)
    with pytest.raises(UnknownTool, match="the desktop has no tool 'teleport'"):
        await executor_with(FakeDriver()).execute(spec, NoArgs(), context())


# -- accessibility tools through the observer's inventory thread ----------------------------


async def observed(backend: FakeBackend) -> tuple[DesktopObserver, Observation]:
    observer = DesktopObserver(
        backend=backend, capture=FakeCapture(MonitorArea(1, 0, 0, 1920, 1080), (1280, 720))
    )
    return observer, await observer.observe()


async def test_invoke_and_set_value_reach_the_native_object_on_the_inventory_thread() -> None:
    backend = FakeBackend(
        [
            RawElement("window", "Editor", (0, 0, 1920, 1080), native=("x11", 42)),
            RawElement("menu", "File", (660, 347, 39, 25), native=("atspi", "file-node")),
            RawElement("edit", "", (661, 373, 598, 373), native=("atspi", "text-node")),
        ]
    )
    observer, obs = await observed(backend)
    executor = executor_with(FakeDriver(), observer=observer)
    # the loop hands tools a copy that carries the screenshot path
    ctx = context(obs.with_(screenshot_path="runs/r/0001.jpg"))
    try:
        invoked = await run(executor, "invoke", ctx, element=2)
        set_value = await run(executor, "set_value", ctx, element=3, value="hello")
        focused = await run(executor, "focus_window", ctx, element=1)
        by_title = await run(executor, "focus_window", ctx, title="Editor")
    finally:
        observer.close()

    assert backend.actions == [
        ("invoke", ("atspi", "file-node")),
        ("set_value", (("atspi", "text-node"), "hello")),
        ("focus", ("x11", 42)),
        ("activate", "Editor"),
    ]
    assert len(backend.threads) == 1 and threading.get_ident() not in backend.threads
    assert invoked.summary == 'invoked [2] menu "File" (fake action)'
    assert set_value.summary == 'set [3] edit "" to 5 characters (fake set)'
    assert focused.summary == "focused it"
    assert by_title.summary == 'focused window "Editor"'


async def test_focus_window_of_a_missing_title_is_a_tool_error_listing_windows() -> None:
    observer, obs = await observed(FakeBackend())
    try:
        with pytest.raises(ToolError, match="no window titled 'missing'; open windows: none"):
            await run(
                executor_with(FakeDriver(), observer=observer), "focus_window", title="missing"
            )
    finally:
        observer.close()


async def test_invoke_on_an_observation_the_observer_did_not_make_says_why() -> None:
    executor = executor_with(FakeDriver())

    with pytest.raises(
        ToolError, match='element 7 \\(button "Save"\\) has no accessibility object'
    ):
        await run(executor, "invoke", element=7)


async def test_a_click_with_keys_held_presses_them_around_it_and_lets_them_go_in_reverse() -> None:
    driver = FakeDriver()

    await run(executor_with(driver), "click", x=640, y=360, hold=["ctrl", "Shift"])

    assert driver.events == [
        ("key_down", "ctrl"),
        ("key_down", "shift"),
        ("click", -960, 540, "left", 1),
        ("key_up", "shift"),
        ("key_up", "ctrl"),
    ]


async def test_keys_held_through_a_drag_are_let_go_when_it_is_stopped() -> None:
    cancelled = threading.Event()
    driver = FakeDriver()

    def move(x: int, y: int) -> None:
        driver.events.append(("move", x, y))
        if len(driver.events) == 5:  # the drag's second step
            cancelled.set()

    driver.move = move  # type: ignore[method-assign]

    with pytest.raises(StopRequested, match="during drag"):
        await run(
            executor_with(driver), "drag", context(cancelled=cancelled),
            x=0, y=0, to_x=100, to_y=0, hold=["shift"],
        )  # fmt: skip

    kinds = [event[0] for event in driver.events]
    assert kinds[0] == "key_down" and kinds[-2:] == ["up", "key_up"]
    assert driver.events[-1] == ("key_up", "shift")


async def test_a_key_held_is_let_go_when_the_action_fails() -> None:
    driver = FakeDriver(raise_on="scroll")

    with pytest.raises(StopRequested):
        await run(executor_with(driver), "scroll", amount=2, x=640, y=360, hold=["ctrl"])

    assert driver.events == [("key_down", "ctrl"), ("key_up", "ctrl")]


async def test_a_drag_with_a_path_passes_through_each_of_its_points_in_order() -> None:
    driver = FakeDriver()

    result = await run(
        executor_with(driver), "drag", x=100, y=100, to_x=300, to_y=100, via=[[200, 200]]
    )

    moves = [event[1:] for event in driver.events if event[0] == "move"]
    # (200, 200) is (-1620, 300) on the screen: reached at the end of the first leg
    assert moves[0] == (-1770, 150)
    assert moves[6] == (-1620, 300)
    assert moves[-1] == (-1470, 150)
    assert [event[0] for event in driver.events].count("down") == 1
    assert driver.events[-1] == ("up", -1470, 150, "left")
    assert result.target == (300, 100)
