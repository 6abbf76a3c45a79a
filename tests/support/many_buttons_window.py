"""A Qt window with more buttons than the element list holds (a toolbar of 200) and a label
below them, deeper in the widget tree, that an AT-SPI walk breadth first never reaches.

Run as a program under the test desktop:
`python -m tests.support.many_buttons_window "label text" [buttons] [title] [button text]`
(200 buttons "T0", "T1", … and "Toolbox — many-buttons" when not given).
"""

from __future__ import annotations

import os
import sys

#: buttons in the grid, more than the inventory's 150 elements
BUTTONS = 200
COLUMNS = 20


def main() -> int:
    os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import (
        QApplication,
        QGridLayout,
        QLabel,
        QPushButton,
        QVBoxLayout,
        QWidget,
    )

    app = QApplication(sys.argv)
    window = QWidget()
    window.setWindowTitle(sys.argv[3] if len(sys.argv) > 3 else "Toolbox — many-buttons")
    layout = QVBoxLayout(window)
    grid_box = QWidget(window)
    grid = QGridLayout(grid_box)
    grid.setSpacing(1)
    for n in range(int(sys.argv[2]) if len(sys.argv) > 2 else BUTTONS):
        button = QPushButton(sys.argv[4] if len(sys.argv) > 4 else f"T{n}", grid_box)
        button.setFixedHeight(20)
        grid.addWidget(button, n // COLUMNS, n % COLUMNS)
    below = QWidget(window)
    below_layout = QVBoxLayout(below)
    label = QLabel(sys.argv[1] if len(sys.argv) > 1 else "", below)
    font = QFont()
    font.setPointSize(16)
    label.setFont(font)
    label.setStyleSheet("background: white; color: black; padding: 8px")
    below_layout.addWidget(label)
    layout.addWidget(grid_box)
    layout.addWidget(below)
    window.show()
    window.activateWindow()
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
