"""A window of the app's own kind (WM_CLASS `desktop-agent`, as app.py makes its QApplication),
with a text field, and optionally an open popup menu (as the tray menu is), for the tests
that the agent cannot reach its own controls.

Run as a program under the test desktop:
`python -m tests.support.own_window [menu]`; it prints "ready" once shown.
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    from PySide6.QtCore import QPoint, QTimer
    from PySide6.QtWidgets import QApplication, QLineEdit, QMenu, QVBoxLayout, QWidget

    # as desktop_agent/app.py: argv[0] names the WM_CLASS instance
    app = QApplication(["desktop-agent", *sys.argv[1:]])
    app.setApplicationName("desktop-agent")
    app.setDesktopFileName("desktop-agent")
    window = QWidget()
    window.setWindowTitle("Desktop Agent — Settings")
    layout = QVBoxLayout(window)
    layout.addWidget(QLineEdit(window))
    window.setGeometry(100, 100, 400, 300)
    window.show()
    window.activateWindow()
    menu = QMenu()
    menu.addAction("Stop all runs")
    menu.addAction("Settings…")

    def ready() -> None:
        if "menu" in sys.argv[1:]:
            menu.popup(QPoint(900, 600))
        print("ready", flush=True)

    QTimer.singleShot(300, ready)
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
