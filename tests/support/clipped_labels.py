"""Print, as JSON, every label of the app's dialogs and panels (the approval dialog, acting
panel, model servers pages, settings tabs, task, routines, grants, history and save-routine)
that is given less room than its text needs, at the QT_SCALE_FACTOR and language of this
process (tests/gui/test_no_clipping).

    QT_SCALE_FACTOR=2 python tests/support/clipped_labels.py zh_CN

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

from PySide6.QtWidgets import QApplication, QLabel, QWidget  # noqa: E402


def clipped(window: QWidget) -> list[dict[str, object]]:
    """The visible labels of `window` whose text needs more room than they have: a wrapped
    label's height for its width, else its width (an elided or cut line)."""
    found = []
    for label in window.findChildren(QLabel):
        if not label.isVisibleTo(window) or not label.text() or label.pixmap().isNull() is False:
            continue
        if label.wordWrap():
            need, have = label.heightForWidth(label.width()), label.height()
        else:
            need, have = label.sizeHint().width(), label.width()
        # one device pixel of rounding at a fractional scale is not a clipped letter
        if need > have + 1:
            name = label.objectName() or label.text()[:40]
            found.append(
                {"window": type(window).__name__, "label": name, "need": need, "have": have}
            )
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
