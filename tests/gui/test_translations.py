"""The app in the person's language: every text of the translated modules goes through Qt's
translation, every zh_CN entry is finished, the call sentences included, and the app shows it."""

from __future__ import annotations

import ast
import os
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
#: every module of the app's window side: each user-facing text goes through Qt's translation
TRANSLATED = sorted(
    path.relative_to(ROOT).as_posix()
    for path in [*(ROOT / "desktop_agent" / "ui").glob("*.py"), ROOT / "desktop_agent" / "app.py"]
)
#: calls that show their string arguments to a person: Qt's, and the app's own that pass
#: theirs on to Qt (main window, settings, model servers, routines, tray, task panel, app)
_SHOWN = {
    "setText", "setToolTip", "setWindowTitle", "setPlaceholderText", "addRow", "addItem",
    "addItems", "insertItem", "QPushButton", "QCheckBox", "QRadioButton", "QLabel", "QGroupBox",
    "QAction", "addAction", "addMenu", "addTab", "setTitle", "setStatusTip", "setWhatsThis",
    "showMessage", "setHeaderLabels", "setHorizontalHeaderLabels", "QTreeWidgetItem",
    "QListWidgetItem", "setSpecialValueText", "setSuffix", "setLabelText", "information",
    "warning", "critical", "question", "plain_label", "setAccessibleName", "_row", "action",
    "set_status", "show_notice", "show_note", "show_problem", "notify", "set_vision",
    "start_live", "_message_box", "refuse_to_start",
}  # fmt: skip
#: calls whose first text is shown and whose later arguments are data (a combo box's item)
_TEXT_THEN_DATA = {"addItem", "insertItem"}
#: receivers whose calls of those names write to the log, not to a person
_NOT_SHOWN = {"log", "logger", "logging", "warnings"}
#: keyword arguments that carry a shown text
_SHOWN_KEYWORDS = {"text", "title", "message", "tip", "label"}


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


def _bare_texts(source: str) -> list[tuple[int, str]]:
    """The string literals with words that `source` passes to a call that shows them."""
    bare = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        receiver = getattr(getattr(node.func, "value", None), "id", None)
        if name in ("tr", "translate"):
            # lupdate reads no f-string, and a translation is looked up by its exact text
            bare += [(node.lineno, "f-string") for a in node.args if isinstance(a, ast.JoinedStr)]
            continue
        if receiver in _NOT_SHOWN:
            continue
        shown = [*node.args] if name in _SHOWN else []
        if name in _TEXT_THEN_DATA:  # the text, then data that is not shown
            texts = [
                i
                for i, a in enumerate(shown)
                if isinstance(a, ast.Constant | ast.JoinedStr | ast.Call)
            ]
            shown = shown[: texts[0] + 1] if texts else shown
        elif name == "_row":  # the settings dialog's (form, setting's name, label, widget)
            shown = shown[2:3]
        elif name == "action":  # the window's (text, *shortcut keys)
            shown = shown[:1]
        elif name == "set_vision":  # the task panel's (state's key, reason shown)
            shown = shown[1:]
        shown += [k.value for k in node.keywords if k.arg in _SHOWN_KEYWORDS]
        for argument in shown:
            items = argument.elts if isinstance(argument, ast.List | ast.Tuple) else [argument]
            for item in items:
                if isinstance(item, ast.IfExp):
                    items += [item.body, item.orelse]
                    continue
                if not isinstance(item, ast.Constant | ast.JoinedStr):
                    continue
                # an f-string's own words: its literal parts, markup tags left out
                parts = [item] if isinstance(item, ast.Constant) else item.values
                words = "".join(str(p.value) for p in parts if isinstance(p, ast.Constant))
                if re.search(r"[A-Za-z]{2}", re.sub(r"<[^>]*>|&\w+;", "", words)):
                    bare.append((node.lineno, words))
    return bare


def test_the_scan_finds_a_bare_text_in_any_argument_of_a_showing_call() -> None:
    source = (
        "box.addRow(self.tr('Name:'), QLabel('Ready'))\n"
        "menu.addAction(icon, 'Quit')\n"
        "tray.notify(self.tr('Done'), f'run {n} ended')\n"
        "self.set_status('idle' if ok else self.tr('failed'))\n"
        "QMessageBox.warning(self, 'Error', text)\n"
        "label.setText('<b>%1</b>')\n"
        "widget.setObjectName('not shown')\n"
        "log.warning('for the log')\n"
        "label.setText(self.tr(f'{n} runs'))\n"
        "combo.addItem('JPEG', 'jpeg')\n"
        "self._row(form, 'max_steps', 'Max steps:', spin)\n"
    )
    assert sorted(words for _, words in _bare_texts(source)) == [
        "Error", "JPEG", "Max steps:", "Quit", "Ready", "f-string", "idle", "run  ended",
    ]  # fmt: skip


