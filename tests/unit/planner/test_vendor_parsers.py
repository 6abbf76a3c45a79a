"""The open agent models' formats read as their vendors read them, on the same strings.

Where a vendor's reader is licensed for it (MIT, Apache-2.0) its functions are kept verbatim
in tests/unit/planner/vendor/*.txt (each names its repository, commit, file and lines) and
run here beside ours; UI-Venus's repository is "for research and educational purposes only",
so its strings are transcribed with what its parse_answer returns for them (cited).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision
from desktop_agent.planner.backends import chat_format

VENDOR = Path(__file__).parent / "vendor"
TOOLS = BUILTIN_TOOLS


def vendor(name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile((VENDOR / name).read_text(), name, "exec"), namespace)  # noqa: S102
    return namespace


def tool_of(decision: Decision) -> tuple[str | None, dict[str, Any]]:
    return decision.tool, decision.args


#: GUI-Owl-1.5 answers: (text, the tools we run, in order)
OWL_ANSWERS = [
    (
        'Action: click the search box\n<tool_call>\n{"name": "computer_use", "arguments": '
        '{"action": "left_click", "coordinate": [512, 88]}}\n</tool_call>',
        [("click", {"x": 512, "y": 88})],
    ),
    (
        "Action: type and save\n<tool_call>\n{'name': 'computer_use', 'arguments': "
        "{'action': 'type', 'text': 'hello'}}\n</tool_call>\n<tool_call>\n"
        '{"name": "computer_use", "arguments": {"action": "key", "keys": ["ctrl", "s"]}}\n'
        "</tool_call>",
        [("type_text", {"text": "hello"}), ("hotkey", {"keys": ["ctrl", "s"]})],
    ),
    (
        'Action: drag\n<tool_call>\n{"name": "computer_use", "arguments": {"action": '
        '"mouse_move", "coordinate": [10, 20]}}\n</tool_call>\n<tool_call>\n{"name": '
        '"computer_use", "arguments": {"action": "left_click_drag", "coordinate": [300, 400]}}'
        "\n</tool_call>",
        [
            ("move_mouse", {"x": 10, "y": 20}),
            ("drag", {"x": 10, "y": 20, "to_x": 300, "to_y": 400}),
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), OWL_ANSWERS)
def test_gui_owl_calls_are_the_ones_its_own_reader_finds(
    text: str, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    theirs = vendor("gui_owl_utils.py.txt")["extract_tool_calls"](text)
    decision = chat_format("gui_owl").parse(text, TOOLS)
    ours = [decision, *decision.batch]
    assert [tool_of(d) for d in ours] == expected
    # the same calls, in the same order, with the same coordinates
    assert [call["arguments"]["action"] for call in theirs] == [
        "left_click" if t == "click" else {"type_text": "type", "hotkey": "key",
         "move_mouse": "mouse_move", "drag": "left_click_drag"}[t]
        for t, _ in expected
    ]  # fmt: skip
    for call, (_, args) in zip(theirs, expected, strict=True):
        if "coordinate" in call["arguments"]:
            x, y = call["arguments"]["coordinate"]
            assert (args.get("to_x", args.get("x")), args.get("to_y", args.get("y"))) == (x, y)


def test_qwen3_vl_reads_a_call_as_the_gui_owl_reader_does_in_the_same_template() -> None:
    text = (
        "Thought: the file menu.\nAction: open it.\n<tool_call>\n"
        + json.dumps({"name": "computer_use", "arguments": {"action": "double_click",
                      "coordinate": [40, 12]}})
        + "\n</tool_call>"
    )  # fmt: skip
    theirs = vendor("gui_owl_utils.py.txt")["extract_tool_calls"](text)
    decision = chat_format("qwen3_vl").parse(text, TOOLS)
    assert theirs[0]["arguments"]["coordinate"] == [40, 12]
    assert tool_of(decision) == ("click", {"x": 40, "y": 12, "clicks": 2})
    assert decision.reason == "Thought: the file menu.\nAction: open it."


#: MAI-UI answers (src/prompt.py's output format)
MAI_ANSWERS = [
    (
        "<thinking>\nThe Save button is at the bottom.\n</thinking>\n<tool_call>\n"
        '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [499, 900]}}\n'
        "</tool_call>",
        ("click", {"x": 499, "y": 900}),
    ),
    (
        # a thinking model closes with </think> only (parse_tagged_text reads it so)
        "I should type the line.</think>\n<tool_call>\n"
        '{"name": "mobile_use", "arguments": {"action": "type", "text": "hi"}}\n</tool_call>',
        ("type_text", {"text": "hi"}),
    ),
    (
        "<thinking>drag it</thinking><tool_call>"
        '{"name": "mobile_use", "arguments": {"action": "drag", "start_coordinate": [1, 2], '
        '"end_coordinate": [998, 997]}}</tool_call>',
        ("drag", {"x": 1, "y": 2, "to_x": 998, "to_y": 997}),
    ),
]


@pytest.mark.parametrize(("text", "expected"), MAI_ANSWERS)
def test_mai_ui_calls_read_as_its_agent_reads_them(
    text: str, expected: tuple[str, dict[str, Any]]
) -> None:
    agent = vendor("mai_ui_agent.py.txt")
    theirs = agent["parse_action_to_structure_output"](text)
    decision = chat_format("mai_ui").parse(text, TOOLS)
    assert tool_of(decision) == expected
    assert decision.reason == theirs["thinking"]
    action = theirs["action_json"]
    # theirs normalizes by SCALE_FACTOR 999; ours keeps the model's numbers (the profile's
    # scale 999 maps them): the same point on the screen
    scale = agent["SCALE_FACTOR"]
    for name, (x_name, y_name) in (
        ("coordinate", ("x", "y")),
        ("start_coordinate", ("x", "y")),
        ("end_coordinate", ("to_x", "to_y")),
    ):
        if name in action:
            x, y = action[name]
            assert (round(x * scale), round(y * scale)) == (
                decision.args[x_name],
                decision.args[y_name],
            )


#: UI-Venus-1.5 answers, and what its parse_answer (models/navigation/utils.py, lines
#: 138–219) returns for the action: (name, params)
VENUS_ANSWERS = [
    (
        "<think>the box</think><action>Click(box=(120, 45))</action><conclusion>ok</conclusion>",
        ("Click", {"box": (120.0, 45.0)}),
        ("click", {"x": 120, "y": 45}),
    ),
    (
        "<think>t</think><action>Drag(start=(1,2), end=(30,40))</action><conclusion>c</conclusion>",
        ("Drag", {"start": (1.0, 2.0), "end": (30.0, 40.0)}),
        ("drag", {"x": 1, "y": 2, "to_x": 30, "to_y": 40}),
    ),
    (
        "<think>t</think><action>Type(content='a, b (c)')</action><conclusion>c</conclusion>",
        ("Type", {"content": "a, b (c)"}),
        ("type_text", {"text": "a, b (c)"}),
    ),
    (
        "<think>t</think><action>Scroll(direction='down')</action><conclusion>c</conclusion>",
        ("Scroll", {"start": (), "end": (), "direction": "down"}),
        ("scroll", {"amount": -5}),
    ),
    (
        "<think>t</think><action>Hotkey(keys=['ctrl', 's'])</action><conclusion>c</conclusion>",
        None,  # the web prompt offers it; parse_answer has no branch for it (an error there)
        ("hotkey", {"keys": ["ctrl", "s"]}),
    ),
]


@pytest.mark.parametrize(("text", "theirs", "ours"), VENUS_ANSWERS)
def test_ui_venus_actions_as_its_parse_answer_reads_them(
    text: str, theirs: tuple[str, dict[str, Any]] | None, ours: tuple[str, dict[str, Any]]
) -> None:
    decision = chat_format("ui_venus").parse(text, TOOLS)
    assert tool_of(decision) == ours
    assert decision.reason in ("the box", "t")
    if theirs is not None:
        assert _as_ours(theirs) == ours


def _as_ours(theirs: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """What UI-Venus's runner does with parse_answer's result, in our tools."""
    name, params = theirs
    if name == "Click":
        return "click", {"x": round(params["box"][0]), "y": round(params["box"][1])}
    if name == "Drag":
        (x, y), (to_x, to_y) = params["start"], params["end"]
        return "drag", {"x": round(x), "y": round(y), "to_x": round(to_x), "to_y": round(to_y)}
    if name == "Type":
        return "type_text", {"text": params["content"]}
    return "scroll", {"amount": 5 if params["direction"] == "up" else -5}


def test_an_answer_with_no_call_is_a_model_mistake_that_says_what_to_answer() -> None:
    for backend in ("qwen3_vl", "gui_owl", "mai_ui"):
        with pytest.raises(PlannerError, match="has no <tool_call>"):
            chat_format(backend).parse("I will click the button.", TOOLS)
    with pytest.raises(PlannerError, match="has no <action>"):
        chat_format("ui_venus").parse("Click(box=(1,2))", TOOLS)


def test_a_qwen_drag_without_a_start_in_the_answer_is_refused_never_run_from_anywhere() -> None:
    text = (
        '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click_drag", '
        '"coordinate": [5, 5]}}</tool_call>'
    )
    with pytest.raises(PlannerError, match="put a mouse_move to the start"):
        chat_format("qwen3_vl").parse(text, TOOLS)


def test_a_done_after_actions_waits_for_the_next_turn_and_a_done_alone_ends() -> None:
    click = '{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1, 1]}}'
    end = '{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}'
    decision = chat_format("gui_owl").parse(
        f"<tool_call>{click}</tool_call><tool_call>{end}</tool_call>", TOOLS
    )
    assert (decision.action, decision.batch) == ("tool", ())
    alone = chat_format("gui_owl").parse(f"<tool_call>{end}</tool_call>", TOOLS)
    assert alone.action == "done"
