"""Every call's sentence in Chinese: one call per tool and per native backend action (the
tables of tests/unit/core/test_sentences.py) → its zh_CN sentence, as ui/text.in_words shows it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QTranslator

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS, builtin_registry
from desktop_agent.core.sentences import sentence
from desktop_agent.planner.anthropic_actions import parse_action
from desktop_agent.planner.backends.ui_tars import parse_ui_tars
from desktop_agent.planner.computer_actions import action_decision
from desktop_agent.ui.i18n import CATALOGUE, translations_dir
from desktop_agent.ui.text import in_words
from tests.unit.core.test_sentences import ANTHROPIC, OPENAI, TABLE, UI_TARS

pytestmark = [pytest.mark.gui]

#: the point of most native calls below
P = "截图上的点 (10, 20)"
#: each tool of TABLE, in its order → its sentence in Chinese
TOOLS_ZH = {
    "screen_snapshot": "截取屏幕",
    "click": "单击“Save As”中的按钮“Save”",
    "move_mouse": "将鼠标指针移到“budget.ods — Gnumeric”中的单元格“B2”",
    "drag": "从截图上的点 (5, 6)拖动到截图上的点 (300, 400)",
    "scroll": "在“budget.ods — Gnumeric”中的单元格“B2”上向下滚动 3 格",
    "type_text": "在“Untitled — L3afpad”的文本框中输入“Hello from Desktop Agent!”",
    "hotkey": "在“notes.txt — L3afpad”中按 Ctrl+S",
    "hold_key": "在“notes.txt — L3afpad”中按住 Shift 2 秒",
    "mouse_down": "在“budget.ods — Gnumeric”中的单元格“B2”上按住鼠标左键",
    "mouse_up": "在截图上的点 (300, 400)上松开鼠标左键",
    "cursor_position": "查看鼠标指针的位置",
    "launch_app": "启动程序“l3afpad”",
    "wait": "等待 1 秒",
    "focus_window": "将窗口“notes.txt — L3afpad”切换到前台",
    "invoke": "按下“Save As”中的按钮“Save”",
    "set_value": "将“Save As”中的文本框“File name”设为“notes.txt”",
}
ANTHROPIC_ZH = [
    "单击" + P, "右键单击" + P, "中键单击" + P, "双击" + P, "三击" + P, "将鼠标指针移到" + P,
    "从截图上的点 (1, 2)拖动到截图上的点 (30, 40)", f"在{P}上按住鼠标左键",
    f"在{P}上松开鼠标左键", f"在{P}上向上滚动 1 格", "在键盘焦点处输入“hi”", "按 Ctrl+Shift+T",
    "按住 Shift 0.5 秒", "等待 2 秒", "查看鼠标指针的位置",
]  # fmt: skip
OPENAI_ZH = [
    "中键单击" + P, "按住 Shift 的同时单击" + P, "双击" + P, "将鼠标指针移到" + P,
    "从截图上的点 (1, 2)拖动到截图上的点 (9, 9)，途经 1 个点", f"在{P}上向下滚动 3 格",
    "按 Ctrl+L", "在键盘焦点处输入“hello”", "等待 1 秒",
]  # fmt: skip
UI_TARS_ZH = [
    "单击" + P, "双击" + P, "右键单击" + P, "从截图上的点 (1, 2)拖动到截图上的点 (30, 40)",
    "按 Ctrl+C", "在键盘焦点处输入“abc”", f"在{P}上向下滚动 5 格", "等待 5 秒",
]  # fmt: skip


@pytest.fixture(scope="module")
def zh(qapp: Any) -> Iterator[None]:
    """The app's own Chinese translator installed (Qt's is not needed for a sentence)."""
    translator = QTranslator()
    assert translator.load(f"{CATALOGUE}_zh_CN", str(translations_dir()))
    assert qapp.installTranslator(translator)
    yield
    QCoreApplication.removeTranslator(translator)


def _said(tool: str | None, args: dict[str, Any], element: Any = None) -> str:
    assert tool is not None
    validated = builtin_registry().get(tool).validate(args).model_dump()
    return in_words(sentence(tool, validated, element))


def test_every_tool_of_the_table_has_its_chinese_sentence() -> None:
    assert [row[0] for row in TABLE] == list(TOOLS_ZH)
    assert len(ANTHROPIC_ZH) == len(ANTHROPIC)
    assert len(OPENAI_ZH) == len(OPENAI)
    assert len(UI_TARS_ZH) == len(UI_TARS)


@pytest.mark.parametrize("row", TABLE, ids=[t[0] for t in TABLE])
def test_each_tool_call_reads_as_one_sentence_in_both_languages(
    zh: None, row: tuple[str, dict[str, Any], Any, str]
) -> None:
    tool, args, element, english = row
    validated = builtin_registry().get(tool).validate(args).model_dump()
    assert str(sentence(tool, validated, element)) == english
    assert _said(tool, args, element) == TOOLS_ZH[tool]


@pytest.mark.parametrize(
    ("action", "expected"),
    [(a, zh) for (a, _), zh in zip(ANTHROPIC, ANTHROPIC_ZH, strict=True)],
    ids=[a["action"] for a, _ in ANTHROPIC],
)
def test_each_anthropic_action_reads_in_chinese(
    zh: None, action: dict[str, Any], expected: str
) -> None:
    (decision,) = parse_action(action, BUILTIN_TOOLS, (1000, 1000), None, "", "raw").decisions
    assert _said(decision.tool, decision.args) == expected


@pytest.mark.parametrize(
    ("action", "expected"),
    [(a, zh) for (a, _), zh in zip(OPENAI, OPENAI_ZH, strict=True)],
    ids=[a["type"] for a, _ in OPENAI],
)
def test_each_openai_action_reads_in_chinese(
    zh: None, action: dict[str, Any], expected: str
) -> None:
    decision = action_decision(action, BUILTIN_TOOLS, (1000, 1000), "", "raw")
    assert decision is not None
    assert _said(decision.tool, decision.args) == expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [(c, zh) for (c, _), zh in zip(UI_TARS, UI_TARS_ZH, strict=True)],
    ids=[c.split("(")[0] for c, _ in UI_TARS],
)
def test_each_ui_tars_action_reads_in_chinese(zh: None, call: str, expected: str) -> None:
    decision = parse_ui_tars(f"Thought: go\nAction: {call}", BUILTIN_TOOLS)
    assert _said(decision.tool, decision.args) == expected
