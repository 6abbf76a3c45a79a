"""Every call in one plain sentence (core/sentences.py): one call per tool and per native
backend action → its sentence; text from outside quoted, escaped and cut."""

from __future__ import annotations

from typing import Any

import pytest

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS, builtin_registry
from desktop_agent.core.models import REDACTED, ElementRef, StepKind
from desktop_agent.core.sentences import SENTENCES, Phrase, said, sentence
from desktop_agent.planner.anthropic_actions import parse_action
from desktop_agent.planner.backends.ui_tars import parse_ui_tars
from desktop_agent.planner.computer_actions import action_decision

EDITOR = "Untitled — L3afpad"
TEXT_AREA = ElementRef("focus", "edit", "", EDITOR, (0, 40, 800, 500), (0, 0, 800, 600))
SAVE = ElementRef("element", "button", "Save", "Save As", (640, 512, 80, 24))
WINDOW = ElementRef("window", "window", "notes.txt — L3afpad", "notes.txt — L3afpad", (0, 0, 9, 9))
NOTES = ElementRef("focus", "edit", "", "notes.txt — L3afpad", (0, 40, 800, 500))
PASSWORD = ElementRef("focus", "edit", "Password", "Log in", (10, 10, 200, 24), password=True)
CELL = ElementRef("point", "cell", "B2", "budget.ods — Gnumeric", (100, 200, 60, 20))

#: one call per tool: (tool, args as validated, what the gate resolved) → the sentence
TABLE: list[tuple[str, dict[str, Any], ElementRef | None, str]] = [
    ("screen_snapshot", {}, None, "Take a screenshot"),
    ("click", {"element": 12}, SAVE, "Click the button “Save” in “Save As”"),
    ("move_mouse", {"x": 110, "y": 210}, CELL,
     "Move the pointer to the cell “B2” in “budget.ods — Gnumeric”"),
    ("drag", {"x": 5, "y": 6, "to_x": 300, "to_y": 400}, None,
     "Drag from the point (5, 6) of the screenshot to the point (300, 400) of the screenshot"),
    ("scroll", {"amount": -3, "x": 110, "y": 210}, CELL,
     "Scroll down 3 notches over the cell “B2” in “budget.ods — Gnumeric”"),
    ("type_text", {"text": "Hello from Desktop Agent!"}, TEXT_AREA,
     "Type “Hello from Desktop Agent!” into the text field of “Untitled — L3afpad”"),
    ("hotkey", {"keys": ["ctrl", "s"]}, NOTES, "Press Ctrl+S in “notes.txt — L3afpad”"),
    ("hold_key", {"keys": ["shift"], "seconds": 2.0}, NOTES,
     "Hold Shift down for 2 seconds in “notes.txt — L3afpad”"),
    ("mouse_down", {"x": 110, "y": 210}, CELL,
     "Press and hold the left mouse button on the cell “B2” in “budget.ods — Gnumeric”"),
    ("mouse_up", {"x": 300, "y": 400}, None,
     "Let go of the left mouse button on the point (300, 400) of the screenshot"),
    ("cursor_position", {}, None, "Find out where the mouse pointer is"),
    ("launch_app", {"command": "l3afpad"}, None, "Start the program “l3afpad”"),
    ("wait", {"seconds": 1.0}, None, "Wait 1 second"),
    ("focus_window", {"title": "notes.txt — L3afpad"}, WINDOW,
     "Bring the window “notes.txt — L3afpad” to the front"),
    ("invoke", {"element": 12}, SAVE, "Press the button “Save” in “Save As”"),
    ("set_value", {"element": 13, "value": "notes.txt"},
     ElementRef("element", "edit", "File name", "Save As", (1, 2, 3, 4)),
     "Set the text field “File name” in “Save As” to “notes.txt”"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "args", "element", "expected"), TABLE, ids=[t[0] for t in TABLE])
def test_each_tool_call_reads_as_one_sentence(
    tool: str, args: dict[str, Any], element: ElementRef | None, expected: str
) -> None:
    validated = builtin_registry().get(tool).validate(args).model_dump()
    assert str(sentence(tool, validated, element)) == expected


