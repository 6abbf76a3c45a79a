"""Find model servers…: the finder dialog (servers found, or the ways to get one, and a first
task to try) and its controller, which looks on the engine and sets the model chosen."""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.core.errors import StopRequested
from desktop_agent.core.model_servers import (
    CONTEXT,
    Discovery,
    FoundModel,
    FoundServer,
    first_task_goal,
    ways_to_get_one,
)
from desktop_agent.ui.text import one_line, plain_label, plain_tooltip

if TYPE_CHECKING:
    from desktop_agent.settings import Settings
    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.main_window import MainWindow

log = logging.getLogger(__name__)


def found_words(text: str) -> str:
    """A text of core/model_servers.py (the ways to get a server, the advice) in the app's
    language."""
    return QCoreApplication.translate(CONTEXT, text)


#: said on Windows where a first run starts (issue 37 item 10), until a real machine ran the
#: checks of docs/windows-checklist.md
WINDOWS_UNTESTED_NOTE = str(
    QT_TRANSLATE_NOOP(
        "ModelServersDialog",
        "Windows: this app has not yet run on a real Windows machine. Its Windows parts were "
        "tested only against stand-ins of Windows; docs/windows-checklist.md lists what a person "
        "checks on Windows 10 or 11. Until then, watch what it does and keep the stop hotkey "
        "(Ctrl+Alt+Esc) at hand.",
    )
)
#: what "Allow once" means, said where the first question will come from
ALLOW_ONCE_NOTE = str(
    QT_TRANSLATE_NOOP(
        "ModelServersDialog",
        "Before each action with your mouse or keyboard the agent asks you first. "
        "“Allow once” lets that one action run; it asks again before the next. "
        "Esc (or Ctrl+Alt+Esc anywhere) stops the run at once.",
    )
)
_VISION_LOOK = {
    True: (str(QT_TRANSLATE_NOOP("ModelServersDialog", "✓ sees")), "#2a9d4a"),
    False: (str(QT_TRANSLATE_NOOP("ModelServersDialog", "✗ no vision")), "#c0392b"),
    None: (str(QT_TRANSLATE_NOOP("ModelServersDialog", "? unknown")), "#b7791f"),
}
Choice = tuple[FoundServer, FoundModel]
#: what the finder says when a stop gave its look up
STOPPED_LOOK = str(
    QT_TRANSLATE_NOOP("ModelServersDialog", "Stopped. Press Check again to look again.")
)


