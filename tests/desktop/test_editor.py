"""Driving a real editor (l3afpad, GTK3) under Xvfb: typing, Save As, AT-SPI, stops."""

from __future__ import annotations

import asyncio
import io
import os
import re
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from desktop_agent.core.errors import StopRequested, ToolError
from desktop_agent.core.models import Element, Observation
from desktop_agent.desktop import DesktopExecutor, DesktopObserver
from desktop_agent.desktop.clipboard import XclipPaster, _ClipboardOwner
from desktop_agent.desktop.geometry import rect_to_image
from desktop_agent.desktop.input import PyAutoGuiDriver
from desktop_agent.desktop.inventory.atspi import _children, _value
from desktop_agent.desktop.inventory.atspi_bus import (
    ACCESSIBLE,
    REGISTRY,
    ROOT_PATH,
    TEXT,
    Call,
    Node,
)
from desktop_agent.desktop.inventory.x11 import X11Windows
from tests.desktop.conftest import (
    Editor,
    act,
    active_window,
    client_rect,
    wait_active,
)
from tests.support.xdisplay import XSession, wait_until


def named(observation: Observation, role: str, name: str | None = None) -> Element:
    return next(
        e for e in observation.elements if e.role == role and (name is None or e.name == name)
    )


async def observe_until(
    observer: DesktopObserver, wanted: Callable[[Observation], bool], what: str
) -> Observation:
    """Observe until `wanted` holds: the app draws and registers asynchronously."""
    for _ in range(100):
        observation = await observer.observe()
        if wanted(observation):
            return observation
        await asyncio.sleep(0.05)
    raise AssertionError(f"never observed {what}; last inventory:\n{observation.inventory_text()}")


async def editor_text(observer: DesktopObserver) -> str:
    """l3afpad's text, read through AT-SPI (Text.GetText) on the observer's inventory thread."""

    def read(backend: Any) -> str:
        for app in _children(
            backend._call(Call(Node(REGISTRY, ROOT_PATH), ACCESSIBLE, "GetChildren"))
        ):
            if _value(backend._call(Call.prop(app, ACCESSIBLE, "Name"))) != "l3afpad":
                continue
            queue = [app]
            while queue:
                node = queue.pop(0)
                if backend._call(Call(node, ACCESSIBLE, "GetRoleName"))[0] == "text":
                    count = _value(backend._call(Call.prop(node, TEXT, "CharacterCount")))
                    return str(backend._call(Call(node, TEXT, "GetText", "ii", (0, count)))[0])
                queue.extend(_children(backend._call(Call(node, ACCESSIBLE, "GetChildren"))))
        raise AssertionError("l3afpad is not on the AT-SPI bus")

    assert observer.inventory is not None
    return await observer.inventory.run(read)


async def text_becomes(observer: DesktopObserver, expected: str) -> str:
    text = ""
    for _ in range(100):
        text = await editor_text(observer)
        if text == expected:
            break
        await asyncio.sleep(0.02)
    return text


def set_clipboard(xsession: XSession, text: str) -> None:
    subprocess.run(
        ["xclip", "-selection", "clipboard", "-i"],
        input=text.encode(),
        env=xsession.child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )


def clipboard(xsession: XSession) -> str:
    return subprocess.run(
        ["xclip", "-selection", "clipboard", "-o"],
        capture_output=True,
        text=True,
        timeout=5,
        env=xsession.child_env(),
        check=False,
    ).stdout


