"""Windows: typed text is the text, whatever the keyboard layout, and needs no clipboard
(KEYEVENTF_UNICODE; issue 37 item 5)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.models import Observation
from desktop_agent.core.ports import ToolContext
from desktop_agent.desktop import win_input
from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.input import PyAutoGuiDriver
from tests.unit.desktop.fake_pyautogui import FakePyAutoGui
from tests.unit.desktop.fakes import FakePaster

#: what the letter keys of a US keyboard type under each layout (the keys' virtual key is the
#: US letter; the character is the layout's): Russian ЙЦУКЕН, German QWERTZ (y and z swap)
LAYOUTS = {
    "us": {chr(vk).lower(): chr(vk).lower() for vk in range(0x41, 0x5B)},
    "ru": dict(zip("qwertyuiopasdfghjklzxcvbnm", "йцукенгшщзфывапролдячсмить", strict=True)),
    "de": {**{chr(vk).lower(): chr(vk).lower() for vk in range(0x41, 0x5B)}, "y": "z", "z": "y"},
}

#: the comma and period keys (VK_OEM_COMMA, VK_OEM_PERIOD) under each layout, unshifted
OEM_KEYS = {0xBC: {"us": ",", "de": ",", "ru": "б"}, 0xBE: {"us": ".", "de": ".", "ru": "ю"}}


class FocusedEditor:
    """The program with the keyboard focus, as Windows delivers SendInput's keyboard events to
    it (learn.microsoft.com, "KEYBDINPUT structure" and "Keyboard Input Overview"): an event
    with KEYEVENTF_UNICODE becomes VK_PACKET and WM_CHAR of its wScan, whatever the layout
    (a surrogate pair arrives as two WM_CHARs, joined back into one character); any other key
    down is translated by the thread's *current* layout (ToUnicodeEx): a letter key gives that
    layout's letter, shift its upper case; Enter gives a newline, Tab a tab. Control keys
    (shift) type nothing."""

    def __init__(self, layout: str) -> None:
        self.layout = layout
        self.units: list[int] = []
        self.shift = False

    def send_input(self, inputs: Sequence[win_input.INPUT]) -> int:
        for event in inputs:
            assert event.type == win_input.INPUT_KEYBOARD
            assert event.ki.dwExtraInfo == win_input.AGENT_INPUT_TAG
            up = bool(event.ki.dwFlags & win_input.KEYEVENTF_KEYUP)
            if event.ki.dwFlags & win_input.KEYEVENTF_UNICODE:
                assert event.ki.wVk == 0
                if not up:
                    self.units.append(event.ki.wScan)
                continue
            vk = event.ki.wVk
            if vk == win_input.VK_SHIFT:
                self.shift = not up
            elif not up:
                data = self._translate(vk).encode("utf-16-le")
                self.units.extend(
                    int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)
                )

        return len(inputs)

    def _translate(self, vk: int) -> str:
        if vk == win_input.VK_RETURN:
            return "\n"
        if vk == win_input.VK_TAB:
            return "\t"
        if 0x41 <= vk <= 0x5A:
            char = LAYOUTS[self.layout][chr(vk).lower()]
            return char.upper() if self.shift else char
        if vk in OEM_KEYS:
            return OEM_KEYS[vk][self.layout]
        return chr(vk) if 0x20 <= vk < 0x7F else ""

    @property
    def text(self) -> str:
        data = b"".join(unit.to_bytes(2, "little") for unit in self.units)
        return data.decode("utf-16-le")


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyautogui", FakePyAutoGui("win32"))


async def type_into(editor: FocusedEditor, text: str, paster: FakePaster) -> str:
    driver = PyAutoGuiDriver(windows=True, send_input=editor.send_input, scan_code=lambda vk: vk)
    executor = DesktopExecutor(driver=driver, paster=paster, key_interval_s=0, settle_s=0)
    spec, args = builtin_registry().validate("type_text", {"text": text})
    screen = Observation(image=b"", mime="image/jpeg", width=1920, height=1080)
    try:
        result = await executor.execute(spec, args, ToolContext("run", screen, threading.Event()))
    finally:
        executor.close()
    assert result.ok
    return result.summary


@pytest.mark.parametrize("layout", ["ru", "de", "us"])
async def test_ascii_text_comes_out_as_typed_under_any_layout(windows: Any, layout: str) -> None:
    # pyautogui's key table was filled at import from the US layout: after a switch to
    # Russian, "Hello, yes" came out "Руддщб нуы" on old main, on German "Hello, zes", and
    # the step said ok
    editor = FocusedEditor(layout)
    paster = FakePaster()

    summary = await type_into(editor, "Hello, yes\tzed\nok", paster)

    assert editor.text == "Hello, yes\tzed\nok"
    assert summary == "typed 17 characters" and paster.pasted == []


async def test_text_beyond_ascii_is_typed_not_pasted(windows: Any) -> None:
    # on old main it went through the clipboard (where Win+V history keeps it)
    editor = FocusedEditor("us")
    paster = FakePaster()
    text = "Grüße, 東京 — ✓ 😀"  # the emoji is a surrogate pair: two UTF-16 units

    await type_into(editor, text, paster)

    assert editor.text == text and paster.pasted == []
    assert len(editor.units) == len(text) + 1


def test_a_character_outside_the_bmp_is_two_unicode_events_each_down_and_up() -> None:
    events = win_input.char_inputs("😀", lambda vk: 0)

    assert [(e.ki.wVk, e.ki.wScan, e.ki.dwFlags) for e in events] == [
        (0, 0xD83D, 0x4), (0, 0xD83D, 0x6), (0, 0xDE00, 0x4), (0, 0xDE00, 0x6),
    ]  # fmt: skip