@pytest.mark.parametrize("module", TRANSLATED)
def test_no_text_shown_in_a_translated_module_skips_the_translation(module: str) -> None:
    assert _bare_texts((ROOT / module).read_text(encoding="utf-8")) == []


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


@pytest.mark.skipif(sys.platform != "linux", reason="the POSIX locale variables")
@pytest.mark.parametrize(
    "env",
    [
        {"LANG": "zh_CN.UTF-8"},
        {"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"},
        {"LANG": "zh_CN.UTF-8", "LC_ALL": "en_US.UTF-8"},
        {"LANG": "en_US.UTF-8", "LANGUAGE": "zh_CN"},
        {"LANG": "zh_CN.UTF-8", "LANGUAGE": "en_US:zh_CN"},
        {"LANG": "zh_CN.UTF-8", "LANGUAGE": "zh"},
        {"LANG": "zh.UTF-8", "LANGUAGE": "zh_TW"},
        {"LANG": "C.UTF-8", "LANGUAGE": "zh_CN"},
        {"LANG": "C", "LANGUAGE": "zh_CN"},
        {"LANG": "zh_TW.UTF-8"},
        {"LANG": "de_DE.UTF-8"},
        {},
    ],
)
def test_the_command_line_reads_the_system_locale_as_qt_does(env: dict[str, str]) -> None:
    # the window takes QLocale.system().name(); the command line, without Qt, language.py
    from desktop_agent.language import system_locale

    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))
    }  # LANG, LANGUAGE
    qt = subprocess.run(
        [
            sys.executable,
            "-c",
            "from PySide6.QtCore import QLocale; print(QLocale.system().name())",
        ],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert resolve("system", system_locale(env)) == resolve("system", qt), (qt, env)


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


def test_the_settings_dialog_speaks_chinese(chinese: list[QTranslator], qtbot: Any) -> None:
    from desktop_agent.settings import Settings
    from desktop_agent.ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(None, Settings())
    qtbot.addWidget(dialog)

    assert dialog.windowTitle() == "Desktop Agent — 设置"
    tabs = [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())]
    assert tabs == ["模型(&M)", "定位(&G)", "限制(&L)", "工具(&T)", "桌面(&D)", "例程(&R)"]
    policy = dialog.policy_boxes["type_text"]
    assert [policy.itemText(i) for i in range(policy.count())] == ["允许", "询问", "拒绝"]
    assert dialog.save_button.text() == "保存"  # Qt's own translation


def test_the_first_run_dialog_and_the_history_speak_chinese(
    chinese: list[QTranslator], qtbot: Any
) -> None:
    from PySide6.QtCore import Qt

    from desktop_agent.ui.history import HistoryModel
    from desktop_agent.ui.model_servers import ModelServersDialog

    dialog = ModelServersDialog(None, platform="linux")
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "Desktop Agent — 模型服务器"
    # the ways to get a server (core/model_servers.py's texts) too
    from PySide6.QtWidgets import QLabel

    shown = [label.text() for label in dialog.none_page.findChildren(QLabel)]
    assert "Ollama —— 在本机运行，免费" in shown
    assert any(text.startswith("第一条命令安装 Ollama") for text in shown)
    horizontal = Qt.Orientation.Horizontal
    assert [HistoryModel().headerData(i, horizontal) for i in range(3)] == [
        "状态", "目标", "开始时间",
    ]  # fmt: skip


def test_the_main_window_menus_speak_chinese(chinese: list[QTranslator], qtbot: Any) -> None:
    from PySide6.QtWidgets import QMainWindow

    from desktop_agent.ui.window_actions import WindowActions

    window = QMainWindow()
    qtbot.addWidget(window)
    actions = WindowActions(window)
    assert actions.start.text() == "开始(&S)"
    assert actions.stop_all.text() == "停止所有运行(&A)"
    assert [a.text() for a in window.menuBar().actions()] == ["应用(&A)", "运行(&R)"]


def test_the_language_setting_is_read_before_the_settings_are_loaded(tmp_path: Path) -> None:
    from desktop_agent.ui.i18n import language_setting

    home = {"DESKTOP_AGENT_HOME": str(tmp_path)}
    assert language_setting(home) == "system"  # no file
    (tmp_path / "settings.toml").write_text(
        'model = "x"\nlanguage = "zh_CN"  # chosen\n[policies]\nlanguage = "en"\n'
    )
    assert language_setting(home) == "zh_CN"
    assert language_setting({**home, "DESKTOP_AGENT_LANGUAGE": "en"}) == "en"