class ModelServersDialog(QDialog):
    """The model servers on this computer, or how to get one; then a first task to try.

    Pages: looking · found (servers and their models; those that see marked) · none (the
    ways to get a server, each command with a Copy button) · first task. The dialog only
    shows and asks; its controller looks, and sets the model chosen.

    Signals:
        check_again_requested: look again.
        chosen(tuple): (FoundServer, FoundModel) — use this model.
        first_task_accepted(str): put this goal in the task panel.

    Attributes:
        pages, looking_page, found_page, none_page, first_task_page: the pages.
        tree: the servers found (top-level items) and their models (children).
        use_button, check_again_button, close_button: the buttons.
        found_note, looking_label, first_task_goal, first_task_model: what the pages say.
        copy_buttons: command → its Copy button (none page).
    """

    check_again_requested = Signal()
    chosen = Signal(tuple)
    first_task_accepted = Signal(str)

    def __init__(self, parent: QWidget | None, platform: str = sys.platform) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Desktop Agent — model servers"))
        self.setObjectName("ModelServersDialog")
        self._choices: dict[int, Choice] = {}
        self.copy_buttons: dict[str, QPushButton] = {}

        intro = QLabel(
            self.tr(
                "Desktop Agent needs a model that can see screenshots. It looks for model "
                "servers on this computer only, and sends them no key."
            ),
            self,
        )
        intro.setWordWrap(True)
        self.pages = QStackedWidget(self)
        self.looking_page = self._looking_page()
        self.found_page = self._found_page()
        self.none_page = self._none_page(platform)
        self.first_task_page = self._first_task_page()
        for page in (self.looking_page, self.found_page, self.none_page, self.first_task_page):
            self.pages.addWidget(page)

        self.check_again_button = QPushButton(self.tr("Check &again"), self)
        self.use_button = QPushButton(self.tr("&Use this model"), self)
        self.use_button.setEnabled(False)
        self.use_button.setDefault(True)
        self.close_button = QPushButton(self.tr("Close"), self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.check_again_button)
        buttons.addStretch(1)
        buttons.addWidget(self.use_button)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        #: on Windows: nothing of it has run on a real Windows machine (None elsewhere)
        self.untested_note: QLabel | None = None
        if platform == "win32":
            self.untested_note = QLabel(self.tr(WINDOWS_UNTESTED_NOTE), self)
            self.untested_note.setTextFormat(Qt.TextFormat.PlainText)
            self.untested_note.setWordWrap(True)
            layout.addWidget(self.untested_note)
        layout.addWidget(self.pages, 1)
        layout.addLayout(buttons)
        self.resize(640, 460)
        self._connect_signals()

    # ── pages ────────────────────────────────────────────────────────────────

    def _looking_page(self) -> QWidget:
        page = QWidget(self)
        self.looking_label = QLabel(self.tr("Looking for model servers on this computer…"), page)
        self.looking_label.setWordWrap(True)
        layout = QVBoxLayout(page)
        layout.addWidget(self.looking_label)
        layout.addStretch(1)
        return page

    def _found_page(self) -> QWidget:
        page = QWidget(self)
        self.tree = QTreeWidget(page)
        self.tree.setObjectName("servers")
        self.tree.setHeaderLabels([self.tr("Model"), self.tr("Can see"), self.tr("Profile")])
        self.tree.setRootIsDecorated(False)
        self.tree.setItemsExpandable(False)
        self.tree.setAccessibleName(self.tr("Model servers and their models"))
        self.found_note = plain_label("", page)
        self.found_note.setWordWrap(True)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.found_note)
        return page

    def _none_page(self, platform: str) -> QWidget:
        # in a scroll area: its notes wrap to more lines than the dialog's height holds at a
        # larger font, a 200 % scale or in another language, and a squeezed label loses its
        # last line (tests/gui/test_no_clipping)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        page = QWidget(scroll)
        scroll.setWidget(page)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        heading = QLabel(
            self.tr("<b>No model server answers on this computer.</b> Ways to get one:"), page
        )
        heading.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(heading)
        for way in ways_to_get_one(platform):
            title = QLabel(found_words(way.title), page)
            title.setStyleSheet("font-weight: bold; margin-top: 6px;")
            note = plain_label(found_words(way.note), page)
            note.setWordWrap(True)
            note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(title)
            layout.addWidget(note)
            for command in way.commands:
                layout.addLayout(self._command_row(page, command))
        after = QLabel(self.tr("Then press Check again."), page)
        layout.addWidget(after)
        layout.addStretch(1)
        return scroll

    def _command_row(self, page: QWidget, command: str) -> QHBoxLayout:
        field = QLineEdit(command, page)
        field.setReadOnly(True)
        field.setAccessibleName(self.tr("command: {command}").format(command=command))
        field.setStyleSheet("font-family: monospace;")
        copy = QPushButton(self.tr("Copy"), page)
        copy.setToolTip(self.tr("Copy this command"))
        copy.clicked.connect(lambda: self.on_copy(command))
        self.copy_buttons[command] = copy
        row = QHBoxLayout()
        row.addWidget(field, 1)
        row.addWidget(copy)
        return row

    def _first_task_page(self) -> QWidget:
        page = QWidget(self)
        self.first_task_model = plain_label("", page)
        self.first_task_model.setWordWrap(True)
        heading = QLabel(
            self.tr("<b>A first task to try</b> — on a harmless app, the text editor:"), page
        )
        heading.setTextFormat(Qt.TextFormat.RichText)
        self.first_task_goal = QPlainTextEdit(page)
        self.first_task_goal.setReadOnly(True)
        self.first_task_goal.setMaximumHeight(70)
        self.first_task_goal.setAccessibleName(self.tr("First task"))
        note = QLabel(self.tr(ALLOW_ONCE_NOTE), page)
        note.setWordWrap(True)
        self.try_button = QPushButton(self.tr("Put it in the &goal box"), page)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.first_task_model)
        layout.addWidget(heading)
        layout.addWidget(self.first_task_goal)
        layout.addWidget(note)
        layout.addWidget(self.try_button)
        layout.addStretch(1)
        return page

    def _connect_signals(self) -> None:
        self.check_again_button.clicked.connect(self.check_again_requested)
        self.use_button.clicked.connect(self.on_use_clicked)
        self.close_button.clicked.connect(self.reject)
        self.tree.itemSelectionChanged.connect(self.on_selection_changed)
        self.tree.itemDoubleClicked.connect(self.on_item_double_clicked)
        self.try_button.clicked.connect(self.on_try_clicked)

    # ── what the controller tells it ─────────────────────────────────────────

    def show_looking(self, ports: tuple[int, ...] | list[int]) -> None:
        listed = ", ".join(str(port) for port in ports)
        self.looking_label.setText(
            self.tr("Looking for model servers on this computer (ports {ports})…").format(
                ports=listed
            )
        )
        self.pages.setCurrentWidget(self.looking_page)
        self.check_again_button.setEnabled(False)
        self.use_button.setVisible(False)

    def show_found(self, found: Discovery, current: tuple[str, str] | None = None) -> None:
        """The servers found (the found page), or the ways to get one (the none page).
        `current`: the (base URL, model) in use, selected when listed; else the best."""
        self.check_again_button.setEnabled(True)
        self.tree.clear()
        self._choices.clear()
        if not found.servers:
            self.use_button.setVisible(False)
            self.pages.setCurrentWidget(self.none_page)
            return
        select: QTreeWidgetItem | None = None
        best = found.best()
        for server in found.servers:
            top = QTreeWidgetItem(self.tree, [f"{server.label} — {server.base_url}"])
            top.setFirstColumnSpanned(True)
            top.setFlags(Qt.ItemFlag.ItemIsEnabled)
            bold = top.font(0)
            bold.setBold(True)
            top.setFont(0, bold)
            if not server.models:
                empty = QTreeWidgetItem(top, [self.tr("(no chat model loaded)")])
                empty.setFlags(Qt.ItemFlag.ItemIsEnabled)
            for model in server.models:
                item = self._model_item(top, server, model)
                if current == (server.base_url, model.name) or (
                    select is None and best == (server, model)
                ):
                    select = item
        self.tree.expandAll()
        for column in range(3):
            self.tree.resizeColumnToContents(column)
        self.found_note.setText(
            self.tr("✓ sees: the server says it takes images (or it is a known vision model). ")
            + (self.tr("Pick one and press Use this model.") if best else found.advice(found_words))
        )
        self.use_button.setVisible(True)
        self.pages.setCurrentWidget(self.found_page)
        if select is not None:
            self.tree.setCurrentItem(select)
        self.on_selection_changed()

    def _model_item(
        self, top: QTreeWidgetItem, server: FoundServer, model: FoundModel
    ) -> QTreeWidgetItem:
        look, color = _VISION_LOOK[model.can_see]
        text = self.tr(look)
        item = QTreeWidgetItem(top, [model.name, text, model.profile])
        item.setForeground(1, _brush(color))
        item.setToolTip(0, plain_tooltip(f"{model.name} at {server.base_url}") or "")
        item.setToolTip(1, plain_tooltip(model.vision_detail) or "")
        self._choices[id(item)] = (server, model)
        item.setData(0, Qt.ItemDataRole.UserRole, id(item))
        return item

    def show_first_task(self, server: FoundServer, model: FoundModel, goal: str) -> None:
        self.first_task_model.setText(
            self.tr("Now using {model} at {url}.").format(model=model.name, url=server.base_url)
        )
        self.first_task_goal.setPlainText(goal)
        self.use_button.setVisible(False)
        self.pages.setCurrentWidget(self.first_task_page)
        self.try_button.setFocus()

    def show_problem(self, text: str) -> None:
        """The look or the change failed: said on the page shown, one line."""
        self.check_again_button.setEnabled(True)
        self.found_note.setText(text)
        self.pages.setCurrentWidget(self.found_page)

    def selected(self) -> Choice | None:
        item = self.tree.currentItem()
        if item is None:
            return None
        return self._choices.get(item.data(0, Qt.ItemDataRole.UserRole))

    # ── slots ────────────────────────────────────────────────────────────────

    @Slot()
    def on_selection_changed(self) -> None:
        self.use_button.setEnabled(self.selected() is not None)

    @Slot(QTreeWidgetItem, int)
    def on_item_double_clicked(self, item: QTreeWidgetItem, column: int) -> None:
        self.on_use_clicked()

    @Slot()
    def on_use_clicked(self) -> None:
        choice = self.selected()
        if choice is not None:
            self.chosen.emit(choice)

    @Slot()
    def on_try_clicked(self) -> None:
        self.first_task_accepted.emit(self.first_task_goal.toPlainText())

    @Slot(str)
    def on_copy(self, command: str) -> None:
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(command)
        button = self.copy_buttons.get(command)
        if button is not None:
            button.setText(self.tr("Copied"))


