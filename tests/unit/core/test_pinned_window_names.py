"""Real windows the gate's name lists must keep recognising, by the label the inventory gives
them ("title — class", or the class alone): removing or misspelling a name fails here
(issue #36 item 1: the terminal and desktop names that had no test)."""

from __future__ import annotations

import pytest

from desktop_agent.core.call_risk import is_terminal_window
from desktop_agent.core.models import ApprovalDecision, Element, Observation, Policy
from tests.fakes import ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import make_harness

#: each label holds one name of the lists (Windows Terminal only the generic "terminal")
TERMINAL_LABELS = {
    "fish": "fish  /home/alice — Unknown",
    "wezterm": "~ — org.wezfurlong.wezterm",
    "tilix": "Default — com.gexperts.Tilix",
    "tilda": "Tilda",
    "guake": "Guake!",
    "yakuake": "Yakuake",
    "terminator": "Terminator",
    "foot": "~ — foot",
    "st": "vim — St",  # WM_CLASS res_class "St"; its res_name is st-256color
    "st titled st": "st",
    "mlterm": "~ — mlterm",
    "roxterm": "~ — Roxterm",
    # Windows labels a window by its title alone
    "pwsh": "pwsh",
    "conhost": "C:\\Windows\\System32\\conhost.exe",
    "windows terminal": "Windows Terminal",
    "sakura": "sakura",
    "terminology": "Terminology",
    "greek chi": "\u03c7term",  # χterm: the Greek χ reads as x
}


def focused(label: str) -> Observation:
    return make_observation([Element(1, "window", label, (0, 0, 1000, 700), focused=True)])


@pytest.mark.parametrize("label", TERMINAL_LABELS.values(), ids=TERMINAL_LABELS)
async def test_enter_in_each_real_terminal_asks_though_hotkeys_are_allowed(label: str) -> None:
    h = make_harness(answers=[ApprovalDecision.DENY], policies={"hotkey": Policy.ALLOW})
    h.observer.observation = focused(label)
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("hotkey", keys=["enter"])], then=done()))

    assert [request.caution for request in h.gate.requests] == [
        "enter runs the typed line in a terminal"
    ]
    assert h.executor.calls == []


@pytest.mark.parametrize(
    "label", ["footnotes.txt — L3afpad", "selfish — Firefox", "St. Louis weather — Firefox"]
)
def test_a_short_terminal_name_inside_another_word_is_not_a_terminal(label: str) -> None:
    assert not is_terminal_window(label)


#: the desktop's own windows, as the inventory labels them (an empty title gives the class)
DESKTOP_LABELS = {"WorkerW": "WorkerW", "Progman": "Progman", "xfdesktop": "xfdesktop"}


@pytest.mark.parametrize("label", DESKTOP_LABELS.values(), ids=DESKTOP_LABELS)
async def test_alt_f4_on_each_desktop_window_asks_though_hotkeys_are_allowed(label: str) -> None:
    h = make_harness(answers=[ApprovalDecision.DENY], policies={"hotkey": Policy.ALLOW})
    h.observer.observation = focused(label)
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("hotkey", keys=["alt", "f4"])], then=done()))

    assert [request.caution for request in h.gate.requests] == [
        "alt+f4 on the desktop opens the shut-down dialog"
    ]
    assert h.executor.calls == []
