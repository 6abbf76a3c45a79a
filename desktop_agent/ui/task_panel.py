"""The task panel: the goal, the model and whether it can see, limits, allowed tools, controls."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.ui.run_on_show import PanelState
from desktop_agent.ui.text import plain_label, plain_tooltip

if TYPE_CHECKING:
    # pydantic (under core.tools) is not on the way to the window's first paint
    from desktop_agent.core.tools import ToolSpec


STATES = tuple(PanelState)


class GoalEdit(QPlainTextEdit):
    """A few lines of goal text; Ctrl+Return is left to the window's Start shortcut."""

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and (
            event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            event.ignore()
            return
        super().keyPressEvent(event)


class TaskPanel(QWidget):
    """What to do and with which limits, and the run's controls.

    The panel only asks (signals); the window decides and tells it the state back.

    Signals:
        start_requested(str, int, tuple): goal, max steps, allowed tool names.
        pause_requested(bool): True to pause the run, False to resume it.
        stop_requested: stop the run on show.
        stop_all_requested: stop every run (this app and any `desktop-agent run`).
        find_servers_requested: "Find one…" on the model line (no server answers).
        settings_requested: "Settings…" on the model line.

    Attributes:
        state: one of STATES.
        goal_edit, max_steps, tools_list: the inputs.
        start_button, pause_button, stop_button, stop_all_button: the controls.
        model_label, vision_label, error_label: the model in use, whether it can see,
            and the last refusal or error (one line).
    """

    start_requested = Signal(str, int, tuple)
    pause_requested = Signal(bool)
    stop_requested = Signal()
    stop_all_requested = Signal()
    find_servers_requested = Signal()
    settings_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("taskPanel")
        self.state = PanelState.IDLE
        self._ready = False

        self.goal_edit = GoalEdit(self)
        self.goal_edit.setObjectName("goal")
        self.goal_edit.setAccessibleName(self.tr("Goal"))
        self.goal_edit.setPlaceholderText(
            self.tr(
                "What should be done? e.g. Open the text editor, write “hello”, "
                "and save it as ~/hello.txt"
            )
        )
        self.goal_edit.setTabChangesFocus(True)
        self.goal_edit.setFixedHeight(self.goal_edit.fontMetrics().lineSpacing() * 4 + 12)

        self.model_label = QLabel(self.tr("Model: …"), self)
        self.model_label.setObjectName("model")
        self.model_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.vision_label = QLabel("", self)
        self.vision_label.setObjectName("vision")
        self.vision_label.setWordWrap(True)
        self.vision_label.setTextFormat(Qt.TextFormat.PlainText)

        self.max_steps = QSpinBox(self)
        self.max_steps.setObjectName("maxSteps")
        self.max_steps.setRange(1, 500)
        self.max_steps.setValue(20)
        self.max_steps.setAccessibleName(self.tr("Maximum number of turns"))

        self.tools_list = QListWidget(self)
        self.tools_list.setObjectName("tools")
        self.tools_list.setAccessibleName(self.tr("Allowed tools"))
        self.tools_list.setMaximumHeight(150)

        self.start_button = QPushButton(self.tr("&Start"), self)
        self.start_button.setToolTip(self.tr("Start the task (Ctrl+Return)"))
        self.pause_button = QPushButton(self.tr("&Pause"), self)
        self.pause_button.setToolTip(self.tr("Pause or resume the run (Ctrl+P)"))
        self.stop_button = QPushButton(self.tr("St&op"), self)
        self.stop_button.setToolTip(self.tr("Stop the run (Esc or Ctrl+.)"))
        self.stop_all_button = QPushButton(self.tr("Stop &all"), self)
        self.stop_all_button.setToolTip(
            self.tr("Stop every run of this app and of any `desktop-agent run` on this data dir")
        )

        self.error_label = plain_label("", self)
        self.error_label.setObjectName("error")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #c0392b;")
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()

        form = QFormLayout()
        form.addRow(self.tr("Max turns:"), self.max_steps)
        form.addRow(self.tr("Allowed tools:"), self.tools_list)
        buttons = QHBoxLayout()
        for button in (self.start_button, self.pause_button, self.stop_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_all_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.goal_edit)
        layout.addWidget(self.model_label)
        layout.addWidget(self.vision_label)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.error_label)
        self._connect_signals()
        self.set_state("idle")

    def _connect_signals(self) -> None:
        self.start_button.clicked.connect(self.on_start_clicked)
        self.pause_button.clicked.connect(self.on_pause_clicked)
        self.stop_button.clicked.connect(self.on_stop_clicked)
        self.stop_all_button.clicked.connect(self.on_stop_all_clicked)
        self.vision_label.linkActivated.connect(self.on_model_link)

    # ── what the window tells the panel ──────────────────────────────────────

    def set_ready(self, ready: bool) -> None:
        """Whether runs can start at all (the history store is open)."""
        self._ready = ready
        self.set_state(self.state)

    def set_state(self, state: PanelState | str) -> None:
        if state not in STATES:
            raise ValueError(f"unknown panel state {state!r}; the states are: {', '.join(STATES)}")
        self.state = state = PanelState(state)
        idle = state is PanelState.IDLE
        active = state in (PanelState.RUNNING, PanelState.PAUSED)
        self.start_button.setEnabled(self._ready and idle)
        self.pause_button.setEnabled(active)
        self.pause_button.setText(
            self.tr("&Resume") if state is PanelState.PAUSED else self.tr("&Pause")
        )
        self.stop_button.setEnabled(active or state is PanelState.STARTING)
        self.goal_edit.setReadOnly(not idle)
        self.max_steps.setEnabled(idle)
        self.tools_list.setEnabled(idle)

    def set_tools(self, specs: Iterable[ToolSpec], allowed: Iterable[str] | None = None) -> None:
        """The tools the model may be offered; the `allowed` ones (default: all) are checked."""
        chosen = None if allowed is None else set(allowed)
        self.tools_list.clear()
        for spec in specs:
            if not spec.offered:
                continue
            item = QListWidgetItem(f"{spec.name}  ({spec.risk.value})", self.tools_list)
            item.setData(Qt.ItemDataRole.UserRole, spec.name)
            item.setToolTip(plain_tooltip(spec.description) or "")
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = chosen is None or spec.name in chosen
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)

    def allowed_tools(self) -> tuple[str, ...]:
        return tuple(
            str(item.data(Qt.ItemDataRole.UserRole))
            for item in (self.tools_list.item(row) for row in range(self.tools_list.count()))
            if item.checkState() == Qt.CheckState.Checked
        )

    def set_model(self, model: str, base_url: str) -> None:
        self.model_label.setText(
            self.tr("Model: {model} at {url}").format(
                model=f"<b>{_html(model)}</b>", url=_html(base_url)
            )
        )
        self.model_label.setToolTip(plain_tooltip(f"{model} at {base_url}") or "")

    def set_vision(self, state: str, reason: str = "") -> None:
        """checking | yes | no | unknown, with the reason shown when the model cannot see.

        A verdict only ever comes from a server that answered; for one that does not, see
        `set_server_absent`.
        """
        self.vision_label.setTextFormat(Qt.TextFormat.PlainText)  # the reason is a server's
        self.vision_label.setToolTip(plain_tooltip(reason) or "")
        texts = {
            "checking": (self.tr("Checking whether the model can see…"), "#7f8c8d"),
            "yes": (
                self.tr("✓ can see screenshots") + (f" ({reason})" if reason else ""),
                "#2a9d4a",
            ),
            "no": (
                self.tr("✗ cannot see screenshots: ") + (reason or self.tr("no vision")),
                "#c0392b",
            ),
            "unknown": (
                self.tr("? vision not checked") + (f": {reason}" if reason else ""),
                "#b7791f",
            ),
        }
        text, color = texts.get(state, texts["unknown"])
        self.vision_label.setText(text)
        self.vision_label.setStyleSheet(f"color: {color};")
        self.vision_label.setProperty("vision", state)

    def set_server_absent(self, address: str, why: str) -> None:
        """No model server answers at `address`: one line with the ways forward, never a
        verdict (the full reason, with what does answer here, in the tooltip)."""
        self._way_forward(
            "absent", self.tr("No model server at {address}").format(address=address), why
        )

    def set_model_missing(self, model: str, address: str, why: str) -> None:
        """The server answers but does not have `model`: the ways forward, never a verdict."""
        self._way_forward(
            "missing",
            self.tr("No model {model} at {address}").format(model=repr(model), address=address),
            why,
        )

    def _way_forward(self, state: str, headline: str, why: str) -> None:
        self.vision_label.setTextFormat(Qt.TextFormat.RichText)
        self.vision_label.setText(
            f'{_html(headline)} — <a href="find">{_html(self.tr("Find one…"))}</a> · '
            f'<a href="settings">{_html(self.tr("Settings…"))}</a>'
        )
        self.vision_label.setStyleSheet("color: #b7791f;")
        self.vision_label.setToolTip(plain_tooltip(why) or "")
        self.vision_label.setProperty("vision", state)

    @Slot(str)
    def on_model_link(self, link: str) -> None:
        if link == "find":
            self.find_servers_requested.emit()
        elif link == "settings":
            self.settings_requested.emit()

    def show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))

    def goal(self) -> str:
        return self.goal_edit.toPlainText().strip()

    # ── slots ────────────────────────────────────────────────────────────────

    @Slot()
    def on_start_clicked(self) -> None:
        if not self.start_button.isEnabled():
            return
        goal = self.goal()
        if not goal:
            self.show_error(self.tr("Type a goal first."))
            self.goal_edit.setFocus()
            return
        tools = self.allowed_tools()
        if not tools:
            self.show_error(self.tr("Allow at least one tool."))
            return
        self.show_error("")
        self.start_requested.emit(goal, self.max_steps.value(), tools)

    @Slot()
    def on_pause_clicked(self) -> None:
        if self.pause_button.isEnabled():
            self.pause_requested.emit(self.state is not PanelState.PAUSED)

    @Slot()
    def on_stop_clicked(self) -> None:
        if self.stop_button.isEnabled():
            self.stop_requested.emit()

    @Slot()
    def on_stop_all_clicked(self) -> None:
        self.stop_all_requested.emit()


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
