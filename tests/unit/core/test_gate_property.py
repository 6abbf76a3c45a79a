"""Generated calls against the real loop: whatever the spelling of the model's arguments, when
the executor would press Enter in a terminal, fire a launcher / system / paste combo, or act on
a sensitive target or a password field, the gate asked first (issue #15)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from desktop_agent.core.keys import ALIASES, KEY_NAMES
from desktop_agent.core.models import ApprovalDecision, Element, Observation, Policy
from tests.fakes import ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import make_harness

# ── the screens a call lands on ──────────────────────────────────────────────

WINDOW = (0, 0, 1280, 720)
DELETE = Element(2, "button", "Delete account", (100, 100, 120, 30))
SCREENS: dict[str, Observation] = {
    "terminal": make_observation(
        [Element(1, "window", "alice@box: ~ — XTerm", WINDOW, focused=True)]
    ),
    "editor": make_observation(
        [Element(1, "window", "notes.txt — L3afpad", WINDOW, focused=True), DELETE]
    ),
    "focused delete": make_observation(
        [
            Element(1, "window", "Account — Browser", WINDOW, focused=True),
            Element(2, "button", "Delete account", (100, 100, 120, 30), focused=True),
        ]
    ),
    "password": make_observation(
        [
            Element(1, "window", "Log in — Browser", WINDOW, focused=True),
            Element(3, "edit", "Password", (100, 200, 120, 30), focused=True, password=True),
        ]
    ),
    "no window list": make_observation(),
    "no focused window": make_observation([Element(1, "window", "notes — L3afpad", WINDOW)]),
}
#: where a line end may reach a shell: a terminal, or a focus nobody can tell
MAY_BE_TERMINAL = {"terminal", "no window list", "no focused window"}

# ── the oracle: written from the issue, not from core/call_risk.py ───────────

_FAMILY = {"ctrlleft": "ctrl", "ctrlright": "ctrl", "altleft": "alt", "altright": "alt"}
_FAMILY |= {"shiftleft": "shift", "shiftright": "shift", "winleft": "win", "winright": "win"}
FIRES_ANYWHERE = [
    {"alt", "f1"}, {"alt", "f2"}, {"alt", "f3"}, {"alt", "space"}, {"ctrl", "alt", "t"},
    {"ctrl", "alt", "delete"}, {"ctrl", "alt", "backspace"}, {"ctrl", "shift", "esc"},
    {"ctrl", "esc"}, {"f12"}, {"win"}, {"ctrl", "v"}, {"shift", "insert"},
    *({"ctrl", "alt", f"f{n}"} for n in range(1, 13)),
]  # fmt: skip
RUNS_A_LINE = [{"enter"}, {"ctrl", "j"}, {"ctrl", "m"}, {"ctrl", "o"}]


def must_ask(screen: str, name: str, args: BaseModel) -> str:
    """Why the gate had to ask before the executor ran `name(args)`, or ""."""
    observation = SCREENS[screen]
    if name == "type_text":
        text: str = args.text  # type: ignore[attr-defined]
        if screen == "password":
            return "password field"
        presses_enter = args.enter or "\n" in text or "\r" in text  # type: ignore[attr-defined]
        if presses_enter and screen in MAY_BE_TERMINAL:
            return "enter into a terminal"
        if (presses_enter or " " in text) and screen == "focused delete":
            return "enter or space on a sensitive button"
    if name == "hotkey":
        pressed = {_FAMILY.get(key, key) for key in args.keys}  # type: ignore[attr-defined]
        if any(combo <= pressed for combo in FIRES_ANYWHERE):
            return "a listed combo"
        if screen in MAY_BE_TERMINAL and any(combo <= pressed for combo in RUNS_A_LINE):
            return "a line end into a terminal"
        if screen == "focused delete" and pressed & {"enter", "space"}:
            return "enter or space on a sensitive button"
    if name == "click":
        if args.button == "middle":  # type: ignore[attr-defined]
            return "a middle click pastes"
        element_id, x, y = args.element, args.x, args.y  # type: ignore[attr-defined]
        on_delete = element_id == DELETE.id or (
            element_id is None and 100 <= x < 220 and 100 <= y < 130
        )
        if on_delete and observation.element(DELETE.id) is not None:
            return "a sensitive target"
    return ""


# ── generated arguments, spelled as models spell them ────────────────────────


def spelled_int(value: int) -> st.SearchStrategy[Any]:
    return st.sampled_from([value, str(value), float(value), f" {value}"])


BOOLS = st.sampled_from(
    [True, False, "true", "false", "True", 1, 0, 1.0, 0.0, "yes", "no", "on", "off", "1", "0"]
)
TEXT = st.text(
    st.sampled_from(["a", "b", " ", "é", "\n", "\r", "\t", "\x0f", ";", "~", "-"]), max_size=12
)
KEY = st.sampled_from(sorted(KEY_NAMES | set(ALIASES))).flatmap(
    lambda key: st.sampled_from([key, key.upper(), key.capitalize(), f" {key}"])
)


@st.composite
def key_lists(draw: st.DrawFn) -> list[str]:
    """A listed combo with extra keys around it, or any keys at all."""
    combos = [sorted(combo) for combo in FIRES_ANYWHERE + RUNS_A_LINE] + [["space"]]
    keys = list(draw(st.sampled_from(combos))) if draw(st.booleans()) else []
    for _ in range(draw(st.integers(0, 5 - len(keys)))):
        keys.insert(draw(st.integers(0, len(keys))), draw(KEY))
    return keys or [draw(KEY)]


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(["type_text", "hotkey", "click"]))
    args: dict[str, Any]
    if name == "type_text":
        args = {"text": draw(TEXT)}
        if draw(st.booleans()):
            args["enter"] = draw(BOOLS)
    elif name == "hotkey":
        args = {"keys": draw(key_lists())}
    elif draw(st.booleans()):
        args = {"element": draw(st.integers(1, 4).flatmap(spelled_int))}
    else:
        args = {
            "x": draw(st.integers(90, 230).flatmap(spelled_int)),
            "y": draw(st.integers(90, 140).flatmap(spelled_int)),
        }
    if name == "click" and draw(st.booleans()):
        args["button"] = draw(st.sampled_from(["left", "right", "middle"]))
    return name, args


async def run_one(screen: str, name: str, args: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """One run of the call under an `allow` policy (only a call that asks every time asks),
    every question answered "once": (the questions, the calls the executor ran)."""
    h = make_harness(
        answers=[ApprovalDecision.ONCE],
        policies={"type_text": Policy.ALLOW, "hotkey": Policy.ALLOW, "click": Policy.ALLOW},
    )
    h.observer.observation = SCREENS[screen]
    run = await h.create(allowed_tools=("type_text", "hotkey", "click"))
    await h.collect(run, ScriptedPlanner([tool(name, **args), done()]))
    return h.gate.requests, h.executor.calls


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(screen=st.sampled_from(sorted(SCREENS)), call=calls())
def test_whatever_the_spelling_the_gate_asks_before_a_call_that_asks_every_time(
    screen: str, call: tuple[str, dict[str, Any]]
) -> None:
    name, args = call
    asked, ran = asyncio.run(run_one(screen, name, args))
    for ran_name, ran_args in ran:
        why = must_ask(screen, ran_name, ran_args)
        assert not why or asked, f"{ran_name}({ran_args!r}) ran unasked on {screen}: {why}"
        # the person asked saw the arguments as they ran, never the model's spelling
        if asked and ran_name != "type_text":
            assert asked[0].args == ran_args.model_dump(exclude_unset=True)
