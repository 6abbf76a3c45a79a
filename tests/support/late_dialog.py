"""A Qt window whose one big button is "Save draft", and a dialog with a big "Delete" button
that comes up over it when a file appears: a modal that pops up while the agent grounds a
click (tests/desktop/test_gate_on_desktop.py).

Run as a program under the test desktop:
`python -m tests.support.late_dialog <trigger file> <log file>`; each button pressed appends
its name to the log file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> int:
    os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import (
        QApplication,
        QDialog,
        QPushButton,
        QSizePolicy,
        QVBoxLayout,
        QWidget,
    )

    trigger, log = Path(sys.argv[1]), Path(sys.argv[2])

    def pressed(name: str) -> None:
        with log.open("a", encoding="utf-8") as out:
            out.write(name + "\n")

    app = QApplication(sys.argv)
    window = QWidget()
    window.setWindowTitle("Drafts — late-dialog")
    window.resize(600, 400)
    save = QPushButton("Save draft", window)
    save.clicked.connect(lambda: pressed("Save draft"))
    # each button fills its window: the point is on it wherever the window manager puts it
    grow = QSizePolicy.Policy.Expanding
    save.setSizePolicy(grow, grow)
    QVBoxLayout(window).addWidget(save)
    # the dialog covers the middle of the window, where the "Save draft" button's centre is
    dialog = QDialog(window)
    dialog.setWindowTitle("Clean up")
    dialog.setModal(True)
    dialog.resize(400, 300)
    delete = QPushButton("Delete", dialog)
    delete.clicked.connect(lambda: pressed("Delete"))
    delete.setSizePolicy(grow, grow)
    QVBoxLayout(dialog).addWidget(delete)

    def look() -> None:
        if trigger.exists() and not dialog.isVisible():
            frame = window.frameGeometry()
            dialog.move(frame.center().x() - 200, frame.center().y() - 150)
            dialog.show()

    poll = QTimer()
    poll.timeout.connect(look)
    poll.start(30)
    window.show()
    window.activateWindow()
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