def _brush(color: str) -> Any:
    from PySide6.QtGui import QBrush, QColor

    return QBrush(QColor(color))


def settings_for(settings: Settings, server: FoundServer, model: FoundModel) -> Settings:
    """`settings` using `model` at `server`: the preset of its kind when there is one, and
    vision, profile and coordinates back to auto (they were for the previous model)."""
    from desktop_agent.settings import Settings, provider_for_server

    data = {
        **settings.model_dump(),
        "provider": provider_for_server(server.kind),
        "base_url": server.base_url,
        "model": model.name,
        "vision": "auto",
        "model_profile": "auto",
        "model_coordinates": "auto",
    }
    return Settings.model_validate(data)


class ModelServersController(QObject):
    """Find model servers…: opens the finder, looks on the engine, sets the model chosen
    (saved and applied like the settings dialog's Save), then offers a first task.

    Attributes:
        dialog: the finder dialog while it is open, else None.
        apply_settings: saves and applies new settings (the SettingsController's).
    """

    def __init__(
        self,
        window: MainWindow,
        client: EngineClient,
        apply_settings: Callable[..., Awaitable[None]],
    ) -> None:
        super().__init__(window)
        self.window = window
        self.client = client
        self.apply_settings = apply_settings
        self.dialog: ModelServersDialog | None = None
        self._looking: asyncio.Task[None] | None = None

    @Slot()
    def on_find_requested(self, found: Discovery | None = None) -> None:
        """Open the finder (or bring it up) and look; `found`: a look just made, shown
        instead of looking again."""
        dialog = self.dialog
        if dialog is None:
            dialog = ModelServersDialog(self.window)
            dialog.check_again_requested.connect(self.on_check_again)
            dialog.chosen.connect(self.on_chosen)
            dialog.first_task_accepted.connect(self.on_first_task_accepted)
            dialog.finished.connect(self.on_dialog_finished)
            self.dialog = dialog
            dialog.show()
        else:
            dialog.raise_()
            dialog.activateWindow()
        if found is None:
            self.on_check_again()
        else:
            settings = self.client.host.settings
            dialog.show_found(found, (settings.base_url, settings.model))

    @Slot()
    def on_check_again(self) -> None:
        if self._looking is not None and not self._looking.done():
            return
        self._looking = self.window.spawn(self.look(self.client.host.stops))

    async def look(self, asked_at: int | None = None) -> None:
        if self.dialog is not None:
            await self._look_into(self.dialog, asked_at)

    async def _look_into(self, dialog: ModelServersDialog, asked_at: int | None) -> None:
        """Look for the servers (the Host's, held: a stop after `asked_at`, its `stops` when
        the user asked, gives the look up; only the user's Check again looks again)."""
        host = self.client.host
        settings = host.settings
        dialog.show_looking(settings.probe_ports)
        try:
            found = await self.client.ask(host.find_model_servers, asked_at=asked_at)
        except StopRequested:
            if shiboken6.isValid(dialog):
                dialog.show_problem(dialog.tr(STOPPED_LOOK))
            return
        except Exception as error:  # noqa: BLE001 - said in the dialog, never fatal
            log.exception("looking for model servers failed")
            if shiboken6.isValid(dialog):
                dialog.show_problem(
                    self.tr("Could not look: {error}").format(error=one_line(error))
                )
            return
        if shiboken6.isValid(dialog):
            dialog.show_found(found, (settings.base_url, settings.model))

    def pick(self, parent: QWidget) -> Awaitable[Choice | None]:
        """A finder over `parent` (the settings dialog) whose Use answers with the choice;
        None when it is closed. Nothing is saved here: the caller fills its form. Asked now
        (the click): a stop from now on gives its first look up."""
        return self._pick(parent, self.client.host.stops)

    async def _pick(self, parent: QWidget, asked_at: int) -> Choice | None:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Choice | None] = loop.create_future()
        dialog = ModelServersDialog(parent)
        looking: set[asyncio.Task[None]] = set()

        def look(stops: int | None = None) -> None:
            stops = self.client.host.stops if stops is None else stops
            task = loop.create_task(self._look_into(dialog, stops))
            looking.add(task)
            task.add_done_callback(looking.discard)

        def settle(choice: Choice | None) -> None:
            if not answer.done():
                answer.set_result(choice)

        dialog.chosen.connect(settle)
        dialog.finished.connect(lambda _: settle(None))
        dialog.check_again_requested.connect(look)
        dialog.open()  # window-modal over the settings dialog
        look(asked_at)
        try:
            return await answer
        finally:
            for task in looking:
                task.cancel()
            if shiboken6.isValid(dialog):
                dialog.done(QDialog.DialogCode.Accepted)
                dialog.deleteLater()

    @Slot(tuple)
    def on_chosen(self, choice: Choice) -> None:
        server, model = choice
        self.window.spawn(self.use(server, model, self.client.host.stops))

    async def use(
        self, server: FoundServer, model: FoundModel, asked_at: int | None = None
    ) -> None:
        """Save and apply the model chosen (its check stopped by a stop since `asked_at`, the
        host's `stops` at the click); then the first task to try."""
        try:
            chosen = settings_for(self.client.host.settings, server, model)
            await self.apply_settings(chosen, asked_at=asked_at)
        except Exception as error:  # noqa: BLE001 - said in the dialog
            log.exception("setting the model failed")
            if self.dialog is not None:
                self.dialog.show_problem(
                    self.tr("Could not set the model: {error}").format(error=one_line(error))
                )
            return
        goal = await asyncio.to_thread(first_task_goal, sys.platform, shutil.which)
        if self.dialog is not None:
            self.dialog.show_first_task(server, model, goal)

    @Slot(str)
    def on_first_task_accepted(self, goal: str) -> None:
        panel = self.window.panel
        panel.goal_edit.setPlainText(goal)
        panel.goal_edit.setFocus()
        if self.dialog is not None:
            self.dialog.accept()

    @Slot(int)
    def on_dialog_finished(self, _: int) -> None:
        dialog, self.dialog = self.dialog, None
        if self._looking is not None:
            self._looking.cancel()
        if dialog is not None:
            dialog.deleteLater()

    async def open_on_first_start(self) -> None:
        """On the first start (no settings file yet), open the finder when the model server
        in the settings does not answer. It waits for the window's check of the model (which
        looked for servers when it found none), so the start asks the servers once."""
        from desktop_agent.settings import settings_path

        if await asyncio.to_thread(lambda: settings_path().exists()):
            return
        check = self.window.model_check
        if check is None:
            return
        unreachable = await asyncio.shield(check)
        if unreachable is not None:
            log.info("first start, and no model server answers: opening the finder")
            self.on_find_requested(unreachable.found)

    def close(self) -> None:
        if self.dialog is not None:
            self.dialog.reject()