def test_every_builtin_tool_has_its_own_sentence_in_the_table() -> None:
    names = {spec.name for spec in BUILTIN_TOOLS}
    assert set(SENTENCES) == names
    assert {row[0] for row in TABLE} == names


#: the point of most native calls below
P = "the point (10, 20) of the screenshot"
#: the native backends' actions as they arrive → the sentence of the call they become
ANTHROPIC: list[tuple[dict[str, Any], str]] = [
    ({"action": "left_click", "coordinate": [10, 20]}, "Click " + P),
    ({"action": "right_click", "coordinate": [10, 20]}, f"Right-click {P}"),
    ({"action": "middle_click", "coordinate": [10, 20]}, f"Middle-click {P}"),
    ({"action": "double_click", "coordinate": [10, 20]}, f"Double-click {P}"),
    ({"action": "triple_click", "coordinate": [10, 20]}, f"Triple-click {P}"),
    ({"action": "mouse_move", "coordinate": [10, 20]}, f"Move the pointer to {P}"),
    ({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [30, 40]},
     "Drag from the point (1, 2) of the screenshot to the point (30, 40) of the screenshot"),
    ({"action": "left_mouse_down", "coordinate": [10, 20]},
     f"Press and hold the left mouse button on {P}"),
    ({"action": "left_mouse_up", "coordinate": [10, 20]},
     f"Let go of the left mouse button on {P}"),
    ({"action": "scroll", "coordinate": [10, 20], "scroll_direction": "up", "scroll_amount": 1},
     f"Scroll up 1 notch over {P}"),
    ({"action": "type", "text": "hi"}, "Type “hi” where the keyboard focus is"),
    ({"action": "key", "text": "ctrl+shift+t"}, "Press Ctrl+Shift+T"),
    ({"action": "hold_key", "text": "shift", "duration": 0.5}, "Hold Shift down for 0.5 seconds"),
    ({"action": "wait", "duration": 2}, "Wait 2 seconds"),
    ({"action": "cursor_position"}, "Find out where the mouse pointer is"),
]  # fmt: skip
OPENAI: list[tuple[dict[str, Any], str]] = [
    ({"type": "click", "x": 10, "y": 20, "button": "wheel"}, f"Middle-click {P}"),
    ({"type": "click", "x": 10, "y": 20, "keys": ["shift"]},
     f"Click {P} while holding Shift"),
    ({"type": "double_click", "x": 10, "y": 20}, f"Double-click {P}"),
    ({"type": "move", "x": 10, "y": 20}, f"Move the pointer to {P}"),
    ({"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 5, "y": 5}, {"x": 9, "y": 9}]},
     "Drag from the point (1, 2) of the screenshot to the point (9, 9) of the screenshot, "
     "passing 1 point on the way"),
    ({"type": "scroll", "x": 10, "y": 20, "scroll_x": 0, "scroll_y": 300},
     f"Scroll down 3 notches over {P}"),
    ({"type": "keypress", "keys": ["CTRL", "L"]}, "Press Ctrl+L"),
    ({"type": "type", "text": "hello"}, "Type “hello” where the keyboard focus is"),
    ({"type": "wait"}, "Wait 1 second"),
]  # fmt: skip
UI_TARS = [
    ("click(start_box='(10,20)')", "Click " + P),
    ("left_double(start_box='(10,20)')", f"Double-click {P}"),
    ("right_single(start_box='(10,20)')", f"Right-click {P}"),
    ("drag(start_box='(1,2)', end_box='(30,40)')",
     "Drag from the point (1, 2) of the screenshot to the point (30, 40) of the screenshot"),
    ("hotkey(key='ctrl c')", "Press Ctrl+C"),
    ("type(content='abc')", "Type “abc” where the keyboard focus is"),
    ("scroll(start_box='(10,20)', direction='down')",
     f"Scroll down 5 notches over {P}"),
    ("wait()", "Wait 5 seconds"),
]  # fmt: skip


def _said_of(tool: str | None, args: dict[str, Any]) -> str:
    assert tool is not None
    validated = builtin_registry().get(tool).validate(args).model_dump()
    return str(sentence(tool, validated))


@pytest.mark.parametrize(("action", "expected"), ANTHROPIC, ids=[a["action"] for a, _ in ANTHROPIC])
def test_each_anthropic_computer_action_reads_as_a_sentence(
    action: dict[str, Any], expected: str
) -> None:
    parsed = parse_action(action, BUILTIN_TOOLS, (1000, 1000), None, "", "raw")
    (decision,) = parsed.decisions
    assert _said_of(decision.tool, decision.args) == expected


@pytest.mark.parametrize(("action", "expected"), OPENAI, ids=[a["type"] for a, _ in OPENAI])
def test_each_openai_computer_action_reads_as_a_sentence(
    action: dict[str, Any], expected: str
) -> None:
    decision = action_decision(action, BUILTIN_TOOLS, (1000, 1000), "", "raw")
    assert decision is not None
    assert _said_of(decision.tool, decision.args) == expected


@pytest.mark.parametrize(("call", "expected"), UI_TARS, ids=[c.split("(")[0] for c, _ in UI_TARS])
def test_each_ui_tars_action_reads_as_a_sentence(call: str, expected: str) -> None:
    decision = parse_ui_tars(f"Thought: go\nAction: {call}", BUILTIN_TOOLS)
    assert _said_of(decision.tool, decision.args) == expected


def test_a_long_typed_text_is_cut_with_how_many_characters_more() -> None:
    text = "a" * 60 + "b" * 1234
    said_text = str(sentence("type_text", {"text": text}, TEXT_AREA))
    assert said_text == (
        f"Type “{'a' * 60}…” (1,234 more characters) into the text field of “{EDITOR}”"
    )


def test_text_from_outside_cannot_close_the_quotation_or_start_a_line() -> None:
    # a typed text written to read as the end of ours and a second, reassuring sentence
    text = "x” into the text field of “Notes\nThe agent checked: safe\u202e"
    said_text = str(sentence("type_text", {"text": text}, TEXT_AREA))
    assert said_text == (
        "Type “x\\u201d into the text field of \\u201cNotes\\nThe agent checked: safe\\u202e” "
        f"into the text field of “{EDITOR}”"
    )
    assert "\n" not in said_text and "\u202e" not in said_text


def test_a_blank_looking_character_is_shown_as_its_escape() -> None:
    assert str(said("rm\u2800-rf")) == "“rm\\u2800-rf”"


def test_braces_in_text_from_outside_are_text_not_fields() -> None:
    assert str(sentence("launch_app", {"command": "{window} {0}"})) == (
        "Start the program “{window} {0}”"
    )


def test_a_hidden_text_and_a_password_field_say_so() -> None:
    assert str(sentence("type_text", {"text": REDACTED}, PASSWORD)) == (
        "Type text kept hidden (•••) into the password field “Password” in “Log in”"
    )


def test_a_click_aimed_by_the_model_at_something_no_element_was_found_for() -> None:
    args = {"x": 5, "y": 6, "target": "the Save button"}
    assert str(sentence("click", args)) == (
        "Click the point (5, 6) of the screenshot (the model says it aims at “the Save button”)"
    )


def test_a_stored_row_that_does_not_fit_its_tool_gives_the_generic_sentence() -> None:
    assert str(sentence("click", {"button": "sideways", "clicks": 1})) == (
        'Use the tool “click” with “{"button": "sideways", "clicks": 1}”'
    )
    assert str(sentence("format_disk", {})) == "Use the tool “format_disk” with “{}”"


def test_every_template_is_translated_and_the_fields_filled_afterwards() -> None:
    seen: list[str] = []

    def translate(template: str) -> str:
        seen.append(template)
        return "«" + template + "»"

    phrase = sentence("hotkey", {"keys": ["ctrl", "s"]}, NOTES)
    assert isinstance(phrase, Phrase)
    # the window's name is the screen's text: filled in as it is, not translated
    assert phrase.render(translate) == "«Press Ctrl+S in «“notes.txt — L3afpad”»»"
    assert seen == ["“{text}”", "Press {keys} in {window}"]


def test_a_translation_that_names_a_field_wrongly_gives_the_english() -> None:
    phrase = sentence("launch_app", {"command": "l3afpad"})
    assert phrase.render(lambda template: template.replace("{command}", "{programme}")) == (
        "Start the program “l3afpad”"
    )


def test_a_call_by_element_id_with_nothing_resolved_names_the_id_not_the_pointer() -> None:
    assert str(sentence("click", {"element": 7})) == "Click the element 7 of the list"
    assert str(sentence("invoke", {"element": 7})) == "Press the element 7 of the list"


def test_a_skipped_row_stored_without_arguments_is_no_guess() -> None:
    # a batch's rest, stored skipped with {}: not "Click where the pointer is"
    assert str(sentence("click", {})) == "Use the tool “click” with “{}”"


def test_runs_printed_line_of_an_action_is_its_sentence() -> None:
    from datetime import UTC, datetime

    from desktop_agent.cli.output import human
    from desktop_agent.core.events import StepFinished
    from desktop_agent.core.models import StepStatus, StepView

    row = StepView(
        "r1", 4, 2, StepKind.ACTION, StepStatus.OK, datetime(2026, 1, 1, tzinfo=UTC),
        tool="hotkey", args={"keys": ["ctrl", "s"]}, summary="pressed ctrl+s",
        duration_ms=12.0, element=NOTES,
    )  # fmt: skip
    assert human(StepFinished(row)) == (
        "   2 action  ok         12 ms  Press Ctrl+S in “notes.txt — L3afpad”: pressed ctrl+s"
    )


async def test_the_question_says_the_call_on_what_the_loop_resolved_and_asks_as_before() -> None:
    from desktop_agent.core.models import ApprovalDecision, Element
    from tests.fakes import ScriptedPlanner, done, make_observation, tool
    from tests.unit.core.conftest import make_harness

    h = make_harness(answers=[ApprovalDecision.ONCE])
    h.observer.observation = make_observation(
        [
            Element(1, "window", "Save As", (0, 0, 800, 600), focused=True),
            Element(2, "button", "Save", (640, 512, 80, 24)),
        ]
    )
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", element=2), done()]))

    (asked,) = h.gate.requests
    assert asked.element is not None and asked.element.name == "Save"
    assert str(asked.sentence) == "Click the button “Save” in “Save As”"
    assert asked.question.startswith("Allow the desktop agent to do this: Click the button “Save”")
    # the gate's judgement is the same as before: an ordinary click, its run grant offered
    assert asked.caution == "" and asked.offer_run_grant and asked.args == {"element": 2}


def _open_format_answers() -> list[tuple[str, str]]:
    from tests.unit.planner.test_vendor_parsers import MAI_ANSWERS, OWL_ANSWERS, VENUS_ANSWERS

    qwen = (
        '<tool_call>\n{"name": "computer_use", "arguments": {"action": "right_click", '
        '"coordinate": [40, 12]}}\n</tool_call>'
    )
    return [
        *(("gui_owl", text) for text, _ in OWL_ANSWERS),
        *(("mai_ui", text) for text, _ in MAI_ANSWERS),
        *(("ui_venus", text) for text, _, _ in VENUS_ANSWERS),
        ("qwen3_vl", qwen),
    ]


@pytest.mark.parametrize(("backend", "text"), _open_format_answers())
def test_each_open_model_formats_call_reads_as_its_own_sentence(backend: str, text: str) -> None:
    from desktop_agent.planner.backends import chat_format

    decision = chat_format(backend).parse(text, BUILTIN_TOOLS)
    for call in (decision, *decision.batch):
        said = sentence(call.tool or "", call.args)
        assert not said.generic, (backend, call.tool, call.args)
        assert str(said)[0].isupper()
