"""DesktopExecutor: the built-in tools of DESIGN §3 acting on the real desktop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, cast

from pydantic import BaseModel

from desktop_agent.core import builtin_tools as tools
from desktop_agent.core.errors import (
    ActionPaused,
    DesktopChanged,
    NoSuchTarget,
    ObservationError,
    StopRequested,
    ToolError,
    UnknownTool,
)
from desktop_agent.core.models import Element, Observation, ToolResult
from desktop_agent.core.ports import Focus, ToolContext
from desktop_agent.core.tools import SCREEN_TOOL, ToolSpec
from desktop_agent.desktop.clipboard import Paster, default_paster
from desktop_agent.desktop.focus import DesktopFocusProbe
from desktop_agent.desktop.geometry import point_to_screen
from desktop_agent.desktop.input import (
    KEY_FOR_CHAR,
    InputDriver,
    PyAutoGuiDriver,
    TextTyping,
    normalize_newlines,
    typeable,
)
from desktop_agent.desktop.inventory import InventoryRunner
from desktop_agent.desktop.inventory.base import NoSuchWindow
from desktop_agent.desktop.inventory.x11 import X11WindowAtPoint
from desktop_agent.desktop.launch import Launcher
from desktop_agent.desktop.observer import DesktopObserver

log = logging.getLogger(__name__)
T = TypeVar("T")
Handler = Callable[[Any, ToolContext], Awaitable[ToolResult]]

DRAG_STEPS = 12
DRAG_STEP_S = 0.02
#: more time between the clicks of a double or triple click (a stop meanwhile clicks no more);
#: the driver already leaves 50 ms after each click (PyAutoGuiDriver.click)
CLICK_INTERVAL_S = 0.0
#: why the clicks of a double or triple click ended before the next (`WindowAtPoint`); the
#: step's error says how far they got, as a pause between them does (`Halt.error`)
UNDER_POINT_CHANGED = "the window under the point changed (a window came up or went away there)"
UNDER_POINT_UNREAD = "the window under the point could not be read again"
#: a failed step's one line: the clicks sent, why no more were
CLICKS_ENDED = (
    "after {done} of {clicks} clicks {why}, so no more were sent (the next could land on what "
    "nobody judged)"
)
WAIT_TICK_S = 0.01
#: how often a pause between input events looks whether its call was given up
GIVE_UP_POLL_S = 0.05
#: one input or accessibility call (a whole type_text is one); past it the thread is left
#: hung and a new one takes the next call. Below the loop's TOOL_TIMEOUT_S, so this clearer
#: error comes first.
CALL_TIMEOUT_S = 45.0
#: after input, the time an app gets to repaint before the action counts as done, so the
#: observation after it (the effect check's, the next turn's) shows what it did: on Xvfb
#: l3afpad had often not drawn a typed key 50 ms after it
SETTLE_S = 0.1
#: how long letting go of a held button may take before it is given up on (a hung input
#: thread): the run ends all the same
RELEASE_TIMEOUT_S = 5.0


class WindowAtPoint(Protocol):
    """What holds a screen point now (a cheap read, called on the input thread between the
    clicks of a double or triple click): an identity to compare with an earlier read, None
    when it cannot be told."""

    def __call__(self, x: int, y: int) -> str | None: ...

    def close(self) -> None: ...


def window_at_point_of(driver: InputDriver) -> WindowAtPoint | None:
    """The read of what holds a point for `driver`'s desktop: the top-level window at the
    point where pyautogui drives an X display or Windows (user32); None elsewhere (the
    Wayland portal's driver, a test's driver): the clicks of a double click are then sent
    unchecked."""
    if not isinstance(driver, PyAutoGuiDriver):
        return None
    if sys.platform == "win32":
        from desktop_agent.desktop.win_windows import Win32WindowAtPoint

        return Win32WindowAtPoint()
    return X11WindowAtPoint()


class Halt:
    """A stop or a pause, as the threads that send input see them (`ToolContext.cancelled`
    and `halted`): no input event begins once either is set, nor once the call was given up
    (its deadline passed or its await was cancelled: the step is over, whatever the thread
    still had to send is not sent). `error(what)` is StopRequested for a stop and ActionPaused
    for a pause, saying how far the action got."""

    def __init__(self, context: ToolContext) -> None:
        self.cancelled = context.cancelled
        self.event = context.halted or context.cancelled
        self._given_up = threading.Event()

    def give_up(self) -> None:
        self._given_up.set()

    def is_set(self) -> bool:
        return self.event.is_set() or self._given_up.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True (at once, or within GIVE_UP_POLL_S of a give-up) when
        halted."""
        deadline = time.monotonic() + seconds
        while not self._given_up.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if self.event.wait(min(remaining, GIVE_UP_POLL_S)):
                return True
        return True

    def error(self, what: str, *, partial: bool = False) -> StopRequested | ActionPaused:
        """`partial`: some of the action's input went out already."""
        if self.cancelled.is_set():
            return StopRequested(f"stopped {what}")
        return ActionPaused(f"paused {what}", partial=partial)


