"""The main window's actions (menus and shortcuts), each wired to the intent it stands for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtGui import QAction, QKeySequence

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow


class WindowActions:
    """The window's menu bar (App, Run) and its shortcuts; a shortcut acts while the window
    has the focus, as the button it stands for (Start, Pause, Stop, Stop all). The window
    connects them (`MainWindow._connect_signals`).

    Attributes:
        start, pause, stop, stop_all, refresh, settings, find_servers, quit: the actions.
    """

    def __init__(self, window: QMainWindow) -> None:
        def action(text: str, *keys: QKeySequence | QKeySequence.StandardKey | str) -> QAction:
            # the context is the window's: the actions are its menus' and shortcuts'
            made = QAction(QCoreApplication.translate("MainWindow", text), window)
            made.setShortcuts([QKeySequence(key) for key in keys])
            made.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            window.addAction(made)
            return made

        self.start = action(
            str(QT_TRANSLATE_NOOP("MainWindow", "&Start")), "Ctrl+Return", "Ctrl+Enter"
        )
        self.pause = action(str(QT_TRANSLATE_NOOP("MainWindow", "&Pause / Resume")), "Ctrl+P")
        self.stop = action(str(QT_TRANSLATE_NOOP("MainWindow", "St&op")), "Esc", "Ctrl+.")
        self.stop_all = action(
            str(QT_TRANSLATE_NOOP("MainWindow", "Stop &all runs")), "Ctrl+Shift+."
        )
        self.refresh = action(
            str(QT_TRANSLATE_NOOP("MainWindow", "&Refresh history")),
            QKeySequence.StandardKey.Refresh,
        )
        self.settings = action(str(QT_TRANSLATE_NOOP("MainWindow", "&Settings…")), "Ctrl+,")
        self.find_servers = action(str(QT_TRANSLATE_NOOP("MainWindow", "&Find model servers…")))
        self.quit = action(
            str(QT_TRANSLATE_NOOP("MainWindow", "&Quit")), QKeySequence.StandardKey.Quit
        )
        menus = window.menuBar()
        for menu, items in (
            (
                QCoreApplication.translate("MainWindow", "&App"),
                (self.settings, self.find_servers, None, self.quit),
            ),
            (
                QCoreApplication.translate("MainWindow", "&Run"),
                (self.start, self.pause, self.stop, None, self.stop_all, self.refresh),
            ),
        ):
            added = menus.addMenu(menu)
            for made in items:  # None: a separator
                if made is None:
                    added.addSeparator()
                else:
                    added.addAction(made)
