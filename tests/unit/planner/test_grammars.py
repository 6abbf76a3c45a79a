"""Each family's documented answer format → our Decision (points still in the model's space).

Fixtures are the formats as their sources show them:
- UI-TARS: bytedance/UI-TARS README "Prompt Usage Guide" / codes/ui_tars/prompt.py action space
  (``click(start_box='<|box_start|>(x1,y1)<|box_end|>')``, ``hotkey(key='ctrl c')``,
  ``type(content='...')`` with a trailing ``\\n`` to submit, ``finished(content='xxx')``,
  ``call_user()``), and codes/tests/action_parser_test.py
  (``click(point='<point>200 300</point>')``).
- Qwen2.5-VL / Qwen3-VL: the computer_use / mobile_use function of the Qwen cookbooks
  (QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb shows the model answering
  ``<tool_call>\\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate":
  [935, 406]}}\\n</tool_call>``); the computer_use actions are key, type, mouse_move,
  left_click, left_click_drag, right_click, middle_click, double_click, scroll, wait, terminate.
"""

from __future__ import annotations

from typing import Any

import pytest

from desktop_agent.core.errors import PlannerError
from desktop_agent.planner.backends.ui_tars import parse_ui_tars
from desktop_agent.planner.parsing import parse_decision
from tests.unit.planner.conftest import tools

ALL = tools("click", "drag", "hotkey", "type_text", "scroll", "wait", "move_mouse")


@pytest.mark.parametrize(
    ("answer", "tool", "args"),
    [
        (
            "Thought: Click the Save button.\n"
            "Action: click(start_box='<|box_start|>(644,364)<|box_end|>')",
            "click",
            {"x": 644, "y": 364},
        ),
        (
            "Thought: test\nAction: click(point='<point>200 300</point>')",
            "click",
            {"x": 200, "y": 300},
        ),
        ("Action: click(start_box='(112,224)')", "click", {"x": 112, "y": 224}),
        ("Action: click(start_box='[100, 200, 300, 400]')", "click", {"x": 200, "y": 300}),
        (
            "Thought: open it\nAction: left_double(start_box='<|box_start|>(10,20)<|box_end|>')",
            "click",
            {"x": 10, "y": 20, "clicks": 2},
        ),
        (
            "Action: right_single(start_box='<|box_start|>(10,20)<|box_end|>')",
            "click",
            {"x": 10, "y": 20, "button": "right"},
        ),
        (
            "Action: drag(start_box='<|box_start|>(10,20)<|box_end|>', "
            "end_box='<|box_start|>(30,40)<|box_end|>')",
            "drag",
            {"x": 10, "y": 20, "to_x": 30, "to_y": 40},
        ),
        ("Thought: copy\nAction: hotkey(key='ctrl c')", "hotkey", {"keys": ["ctrl", "c"]}),
        ("Action: type(content='hello world')", "type_text", {"text": "hello world"}),
        (
            "Action: type(content='cats\\n')",
            "type_text",
            {"text": "cats", "enter": True},
        ),
        (
            "Action: scroll(start_box='<|box_start|>(50,60)<|box_end|>', direction='down')",
            "scroll",
            {"amount": -5, "x": 50, "y": 60},
        ),
        ("Action: wait()", "wait", {"seconds": 5.0}),
    ],
)
def test_ui_tars_actions_become_our_tools(answer: str, tool: str, args: dict[str, Any]) -> None:
    decision = parse_ui_tars(answer, ALL)
    assert (decision.action, decision.tool, decision.args) == ("tool", tool, args)
    assert decision.raw == answer


def test_ui_tars_finished_and_call_user_end_the_run() -> None:
    done = parse_ui_tars("Thought: saved.\nAction: finished(content='The file is saved.')", ALL)
    assert (done.action, done.message) == ("done", "The file is saved.")
    stuck = parse_ui_tars("Thought: I need a password.\nAction: call_user()", ALL)
    assert (stuck.action, stuck.reason) == ("fail", "I need a password.")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("I would click the button.", r"no 'Action:' line"),
        (
            "Action: click(start_box='(1,2)')\n\nhotkey(key='enter')",
            r"holds 2 actions; give exactly one",
        ),
        ("Action: open_app(app_name='calc')", r"unknown UI-TARS action open_app\(\)"),
        ("Action: scroll(start_box='(1,2)', direction='left')", r"scrolling left is not supported"),
        ("Action: click(start_box='(1)')", r"cannot read a point"),
        ("Action: launch_app(command='rm')", r"unknown UI-TARS action"),
    ],
)
def test_unusable_ui_tars_answers_say_why(answer: str, message: str) -> None:
    with pytest.raises(PlannerError, match=message):
        parse_ui_tars(answer, ALL)


def test_a_ui_tars_action_whose_tool_the_run_does_not_allow_is_refused() -> None:
    with pytest.raises(PlannerError, match=r"asks for hotkey, which this run does not allow"):
        parse_ui_tars("Action: hotkey(key='super')", tools("click"))


def _call(arguments: dict[str, Any], name: str = "computer_use") -> str:
    import json

    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


@pytest.mark.parametrize(
    ("arguments", "tool", "args"),
    [
        ({"action": "left_click", "coordinate": [935, 406]}, "click", {"x": 935, "y": 406}),
        (
            {"action": "double_click", "coordinate": [5, 6]},
            "click",
            {"x": 5, "y": 6, "clicks": 2},
        ),
        (
            {"action": "right_click", "coordinate": [5, 6]},
            "click",
            {"x": 5, "y": 6, "button": "right"},
        ),
        ({"action": "mouse_move", "coordinate": [7, 8]}, "move_mouse", {"x": 7, "y": 8}),
        ({"action": "type", "text": "hello"}, "type_text", {"text": "hello"}),
        ({"action": "key", "keys": ["ctrl", "s"]}, "hotkey", {"keys": ["ctrl", "s"]}),
        ({"action": "scroll", "pixels": -300}, "scroll", {"amount": -3}),
        ({"action": "wait", "time": 2}, "wait", {"seconds": 2.0}),
    ],
)
def test_qwen_computer_use_calls_become_our_tools(
    arguments: dict[str, Any], tool: str, args: dict[str, Any]
) -> None:
    decision = parse_decision(_call(arguments), ALL)
    assert (decision.action, decision.tool, decision.args) == ("tool", tool, args)


def test_qwen_mobile_use_click_from_the_cookbook_is_read() -> None:
    answer = _call({"action": "click", "coordinate": [935, 406]}, name="mobile_use")
    assert parse_decision(answer, ALL).args == {"x": 935, "y": 406}


def test_qwen_terminate_ends_the_run_with_its_status() -> None:
    assert parse_decision(_call({"action": "terminate", "status": "success"}), ALL).action == "done"
    failed = parse_decision(_call({"action": "terminate", "status": "failure"}), ALL)
    assert failed.action == "fail"


def test_a_qwen_call_with_a_bad_coordinate_says_why() -> None:
    with pytest.raises(PlannerError, match=r'"coordinate" must be \[x, y\]'):
        parse_decision(_call({"action": "left_click", "coordinate": "here"}), ALL)