async def test_typed_text_saved_through_save_as_is_exact_and_the_clipboard_is_restored(
    xsession: XSession,
    windows: X11Windows,
    desktop: tuple[DesktopObserver, DesktopExecutor],
    tmp_path: Path,
) -> None:
    observer, executor = desktop
    target = tmp_path / "notes.txt"
    await asyncio.to_thread(set_clipboard, xsession, "what the user had copied")
    observation = await observer.observe()

    launched = await act(executor, "launch_app", observation, command="l3afpad")
    # the step ends when l3afpad's window is up (_NET_WM_PID), or at the watch's 1 s bound
    # when it is not up by then (a loaded machine): then the summary does not say so
    match = re.fullmatch(r"started l3afpad \(pid (\d+)\)(; its window is up)?", launched.summary)
    assert match, launched.summary
    try:
        wait_active(windows, "l3afpad")
        await act(executor, "type_text", observation, text="hello world", enter=True)
        await act(executor, "type_text", observation, text="héllo wörld €")
        await act(executor, "hotkey", observation, keys=["ctrl", "shift", "s"])
        wait_active(windows, title="Save As")
        await act(executor, "type_text", observation, text=str(target))
        # GTK's path completion swallows an Enter sent right after typing a path
        await act(executor, "wait", observation, seconds=0.3)
        await act(executor, "hotkey", observation, keys=["enter"])
        wait_active(windows, "l3afpad", title="notes.txt")
        # read while l3afpad lives: killed in the middle of asking the clipboard's new owner
        # for its targets (GTK does so on every owner change; late on a loaded machine), it
        # makes that xclip exit, and the text is gone with it
        restored = clipboard(xsession)
    finally:
        os.killpg(int(match.group(1)), signal.SIGTERM)
        wait_until(lambda: active_window(windows, "l3afpad") is None, what="l3afpad to close")

    assert target.read_bytes() == "hello world\nhéllo wörld €".encode()
    assert restored == "what the user had copied"


