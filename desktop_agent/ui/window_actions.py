"""The main window's actions (menus and shortcuts), each wired to the intent it stands for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
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
            made = QAction(text, window)
            made.setShortcuts([QKeySequence(key) for key in keys])
            made.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            window.addAction(made)
            return made

        self.start = action("&Start", "Ctrl+Return", "Ctrl+Enter")
        self.pause = action("&Pause / Resume", "Ctrl+P")
        self.stop = action("St&op", "Esc", "Ctrl+.")
        self.stop_all = action("Stop &all runs", "Ctrl+Shift+.")
        self.refresh = action("&Refresh history", QKeySequence.StandardKey.Refresh)
        self.settings = action("&Settings…", "Ctrl+,")
        self.find_servers = action("&Find model servers…")
        self.quit = action("&Quit", QKeySequence.StandardKey.Quit)
        menus = window.menuBar()
        for menu, items in (
            ("&App", (self.settings, self.find_servers, None, self.quit)),
            ("&Run", (self.start, self.pause, self.stop, None, self.stop_all, self.refresh)),
        ):
            added = menus.addMenu(menu)
            for made in items:  # None: a separator
                if made is None:
                    added.addSeparator()
                else:
                    added.addAction(made)
