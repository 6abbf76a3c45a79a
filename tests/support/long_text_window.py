"""A Qt window showing a text file in a focused, editable text view, for accessibility tests.

Run as a program under the test desktop:
`python -m tests.support.long_text_window FILE [plain|rich] [top|end]`: a QPlainTextEdit
(`plain`, the default) or a QTextEdit (`rich`, given the file as plain text), scrolled to the
file's top or, with `end`, its end. Its title is "FILE — long-text-window".
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> int:
    os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    from PySide6.QtGui import QTextCursor
    from PySide6.QtWidgets import QApplication, QPlainTextEdit, QTextEdit

    app = QApplication(sys.argv)
    path = Path(sys.argv[1])
    kind = sys.argv[2] if len(sys.argv) > 2 else "plain"
    view: QPlainTextEdit | QTextEdit = QTextEdit() if kind == "rich" else QPlainTextEdit()
    view.setPlainText(path.read_text())
    view.setWindowTitle(f"{path.name} — long-text-window")
    view.resize(640, 480)
    if len(sys.argv) > 3 and sys.argv[3] == "end":
        view.moveCursor(QTextCursor.MoveOperation.End)
        view.ensureCursorVisible()
    view.show()
    view.activateWindow()
    view.setFocus()
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