async def test_atspi_inventory_lists_the_menus_and_the_text_area_where_they_are(
    xsession: XSession, l3afpad: Editor, desktop: tuple[DesktopObserver, DesktopExecutor]
) -> None:
    observer, executor = desktop
    window_rect = client_rect(xsession.display, l3afpad.window.id)

    def painted(o: Observation) -> bool:
        """The window has drawn: its lower client area is no longer Xvfb's unpainted black
        (found from the X server's geometry, not from AT-SPI)."""
        box = rect_to_image(window_rect, o.mapping, (o.width, o.height))
        assert box is not None
        x, y, w, h = box
        image = Image.open(io.BytesIO(o.image)).convert("RGB")
        return image.getpixel((x + w // 2, y + h * 3 // 4)) != (0, 0, 0)

    observation = await observe_until(
        observer,
        lambda o: (
            o.inventory_backend == "atspi"
            and any(e.role == "edit" for e in o.elements)
            and painted(o)
        ),
        "l3afpad's text area through AT-SPI, drawn",
    )

    menus = [e for e in observation.elements if e.role == "menu"]
    text = named(observation, "edit")
    window = named(observation, "window")
    assert [m.name for m in menus] == ["File", "Edit", "Search", "Options", "Help"]
    assert window.focused and "l3afpad" in window.name.lower()
    assert text.focused and text.enabled

    # geometry against the X server's own idea of the client area: the menus sit in one
    # row from its top-left corner, the text area fills the rest
    size = (observation.width, observation.height)
    client = rect_to_image(
        client_rect(xsession.display, l3afpad.window.id), observation.mapping, size
    )
    assert client is not None
    cx, cy, cw, ch = client
    assert abs(menus[0].box[0] - cx) <= 1 and all(abs(m.box[1] - cy) <= 1 for m in menus)
    assert all(a.box[0] + a.box[2] <= b.box[0] + 1 for a, b in zip(menus, menus[1:], strict=False))
    tx, ty, tw, th = text.box
    menu_bottom = menus[0].box[1] + menus[0].box[3]
    assert abs(tx - cx) <= 1 and abs(ty - menu_bottom) <= 1
    assert cw - 3 <= tw <= cw and abs((ty + th) - (cy + ch)) <= 3

    # pixels: the text area is the editor's white page; "File" has dark letters
    image = Image.open(io.BytesIO(observation.image)).convert("RGB")
    assert image.getpixel((tx + tw // 2, ty + th // 2)) == (255, 255, 255)
    fx, fy, fw, fh = menus[0].box

    def brightness(x: int) -> int:
        pixel = image.getpixel((x, fy + fh // 2))
        assert isinstance(pixel, tuple)  # an RGB image's pixel
        return sum(pixel)

    assert min(brightness(x) for x in range(fx, fx + fw)) < 300

    # a click at the File menu's centre opens the File menu
    await act(executor, "click", observation, element=menus[0].id)
    opened = await observe_until(
        observer,
        lambda o: any(e.role == "menuitem" and e.name == "Save As..." for e in o.elements),
        "the File menu open",
    )
    await act(executor, "hotkey", opened, keys=["esc"])


async def test_set_value_and_invoke_go_through_atspi(
    l3afpad: Editor, desktop: tuple[DesktopObserver, DesktopExecutor]
) -> None:
    observer, executor = desktop
    observation = await observe_until(
        observer, lambda o: any(e.role == "edit" for e in o.elements), "the text area"
    )
    edit = named(observation, "edit")

    result = await act(executor, "set_value", observation, element=edit.id, value="set ✓")
    await act(executor, "invoke", observation, element=named(observation, "menu", "Edit").id)
    opened = await observe_until(
        observer,
        lambda o: any(e.role == "menuitem" and e.name == "Select All" for e in o.elements),
        "the Edit menu open",
    )
    await act(executor, "hotkey", opened, keys=["esc"])

    assert (
        result.summary == f'set [{edit.id}] edit "" to 5 characters (set its text through AT-SPI)'
    )
    assert await editor_text(observer) == "set ✓"


class CountingDriver(PyAutoGuiDriver):
    """The real driver; the stop button is pressed while the n-th key goes out."""

    def __init__(self, stop_at: int, cancelled: threading.Event) -> None:
        super().__init__()
        self.stop_at = stop_at
        self.cancelled = cancelled
        self.pressed = 0

    def press(self, key: str) -> None:
        super().press(key)
        self.pressed += 1
        if self.pressed == self.stop_at:
            self.cancelled.set()


async def test_stop_during_type_text_stops_within_one_keystroke(
    l3afpad: Editor, desktop: tuple[DesktopObserver, DesktopExecutor]
) -> None:
    observer, _ = desktop
    observation = await observe_until(
        observer, lambda o: any(e.role == "edit" and e.focused for e in o.elements), "the text area"
    )
    cancelled = threading.Event()
    driver = CountingDriver(stop_at=5, cancelled=cancelled)
    executor = DesktopExecutor(observer=observer, driver=driver)
    try:
        with pytest.raises(StopRequested, match="after 5 of 26 keys"):
            await act(
                executor, "type_text", observation, cancelled, text="abcdefghijklmnopqrstuvwxyz"
            )
        # a marker typed after the stop lands right after the 5 keys: nothing else went out
        await act(executor, "type_text", observation, text="!")
    finally:
        executor.close()

    assert driver.pressed == 6
    assert await text_becomes(observer, "abcde!") == "abcde!"


async def test_launch_app_of_a_missing_command_is_a_failed_step_naming_it(
    desktop: tuple[DesktopObserver, DesktopExecutor],
) -> None:
    observer, executor = desktop
    observation = await observer.observe()

    with pytest.raises(ToolError, match="program not found: 'gedit-that-is-not-here'"):
        await act(executor, "launch_app", observation, command="gedit-that-is-not-here notes.txt")


async def test_an_empty_clipboard_is_left_empty_after_pasting(
    xsession: XSession, l3afpad: Editor, desktop: tuple[DesktopObserver, DesktopExecutor]
) -> None:
    observer, executor = desktop
    watch = _ClipboardOwner()
    try:
        XclipPaster()._restore(None, watch)  # leaves the clipboard without an owner
    finally:
        watch.close()
    assert XclipPaster().read() is None
    observation = await observe_until(
        observer, lambda o: any(e.role == "edit" and e.focused for e in o.elements), "the text area"
    )

    await act(executor, "type_text", observation, text="naïve café")

    assert await text_becomes(observer, "naïve café") == "naïve café"
    assert XclipPaster().read() is None
