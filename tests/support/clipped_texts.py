"""Print, as JSON, every text of the app's dialogs and panels (the main window, the approval
dialog, acting panel, model servers pages, settings tabs, task, routines, grants, history and
save-routine)
that is given less room than it needs — a label's, a button's, a check box's or radio
button's, a group box's title, a tab's — at the QT_SCALE_FACTOR and language of this process
(tests/gui/test_no_clipping).

    QT_SCALE_FACTOR=2 python tests/support/clipped_texts.py zh_CN

A process per scale: Qt reads QT_SCALE_FACTOR once, when the application starts.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import (  # noqa: E402
    QAbstractButton,
    QApplication,
    QGroupBox,
    QLabel,
    QTabBar,
    QWidget,
)


def clipped(window: QWidget) -> list[dict[str, object]]:
    """The visible texts of `window` that need more room than they have: a wrapped label's
    height for its width, else a label's width (an elided or cut line); a button's, check
    box's or radio button's size for its text (its size hint: the text, the indicator, the
    margins); a group box's title (its minimum size hint: the title's width); a tab's
    (its size hint, else Qt elides it; and inside its bar, not behind scroll buttons)."""
    found = []

    def check(kind: str, widget: QWidget, text: str, need: int, have: int) -> None:
        # one device pixel of rounding at a fractional scale is not a clipped letter
        if need > have + 1:
            name = text.replace("&", "")[:40] if kind == "tab" else widget.objectName()
            name = name or text.replace("&", "")[:40]
            found.append({"window": type(window).__name__, kind: name, "need": need, "have": have})

    for label in window.findChildren(QLabel):
        if not label.isVisibleTo(window) or not label.text() or label.pixmap().isNull() is False:
            continue
        if label.wordWrap():
            need, have = label.heightForWidth(label.width()), label.height()
        else:
            need, have = label.sizeHint().width(), label.width()
        check("label", label, label.text(), need, have)
    for button in window.findChildren(QAbstractButton):
        if not button.isVisibleTo(window) or not button.text():
            continue
        hint = button.sizeHint()
        check("button", button, button.text(), hint.width(), button.width())
        check("button", button, button.text(), hint.height(), button.height())
    for box in window.findChildren(QGroupBox):
        if box.isVisibleTo(window) and box.title():
            check("group", box, box.title(), box.minimumSizeHint().width(), box.width())
    for bar in window.findChildren(QTabBar):
        if not bar.isVisibleTo(window):
            continue
        for index in range(bar.count()):
            text = bar.tabText(index)
            need, have = bar.tabSizeHint(index).width(), bar.tabRect(index).width()
            check("tab", bar, text, need, have)  # elided
            # out of the bar's sight (behind its scroll buttons)
            check("tab", bar, text, bar.tabRect(index).right() + 1, bar.width())
    return found


def windows(data_dir: Path) -> list[tuple[str, Callable[[], QWidget]]]:
    from desktop_agent.core.models import ApprovalRequest, ElementRef, Risk
    from desktop_agent.ui.acting_panel import ActingPanel
    from desktop_agent.ui.approval import ApprovalDialog
    from desktop_agent.ui.model_servers import ModelServersDialog

    field = ElementRef("focus", "edit", "", "Untitled — L3afpad", (0, 40, 800, 500))
    request = ApprovalRequest(
        "a1", "r1", 1, "type_text", {"text": "Hello from Desktop Agent!"},
        "Type the greeting into the editor", Risk.INPUT, True, 30.0, element=field,
        caution="a line typed into a terminal runs as a command",
    )  # fmt: skip

    def approval() -> QWidget:
        return ApprovalDialog(None, request, data_dir, explain=True)

    def acting() -> QWidget:
        panel = ActingPanel()
        panel.show_for("Write a note in the editor and save it as notes.txt")
        return panel

    def servers(page: str) -> Callable[[], QWidget]:
        def make() -> QWidget:
            dialog = ModelServersDialog(None, platform="linux")
            dialog.pages.setCurrentWidget(getattr(dialog, page))
            return dialog

        return make

    def settings(tab: int) -> Callable[[], QWidget]:
        def make() -> QWidget:
            from desktop_agent.settings import Settings
            from desktop_agent.ui.settings_dialog import SettingsDialog

            dialog = SettingsDialog(None, Settings())
            dialog.tabs.setCurrentIndex(tab)
            return dialog

        return make

    def plain(module: str, name: str) -> Callable[[], QWidget]:
        def make() -> QWidget:
            import importlib

            made: QWidget = getattr(importlib.import_module(module), name)()
            return made

        return make

    def save_routine() -> QWidget:
        from desktop_agent.ui.save_routine import SaveRoutineDialog

        return SaveRoutineDialog(None, "r1234567890", [])

    return [
        ("main", plain("desktop_agent.ui.main_window", "MainWindow")),
        *((f"settings-{tab}", settings(tab)) for tab in range(6)),
        ("task", plain("desktop_agent.ui.task_panel", "TaskPanel")),
        ("routines", plain("desktop_agent.ui.routines", "RoutinesPanel")),
        ("grants", plain("desktop_agent.ui.routines", "RoutineGrantsPage")),
        ("history", plain("desktop_agent.ui.history", "HistoryPanel")),
        ("save-routine", save_routine),
        ("approval", approval),
        ("acting", acting),
        ("servers-looking", servers("looking_page")),
        ("servers-none", servers("none_page")),
        ("servers-first-task", servers("first_task_page")),
    ]


def main() -> None:
    language = sys.argv[1] if len(sys.argv) > 1 else "en"
    app = QApplication([])
    from desktop_agent.ui.i18n import install

    install(app, language)
    found: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for _, make in windows(Path(tmp)):
            window = make()
            window.show()
            app.processEvents()
            found += clipped(window)
            window.close()
            window.deleteLater()
            app.processEvents()
    print(json.dumps(found, ensure_ascii=False))


if __name__ == "__main__":
    main()