class DesktopExecutor:
    """Runs the built-in tools. Input runs on one worker thread, checking the stop and the
    pause (`Halt`) between atomic events; invoke / set_value / focus go through the observer's
    inventory thread (AT-SPI or UI Automation), so pass the observer whose observations the
    model sees.
    A call that outlives `call_timeout_s` fails its step and its thread is replaced. It is the
    core's FocusProbe too (`focused`), asked on the inventory thread.
    """

    def __init__(
        self,
        *,
        observer: DesktopObserver | None = None,
        driver: InputDriver | None = None,
        paster: Paster | None = None,
        launcher: Launcher | None = None,
        key_interval_s: float = 0.005,
        click_interval_s: float = CLICK_INTERVAL_S,
        call_timeout_s: float = CALL_TIMEOUT_S,
        settle_s: float = SETTLE_S,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        window_at: WindowAtPoint | None = None,
    ) -> None:
        if sys.platform == "win32":
            from desktop_agent.desktop.win32 import enable_dpi_awareness

            enable_dpi_awareness()
        self.observer = observer
        self.driver: InputDriver = driver or PyAutoGuiDriver()
        self.paster = paster or default_paster()
        self.launcher = launcher or Launcher()
        #: what holds a point, compared between the clicks of a double or triple click
        #: (None: the driver's desktop's read, `window_at_point_of`)
        self.window_at = window_at or window_at_point_of(self.driver)
        self.key_interval_s = key_interval_s
        self.click_interval_s = click_interval_s
        self.call_timeout_s = call_timeout_s
        self.settle_s = settle_s
        self._sleep = sleep
        #: input threads left to a hung call and replaced
        self.abandoned_input_threads = 0
        self._own_inventory: InventoryRunner | None = None
        self._input = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="input")
        #: the screen point where mouse_down left the left button held, until it is let go
        self._held_at: tuple[int, int] | None = None
        self._handlers: dict[str, tuple[ToolSpec, Handler]] = {}
        own: dict[str, Handler] = {
            "click": self._click,
            "move_mouse": self._move_mouse,
            "drag": self._drag,
            "scroll": self._scroll,
            "type_text": self._type_text,
            "hotkey": self._hotkey,
            "hold_key": self._hold_key,
            "mouse_down": self._mouse_down,
            "mouse_up": self._mouse_up,
            "cursor_position": self._cursor_position,
            "launch_app": self._launch_app,
            "wait": self._wait,
            "focus_window": self._focus_window,
            "invoke": self._invoke,
            "set_value": self._set_value,
        }
        for spec in tools.BUILTIN_TOOLS:
            if spec.name != SCREEN_TOOL:  # the observer's, not an action
                self.register(spec, own[spec.name])

    def register(self, spec: ToolSpec, handler: Handler) -> None:
        """Run `handler` for calls of `spec`'s tool; what happens around it (the monitor's
        check for a pointer tool, the repaint of a settling one) follows the spec's traits."""
        if spec.name in self._handlers:
            raise ValueError(f"the desktop has a handler for {spec.name!r} already")
        self._handlers[spec.name] = (spec, handler)

    def handles(self, name: str) -> bool:
        return name in self._handlers

    async def execute(self, spec: ToolSpec, args: BaseModel, context: ToolContext) -> ToolResult:
        registered = self._handlers.get(spec.name)
        if registered is None:
            raise UnknownTool(f"the desktop has no tool {spec.name!r}")
        spec, handler = registered  # the traits it was registered with, not a caller's copy
        halt = Halt(context)
        if halt.is_set():
            raise halt.error("before the action")
        if spec.pointer:
            await self._monitor_still_there(context.observation)
        result = await handler(args, context)
        if self.settle_s and spec.settles:
            await self._sleep(self.settle_s)  # a stop cancels this like any await
        return result

    def close(self) -> None:
        """Let go of a held button and release the input thread; programs started by
        launch_app keep running."""
        if self._held_at is not None:
            try:
                self._input.submit(self._let_go).result(RELEASE_TIMEOUT_S)
            except Exception:  # noqa: BLE001 - closing goes on; the log says why
                log.warning("a held button could not be let go on close", exc_info=True)
        self.launcher.reap()
        if self.window_at is not None:
            # on the thread that reads it, after any click still queued there: its X
            # connection is never closed under a read (nobody waits for it); a second close
            # finds the thread shut down and nothing left to close
            with contextlib.suppress(RuntimeError):
                self._input.submit(self.window_at.close)
        self._input.shutdown(wait=False)
        if self._own_inventory is not None:
            self._own_inventory.close()

    # -- plumbing --------------------------------------------------------------------------

    async def _monitor_still_there(self, observation: Observation | None) -> None:
        """ToolError when the monitor the observation showed is gone or moved (unplugged,
        re-arranged): its image's points would land elsewhere, so nothing is sent."""
        layout = observation.layout if observation is not None else None
        if self.observer is None or layout is None:
            return
        try:
            now = await self.observer.monitors_now()
        except ObservationError as error:
            raise ToolError(f"the monitors cannot be read, so nothing is sent: {error}") from None
        shown = layout.shown
        there = (
            now.shown.rect == shown.rect
            if shown.number == 0
            else any(area.rect == shown.rect for area in now.monitors)
        )
        if not there:
            what = "the desktop" if shown.number == 0 else shown.describe()
            raise DesktopChanged(
                f"{what} is gone or moved since the screen was seen (a monitor was unplugged "
                "or re-arranged): the action is not sent; the next screen shows the monitors "
                "there are now"
            )

    async def focused(self) -> Focus:
        """FocusProbe: the focused control's accessibility role and place, each None when
        unknown."""
        return await DesktopFocusProbe(self._inventory()).focused()

    def _holding(self, keys: list[str], work: Callable[[], T]) -> Callable[[], T]:
        """`work` with `keys` held down around it (on the input thread), let go in reverse
        whatever ends it: a stop, a pause, a fault. No key is left down."""
        if not keys:
            return work

        def held() -> T:
            down: list[str] = []
            try:
                for key in keys:
                    self.driver.key_down(key)
                    down.append(key)
                return work()
            finally:
                for key in reversed(down):
                    self.driver.key_up(key)

        return held

    async def _on_input_thread(self, work: Callable[[], T], halt: Halt) -> T:
        """`work` on the input thread, once the driver is ready and unless a stop or a pause
        came meanwhile: the thread may start it late (busy, or the driver's first start), and
        a stop or pause that landed in between must not be followed by the input."""
        pool = self._input
        driver = self.driver

        def unless_stopped() -> T:
            driver.ready()
            if halt.is_set():
                raise halt.error("before the input")
            return work()

        future = pool.submit(unless_stopped)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.call_timeout_s)
        except TimeoutError:
            halt.give_up()  # the thread, if it comes back, sends nothing more
            self._abandon_input(pool, f"an input call took longer than {self.call_timeout_s:g} s")
            raise ToolError(
                f"the input call did not finish in {self.call_timeout_s:g} s "
                "(the input thread is replaced)"
            ) from None
        except asyncio.CancelledError:
            halt.give_up()
            if future.running():
                self._abandon_input(pool, "an input call was still running when it was cancelled")
            raise

    def _abandon_input(self, pool: concurrent.futures.ThreadPoolExecutor, why: str) -> None:
        if pool is not self._input:
            return
        log.warning("input thread abandoned and replaced: %s", why)
        self._input = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="input")
        pool.shutdown(wait=False, cancel_futures=False)
        self.abandoned_input_threads += 1

    def _inventory(self) -> InventoryRunner:
        if self.observer is not None and self.observer.inventory is not None:
            return self.observer.inventory
        if self._own_inventory is None:
            self._own_inventory = InventoryRunner()
        return self._own_inventory

    def _element(self, context: ToolContext, element_id: int) -> tuple[Observation, Element]:
        observation = context.observation
        if observation is None:
            raise ToolError(f"element {element_id}: there is no observation to look it up in")
        element = observation.element(element_id)
        away = next((e for e in observation.elsewhere if e.id == element_id), None)
        if element is None and away is not None:
            raise NoSuchTarget(
                f"element {element_id} is on monitor {away.monitor}, which the screenshot does "
                "not show: focus_window its window first (the next screenshot shows that monitor)"
            )
        if element is None:
            ids = [e.id for e in observation.elements]
            known = f"ids {ids[0]}-{ids[-1]}" if ids else "no elements"
            raise NoSuchTarget(f"no element {element_id} in the last observation ({known})")
        return observation, element

    def _point(
        self, context: ToolContext, x: int | None, y: int | None, element_id: int | None
    ) -> tuple[tuple[int, int], tuple[int, int], str]:
        """(screenshot point, screen point, words naming the target)."""
        if element_id is not None:
            observation, element = self._element(context, element_id)
            point = element.center
            where = f'[{element.id}] {element.role} "{element.name}"'
        else:
            assert x is not None and y is not None
            if context.observation is None:
                raise ToolError("no observation: cannot map screenshot coordinates to the screen")
            observation = context.observation
            point, where = (x, y), f"({x}, {y})"
        try:
            screen = point_to_screen(
                point[0], point[1], observation.mapping, (observation.width, observation.height)
            )
        except ValueError as error:  # a point off the screenshot
            raise NoSuchTarget(str(error)) from None
        return point, screen, where

    # -- pointer ---------------------------------------------------------------------------

    async def _click(self, args: tools.ClickArgs, context: ToolContext) -> ToolResult:
        point, screen, where = self._point(context, args.x, args.y, args.element)
        halt = Halt(context)

        read = self.window_at if args.clicks > 1 else None

        def work() -> tuple[int, str]:
            # one click at a time: pyautogui's click(clicks=n) sleeps between them without
            # looking at the stop (pyautogui/__init__.py:998-1003, 0.9.54), so a stop after
            # the first of three was followed by two more
            x, y = self.driver.safe_point(*screen)
            # a click may bring up a window (a dialog whose button lies under the point) or
            # take one away: the next click would land on what nobody judged
            before = read(x, y) if read is not None else None
            for done in range(args.clicks):
                if done and halt.wait(self.click_interval_s):
                    return done, ""
                if done and read is not None and before is not None:
                    now = read(x, y)
                    if now != before:
                        return done, UNDER_POINT_CHANGED if now is not None else UNDER_POINT_UNREAD
                self.driver.click(x, y, args.button, 1)
            return args.clicks, ""

        clicked, changed = await self._on_input_thread(self._holding(args.hold, work), halt)
        if changed:
            # not "stopped" (a user's stop says so): the clicks sent are a failed step's
            ended = CLICKS_ENDED.format(done=clicked, clicks=args.clicks, why=changed)
            # a window that came up is the desktop's doing; a read that failed may be ours
            raise (DesktopChanged if changed == UNDER_POINT_CHANGED else ToolError)(ended)
        if clicked < args.clicks:
            raise halt.error(f"after {clicked} of {args.clicks} clicks", partial=True)
        times = {1: "", 2: " twice", 3: " three times"}[args.clicks]
        button = "" if args.button == "left" else f"{args.button}-"
        return ToolResult.success(f"{button}clicked {where}{times}", target=point)

    async def _move_mouse(self, args: tools.MoveMouseArgs, context: ToolContext) -> ToolResult:
        point, screen, where = self._point(context, args.x, args.y, args.element)
        await self._on_input_thread(
            self._holding(args.hold, lambda: self.driver.move(*self.driver.safe_point(*screen))),
            Halt(context),
        )
        return ToolResult.success(f"moved the pointer to {where}", target=point)

    async def _drag(self, args: tools.DragArgs, context: ToolContext) -> ToolResult:
        start, start_screen, _ = self._point(context, args.x, args.y, None)
        end, end_screen, _ = self._point(context, args.to_x, args.to_y, None)
        halt = Halt(context)

        # the path: the start, the points between (a native API's whole path), the drop
        between = [self._point(context, px, py, None)[1] for px, py in args.via]
        steps = max(1, -(-DRAG_STEPS // (len(between) + 1)))  # per leg, DRAG_STEPS in all

        def work() -> bool:
            x0, y0 = self.driver.safe_point(*start_screen)
            legs = [self.driver.safe_point(*point) for point in (*between, end_screen)]
            self.driver.move(x0, y0)
            if halt.is_set():  # stopped as the pointer got there: no button goes down
                return False
            self.driver.mouse_down(x0, y0, "left")
            x, y = x0, y0
            try:
                for x1, y1 in legs:
                    xa, ya = x, y
                    for step in range(1, steps + 1):
                        if halt.wait(DRAG_STEP_S):
                            return False
                        x = xa + (x1 - xa) * step // steps
                        y = ya + (y1 - ya) * step // steps
                        self.driver.move(x, y)
            finally:
                # never leave the button held, also when stopped half-way
                self.driver.mouse_up(x, y, "left")
            return True

        if not await self._on_input_thread(self._holding(args.hold, work), halt):
            raise halt.error("during drag", partial=True)
        return ToolResult.success(
            f"dragged from ({args.x}, {args.y}) to ({args.to_x}, {args.to_y})", target=end
        )

    async def _scroll(self, args: tools.ScrollArgs, context: ToolContext) -> ToolResult:
        point: tuple[int, int] | None = None
        screen: tuple[int, int] | None = None
        where = ""
        if args.x is not None or args.y is not None:
            if args.x is None or args.y is None:
                raise ToolError("scroll needs both x and y, or neither")
            point, screen, where = self._point(context, args.x, args.y, None)
            where = f" at {where}"
        amount = args.amount
        notch = 1 if amount > 0 else -1
        halt = Halt(context)

        def work() -> int:
            # one notch at a time, the stop and the pause looked at before each: pyautogui's
            # X11 scroll is abs(amount) button clicks in a row (_pyautogui_x11.py:42-77), and
            # a stop after the third of a hundred was followed by the rest
            at = None if screen is None else self.driver.safe_point(*screen)
            for done in range(abs(amount)):
                if done and halt.is_set():
                    return done
                self.driver.scroll(notch, *(at or (None, None)))
            return abs(amount)

        turned = await self._on_input_thread(self._holding(args.hold, work), halt)
        if turned < abs(amount):
            raise halt.error(f"after {turned} of {abs(amount)} notches", partial=True)
        direction = "up" if amount > 0 else "down"
        return ToolResult.success(f"scrolled {direction} {abs(amount)}{where}", target=point)

    async def _mouse_down(self, args: tools.MouseButtonArgs, context: ToolContext) -> ToolResult:
        point, screen, where = self._point(context, args.x, args.y, None)
        halt = Halt(context)

        def work() -> None:
            x, y = self.driver.safe_point(*screen)
            self.driver.move(x, y)
            if halt.is_set():  # stopped as the pointer got there: no button goes down
                raise halt.error("before the button went down", partial=True)
            # held before it goes down: a fault or a stop from here on still lets it go
            self._held_at = (x, y)
            self.driver.mouse_down(x, y, "left")

        await self._on_input_thread(work, halt)
        return ToolResult.success(f"pressed and held the left button at {where}", target=point)

    async def _mouse_up(self, args: tools.MouseButtonArgs, context: ToolContext) -> ToolResult:
        point, screen, where = self._point(context, args.x, args.y, None)
        halt = Halt(context)

        def work() -> None:
            x, y = self.driver.safe_point(*screen)
            if not halt.is_set():
                self.driver.move(x, y)
            else:  # stopped: let go where the pointer is, never hold on
                x, y = self._held_at or (x, y)
            self._held_at = None
            self.driver.mouse_up(x, y, "left")

        await self._on_input_thread(work, halt)
        return ToolResult.success(f"released the left button at {where}", target=point)

    async def release_held(self) -> str:
        """HeldInput: the left button a mouse_down left held, let go where the pointer is
        (on the input thread, whatever the stop or the pause say: a release is never held
        back); "" when nothing was held."""
        if self._held_at is None:
            return ""
        future = self._input.submit(self._let_go)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), RELEASE_TIMEOUT_S)
        except TimeoutError:
            self._abandon_input(self._input, "letting go of a held button took too long")
            return "the held left button could not be let go (the input thread hung)"

    def _let_go(self) -> str:
        held, self._held_at = self._held_at, None
        if held is None:
            return ""
        self.driver.mouse_up(*held, "left")
        return f"released the left button held at {held}"

    async def _cursor_position(
        self, args: tools.CursorPositionArgs, context: ToolContext
    ) -> ToolResult:
        """Where the pointer is, in the observation's screenshot pixels: read, no input."""
        observation = context.observation
        if observation is None or self.observer is None:
            raise ToolError("the pointer cannot be read: there is no screen observation")
        where = await self.observer.pointer_now(observation)
        if where is None:
            raise ToolError("the pointer cannot be read now, or it is off the screenshot")
        return ToolResult.success(f"the pointer is at ({where[0]}, {where[1]})", target=where)

    # -- keyboard --------------------------------------------------------------------------

    async def _hold_key(self, args: tools.HoldKeyArgs, context: ToolContext) -> ToolResult:
        keys = list(args.keys)
        halt = Halt(context)

        def work() -> bool:
            down: list[str] = []
            try:
                for key in keys:
                    if halt.is_set():
                        return False
                    self.driver.key_down(key)
                    down.append(key)
                return not halt.wait(args.seconds)
            finally:
                # let go in reverse, also when stopped, paused or failed half-way
                for key in reversed(down):
                    self.driver.key_up(key)

        if not await self._on_input_thread(work, halt):
            raise halt.error(f"while holding {'+'.join(keys)} (let go)", partial=True)
        return ToolResult.success(f"held {'+'.join(keys)} for {args.seconds:g} s")

    async def _type_text(self, args: tools.TypeTextArgs, context: ToolContext) -> ToolResult:
        text = normalize_newlines(args.text)
        halt = Halt(context)
        driver = self.driver
        as_text = isinstance(driver, TextTyping) and driver.types_any_text
        if as_text or typeable(text):
            typed = await self._on_input_thread(lambda: self._type_keys(text, halt, as_text), halt)
            if typed < len(text):
                raise halt.error(
                    f"during type_text after {typed} of {len(text)} keys", partial=typed > 0
                )
            how = ""
        else:

            def press_paste() -> None:
                # the clipboard was read and set first (xclip, the Windows clipboard): a stop
                # or pause meanwhile sends no ctrl+v (the paster puts the clipboard back)
                if halt.is_set():
                    raise halt.error("before the paste")
                self.driver.hotkey(["ctrl", "v"])

            await self._on_input_thread(lambda: self.paster.paste(text, press_paste), halt)
            how = " (pasted through the clipboard)"
        if args.enter:
            if halt.is_set():
                raise halt.error(
                    f"before pressing enter (the {len(text)} characters were typed)", partial=True
                )
            await self._on_input_thread(lambda: self.driver.press("enter"), halt)
        enter = " and pressed enter" if args.enter else ""
        return ToolResult.success(f"typed {len(text)} characters{how}{enter}")

    def _type_keys(self, text: str, halt: Halt, as_text: bool = False) -> int:
        """Press one key per character (`as_text`: type each as itself, the driver's
        TextTyping), checking for a stop or pause before each; how many were typed."""
        for index, char in enumerate(text):
            if halt.is_set():
                return index
            if as_text:
                cast(TextTyping, self.driver).type_char(char)
            else:
                self.driver.press(KEY_FOR_CHAR.get(char, char))
            if self.key_interval_s and index + 1 < len(text):
                halt.wait(self.key_interval_s)
        return len(text)

    async def _hotkey(self, args: tools.HotkeyArgs, context: ToolContext) -> ToolResult:
        keys = list(args.keys)
        await self._on_input_thread(lambda: self.driver.hotkey(keys), Halt(context))
        return ToolResult.success(f"pressed {'+'.join(keys)}")

    # -- programs, time, windows -------------------------------------------------------------

    async def _launch_app(self, args: tools.LaunchAppArgs, context: ToolContext) -> ToolResult:
        halt = Halt(context)
        try:
            summary = await asyncio.to_thread(self.launcher.launch, args.command, halt.event)
        except StopRequested:
            # the launcher starts nothing once the event is set, and says "stopped"
            raise halt.error("before the program was started") from None
        return ToolResult.success(summary)

    async def _wait(self, args: tools.WaitArgs, context: ToolContext) -> ToolResult:
        """Sleeps on the loop (no thread), looking at the stop flag every 10 ms."""
        deadline = time.monotonic() + args.seconds
        while (remaining := deadline - time.monotonic()) > 0:
            if context.cancelled.is_set():
                raise StopRequested("stopped during wait")
            await asyncio.sleep(min(WAIT_TICK_S, remaining))
        if context.cancelled.is_set():
            raise StopRequested("stopped during wait")
        return ToolResult.success(f"waited {args.seconds:g} s")

    async def _focus_window(self, args: tools.FocusWindowArgs, context: ToolContext) -> ToolResult:
        if args.title is not None:
            title = args.title
            summary = await self._native_call(
                lambda backend: backend.activate_window(title), Halt(context)
            )
            return ToolResult.success(summary)
        assert args.element is not None
        observation, element = self._element(context, args.element)
        native = self._native(observation, element)
        summary = await self._native_call(lambda backend: backend.focus(native), Halt(context))
        return ToolResult.success(summary, target=element.center)

    async def _invoke(self, args: tools.InvokeArgs, context: ToolContext) -> ToolResult:
        observation, element = self._element(context, args.element)
        native = self._native(observation, element)
        how = await self._native_call(lambda backend: backend.invoke(native), Halt(context))
        return ToolResult.success(
            f'invoked [{element.id}] {element.role} "{element.name}" ({how})',
            target=element.center,
        )

    async def _set_value(self, args: tools.SetValueArgs, context: ToolContext) -> ToolResult:
        observation, element = self._element(context, args.element)
        native = self._native(observation, element)
        value = args.value
        how = await self._native_call(
            lambda backend: backend.set_value(native, value), Halt(context)
        )
        return ToolResult.success(
            f'set [{element.id}] {element.role} "{element.name}" to {len(value)} characters '
            f"({how})",
            target=element.center,
        )

    def _native(self, observation: Observation, element: Element) -> Any:
        try:
            native = self.observer.native(observation, element.id) if self.observer else None
        except LookupError as error:
            raise ToolError(str(error)) from None
        if native is None:
            raise ToolError(
                f'element {element.id} ({element.role} "{element.name}") has no accessibility '
                "object behind it; use click or type_text"
            )
        return native

    async def _native_call(self, call: Callable[[Any], str], halt: Halt) -> str:
        """`call(backend)` on the inventory thread, unless a stop or pause came while it waited
        there (behind a walk, or the backend's start on a fresh thread)."""

        def unless_stopped(backend: Any) -> str:
            if halt.is_set():
                raise halt.error("before the action")
            return call(backend)

        try:
            return await self._inventory().run(unless_stopped, timeout_s=self.call_timeout_s)
        except (StopRequested, ActionPaused):
            raise
        except TimeoutError:
            raise ToolError(
                f"the accessibility call did not finish in {self.call_timeout_s:g} s "
                "(the inventory thread is replaced)"
            ) from None
        except NoSuchWindow as error:  # the model named a window that is not there
            raise NoSuchTarget(str(error)) from None
        except LookupError as error:
            raise ToolError(str(error.args[0] if error.args else error)) from None
        except ToolError:
            raise
        except Exception as error:  # noqa: BLE001 - AT-SPI/COM faults: one clear line
            raise ToolError(f"the accessibility call failed: {error}") from None
