"""A Qt window with a user name field and a focused password field, for accessibility tests.

Run as a program under the test desktop:
`python -m tests.support.password_window [password|user] [window title]`.
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    from PySide6.QtWidgets import QApplication, QLineEdit, QVBoxLayout, QWidget

    app = QApplication(sys.argv)
    window = QWidget()
    window.setWindowTitle(sys.argv[2] if len(sys.argv) > 2 else "Log in — password-window")
    layout = QVBoxLayout(window)
    user = QLineEdit(window)
    user.setAccessibleName("User")
    password = QLineEdit(window)
    password.setAccessibleName("Password")
    password.setEchoMode(QLineEdit.EchoMode.Password)
    layout.addWidget(user)
    layout.addWidget(password)
    window.show()
    window.activateWindow()
    focus = sys.argv[1] if len(sys.argv) > 1 else "password"
    (password if focus == "password" else user).setFocus()
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
