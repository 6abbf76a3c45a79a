"""Every key alias, modifier variant, function key, focus role and terminal-pane host is judged
as its rule says, through the loop's gate; parametrised over the lists themselves (issue #36
item 4)."""

from __future__ import annotations

import pytest

from desktop_agent.core.call_risk import (
    _FUNCTION_KEYS,
    _MODIFIER_FAMILY,
    PASSWORD_ROLES,
    PASTE_COMBOS,
    SYSTEM_COMBOS,
    TERMINAL_HOST_CLASSES,
    TERMINAL_HOST_NAMES,
    TERMINAL_ROLES,
)
from desktop_agent.core.keys import ALIASES
from desktop_agent.core.models import (
    ApprovalDecision,
    Decision,
    Element,
    Observation,
    Policy,
)
from tests.fakes import FakeFocusProbe, ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import make_harness

EDITOR = make_observation(
    [Element(1, "window", "notes.txt — L3afpad", (0, 0, 800, 600), focused=True)]
)


async def judged(
    call: Decision, observation: Observation = EDITOR, role: str | None = None
) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """`call` through the gate with its tool allowed by policy (only a rule can ask; the
    person asked denies): (the cautions, the keys each question showed, the keys pressed)."""
    h = make_harness(
        answers=[ApprovalDecision.DENY],
        policies={call.tool or "": Policy.ALLOW},
        focus=FakeFocusProbe(role),
    )
    h.observer.observation = observation
    run = await h.create(allowed_tools=(call.tool or "",))
    await h.collect(run, ScriptedPlanner([call], then=done()))
    return (
        [request.caution for request in h.gate.requests],
        [list(request.args.get("keys", [])) for request in h.gate.requests],
        [list(getattr(args, "keys", [])) for _, args in h.executor.calls],
    )


@pytest.mark.parametrize(("alias", "name"), ALIASES.items())
async def test_each_key_alias_is_judged_shown_and_pressed_as_the_key_it_names(
    alias: str, name: str
) -> None:
    with_alias = await judged(tool("hotkey", keys=[alias.title(), "r"]))
    assert with_alias == await judged(tool("hotkey", keys=[name, "r"]))
    _, shown, pressed = with_alias
    assert shown + pressed == [[name, "r"]]


def _combo_holding(family: str) -> list[str]:
    """The keys of a listed combo that holds `family`, the family first."""
    combo = next(combo for combo in (*SYSTEM_COMBOS, *PASTE_COMBOS) if family in combo)
    return [family, *sorted(combo - {family})]


@pytest.mark.parametrize(("key", "family"), _MODIFIER_FAMILY.items())
async def test_each_left_or_right_modifier_is_judged_as_its_family(key: str, family: str) -> None:
    if family == "win":  # no combo lists the system key: any key with it asks
        cautions, _, pressed = await judged(tool("hotkey", keys=[key, "r"]))
        assert cautions == ["win+r uses the system key, which opens launchers and system menus"]
    else:
        keys = _combo_holding(family)
        cautions, _, pressed = await judged(tool("hotkey", keys=[key, *keys[1:]]))
        assert cautions == (await judged(tool("hotkey", keys=keys)))[0] != []
    assert pressed == []


def _number(function_key: str) -> int:
    return int(function_key[1:])


FUNCTION_KEYS: list[str] = sorted(_FUNCTION_KEYS, key=_number)


@pytest.mark.parametrize("function_key", FUNCTION_KEYS)
async def test_ctrl_alt_and_each_function_key_asks(function_key: str) -> None:
    cautions, _, pressed = await judged(tool("hotkey", keys=["ctrl", "alt", function_key]))
    assert cautions == [f"ctrl+alt+{function_key} switches to a text console"] and pressed == []


@pytest.mark.parametrize("role", PASSWORD_ROLES)
async def test_typing_where_the_probe_finds_each_password_role_asks(role: str) -> None:
    cautions, _, _ = await judged(tool("type_text", text="hunter2"), role=role)
    assert cautions == ["typing into a password field"]


@pytest.mark.parametrize("role", TERMINAL_ROLES)
async def test_enter_where_the_probe_finds_each_terminal_role_asks(role: str) -> None:
    cautions, _, pressed = await judged(tool("hotkey", keys=["enter"]), role=role)
    assert cautions == ["enter runs the typed line in a terminal"] and pressed == []


def _host(label: str, *controls: Element) -> Observation:
    return make_observation(
        [Element(1, "window", label, (0, 0, 800, 600), focused=True), *controls]
    )


@pytest.mark.parametrize(
    "label",
    [
        *(f"main.py — project — {name}" for name in TERMINAL_HOST_NAMES),
        *(f"main.py — project — {window_class.title()}" for window_class in TERMINAL_HOST_CLASSES),
    ],
)
async def test_each_editor_with_a_terminal_pane_is_a_terminal_unless_its_focus_says_not(
    label: str,
) -> None:
    cautions, _, pressed = await judged(tool("hotkey", keys=["enter"]), _host(label))
    assert cautions == ["enter runs the typed line in a terminal"] and pressed == []
    # the focused control is listed and is the editor, not the terminal pane
    editor = Element(2, "text", "main.py", (100, 100, 600, 400), focused=True)
    cautions, _, pressed = await judged(tool("hotkey", keys=["enter"]), _host(label, editor))
    assert cautions == [] and pressed == [["enter"]]
