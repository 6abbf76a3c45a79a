"""The app in the person's language: every text of the translated modules goes through Qt's
translation, every zh_CN entry is finished, the call sentences included, and the app shows it."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QTranslator

from desktop_agent.core.models import ApprovalRequest, ElementRef, Risk
from desktop_agent.core.sentences import CONTEXT, sentence
from desktop_agent.ui.i18n import install, resolve, translations_dir

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from translations import SOURCES, out_of_date, sentence_templates  # noqa: E402

pytestmark = [pytest.mark.gui]

TS = ROOT / "resources" / "i18n" / "desktop_agent_zh_CN.ts"
#: the modules whose every user-facing text is translatable (the rest: docs/translations.md)
TRANSLATED = [
    "approval.py",
    "close_up.py",
    "acting_panel.py",
    "acting.py",
    "step_detail.py",
    "timeline.py",
    "task_panel.py",
]
#: Qt calls that show their (first) string argument to a person
_SHOWN = {"setText", "setToolTip", "setWindowTitle", "setPlaceholderText", "addRow", "addItem",
          "QPushButton", "QCheckBox", "QLabel", "plain_label", "setAccessibleName"}  # fmt: skip


def messages(path: Path = TS) -> dict[tuple[str, str], ET.Element]:
    found = {}
    for context in ET.parse(path).getroot().iter("context"):
        for message in context.iter("message"):
            found[(context.findtext("name") or "", message.findtext("source") or "")] = message
    return found


def test_every_zh_cn_entry_is_finished_and_keeps_the_fields_and_the_shortcut() -> None:
    for (context, source), message in messages().items():
        translation = message.find("translation")
        assert translation is not None and translation.get("type") is None, (context, source)
        text = translation.text or ""
        assert text.strip(), (context, source)
        fields = sorted(re.findall(r"\{\w*\}", source))
        assert sorted(re.findall(r"\{\w*\}", text)) == fields, (context, source, text)
        assert ("&" in source.replace("&&", "")) == ("&" in text.replace("&&", "")), source


def test_every_call_sentence_template_has_its_zh_cn_entry() -> None:
    sentences = {source for context, source in messages() if context == CONTEXT}
    missing = [text for text in sentence_templates() if text not in sentences]
    assert missing == []


def test_the_template_list_holds_every_template_a_sentence_uses() -> None:
    from tests.unit.core.test_sentences import TABLE

    used: set[str] = set()

    def record(template: str) -> str:
        used.add(template)
        return template

    for tool, args, element, _ in TABLE:
        sentence(tool, args, element).render(record)
    assert used - set(sentence_templates()) == set()


def test_the_zh_cn_source_holds_every_text_of_the_code(tmp_path: Path) -> None:
    # a tr() text added without its translation: lupdate finds it, the .ts does not have it
    fresh = tmp_path / "fresh_zh_CN.ts"
    lupdate = Path(sys.executable).parent / "pyside6-lupdate"
    subprocess.run(
        [str(lupdate), *map(str, SOURCES), "-locations", "none", "-silent", "-ts", str(fresh)],
        check=True,
    )
    assert set(messages(fresh)) - set(messages()) == set()


@pytest.mark.parametrize("module", TRANSLATED)
def test_no_text_shown_in_a_translated_module_skips_the_translation(module: str) -> None:
    tree = ast.parse((ROOT / "desktop_agent" / "ui" / module).read_text(encoding="utf-8"))
    bare = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        first = node.args[0]
        if name in _SHOWN and isinstance(first, ast.Constant | ast.JoinedStr):
            # an f-string's own words: its literal parts, markup tags left out
            parts = [first] if isinstance(first, ast.Constant) else first.values
            words = "".join(str(p.value) for p in parts if isinstance(p, ast.Constant))
            if isinstance(words, str) and re.search(r"[A-Za-z]{2}", re.sub(r"<[^>]*>", "", words)):
                bare.append((node.lineno, words))
    assert bare == []


def test_the_committed_qm_says_what_its_ts_says(tmp_path: Path) -> None:
    # the .qm is committed (a wheel built from a checkout ships it): one left behind by an
    # edit of the .ts is caught here
    assert out_of_date(TS) == []
    edited = tmp_path / TS.name
    edited.write_text(
        TS.read_text(encoding="utf-8").replace(">拒绝(&amp;D)<", ">不允许(&amp;D)<", 1),
        encoding="utf-8",
    )
    (tmp_path / TS.with_suffix(".qm").name).write_bytes(TS.with_suffix(".qm").read_bytes())
    assert out_of_date(edited) == ["ApprovalDialog: &Deny"]
    (tmp_path / TS.with_suffix(".qm").name).unlink()
    assert len(out_of_date(edited)) == len(messages())


def test_the_language_follows_the_setting_else_the_system_locale() -> None:
    assert resolve("zh_CN", "en_US") == "zh_CN"
    assert resolve("en", "zh_CN") == "en"
    assert resolve("system", "zh_CN") == "zh_CN"
    assert resolve("system", "zh_Hans_SG") == "zh_CN"
    assert resolve("system", "zh_TW") == "en"  # no Traditional Chinese translation
    assert resolve("system", "de_DE") == "en"


@pytest.fixture
def chinese(qapp: Any) -> Iterator[list[QTranslator]]:
    assert (translations_dir() / "desktop_agent_zh_CN.qm").exists(), (
        "build the translations: python scripts/translations.py build"
    )
    translators = install(qapp, "zh_CN")
    yield translators
    for translator in translators:
        QCoreApplication.removeTranslator(translator)
    from PySide6.QtCore import QLocale

    QLocale.setDefault(QLocale("en_US"))


def test_the_approval_dialog_speaks_chinese(
    chinese: list[QTranslator], qtbot: Any, tmp_path: Path
) -> None:
    from desktop_agent.ui.approval import ApprovalDialog

    field = ElementRef("focus", "edit", "", "Untitled — L3afpad", (0, 40, 800, 500))
    request = ApprovalRequest(
        "a1", "r1", 1, "type_text", {"text": "Hello from Desktop Agent!"}, "", Risk.INPUT,
        True, 30.0, element=field,
    )  # fmt: skip
    dialog = ApprovalDialog(None, request, tmp_path)
    qtbot.addWidget(dialog)

    assert len(chinese) == 2  # Qt's own and the app's
    assert dialog.sentence_label.text() == (
        "在“Untitled — L3afpad”的文本框中输入“Hello from Desktop Agent!”"
    )
    assert dialog.once_button.text() == "允许一次(&O)"
    assert dialog.deny_button.text() == "拒绝(&D)"
    assert dialog.details_button.text() == "详细信息"


def test_the_language_setting_is_read_before_the_settings_are_loaded(tmp_path: Path) -> None:
    from desktop_agent.ui.i18n import language_setting

    home = {"DESKTOP_AGENT_HOME": str(tmp_path)}
    assert language_setting(home) == "system"  # no file
    (tmp_path / "settings.toml").write_text(
        'model = "x"\nlanguage = "zh_CN"  # chosen\n[policies]\nlanguage = "en"\n'
    )
    assert language_setting(home) == "zh_CN"
    assert language_setting({**home, "DESKTOP_AGENT_LANGUAGE": "en"}) == "en"
