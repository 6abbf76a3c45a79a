"""The Routines list (Run, with a form for its parameters) and the settings' routine grants."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.ui.text import one_line, plain_label, plain_tooltip, shorten

if TYPE_CHECKING:
    from desktop_agent.core.routine import Routine

NAME_ROLE = Qt.ItemDataRole.UserRole + 1


class RoutinesPanel(QWidget):
    """The saved routines; the selected one's parameters as a form; Run.

    Signals:
        run_requested(str, dict): the routine's name and its parameter values.

    Attributes:
        list: one row per routine (name, steps, schedule).
        form: the selected routine's parameters, one line edit each (secrets hidden).
        run_button: runs the selected routine with the form's values.
        note: the last problem (one line), or what to do.
    """

    run_requested = Signal(str, dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("routines")
        self._routines: dict[str, Routine] = {}
        self.fields: dict[str, QLineEdit] = {}
        title = QLabel(self.tr("<b>Routines</b>"), self)
        self.list = QListWidget(self)
        self.list.setObjectName("routineList")
        self.list.setAccessibleName(self.tr("Saved routines"))
        self.form_box = QGroupBox(self.tr("Parameters"), self)
        self.form = QFormLayout(self.form_box)
        self.run_button = QPushButton(self.tr("&Run routine"), self)
        self.run_button.setEnabled(False)
        self.run_button.setToolTip(self.tr("Run the selected routine: no model is asked while the "
                                   "screen matches"))  # fmt: skip
        self.note = plain_label(
            self.tr("Save a completed run as a routine: right-click it in the history.")
        )
        self.note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.form_box)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.run_button)
        layout.addLayout(row)
        layout.addWidget(self.note)
        self.form_box.hide()
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.list.currentItemChanged.connect(self.on_current_changed)
        self.run_button.clicked.connect(self.on_run_clicked)

    def set_routines(self, routines: Sequence[Routine]) -> None:
        chosen = self.selected_name()
        self._routines = {r.name: r for r in routines}
        self.list.clear()
        for routine in routines:
            when = ""
            if routine.schedule is not None:
                days = self.tr("weekdays") if routine.schedule.weekdays else self.tr("daily")
                when = f" · {days} {routine.schedule.at}"
            steps = self.tr("{name} — {count} steps").format(
                name=routine.name, count=len(routine.steps)
            )
            item = QListWidgetItem(steps + when)
            item.setData(NAME_ROLE, routine.name)
            item.setToolTip(plain_tooltip(shorten(one_line(routine.goal), 200)) or "")
            self.list.addItem(item)
            if routine.name == chosen:
                self.list.setCurrentItem(item)
        if self.list.currentItem() is None and self.list.count():
            self.list.setCurrentRow(0)
        self.on_current_changed(self.list.currentItem(), None)

    def selected_name(self) -> str | None:
        item = self.list.currentItem()
        name = item.data(NAME_ROLE) if item is not None else None
        return name if isinstance(name, str) else None

    def on_current_changed(self, current: QListWidgetItem | None, _: object) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        routine = self._routines.get(self.selected_name() or "")
        self.run_button.setEnabled(routine is not None)
        self.form_box.setVisible(routine is not None and bool(routine.params))
        if routine is None:
            return
        for param in routine.params:
            edit = QLineEdit(self.form_box)
            edit.setObjectName(f"param-{param.name}")
            edit.setAccessibleName(self.tr("parameter {name}").format(name=param.name))
            if param.secret:
                edit.setEchoMode(QLineEdit.EchoMode.Password)
                edit.setPlaceholderText(
                    self.tr("a password field's text: asked each run, never saved")
                )
            else:
                edit.setText(param.default or "")
            self.fields[param.name] = edit
            self.form.addRow(f"{param.name}:", edit)

    def values(self) -> dict[str, str]:
        return {name: edit.text() for name, edit in self.fields.items()}

    @Slot()
    def on_run_clicked(self) -> None:
        name = self.selected_name()
        routine = self._routines.get(name or "")
        if routine is None:
            return
        values = self.values()
        missing = [p.name for p in routine.params if p.secret and not values.get(p.name)]
        if missing:
            self.show_note(
                self.tr("Type {names} first: it is never saved.").format(names=", ".join(missing))
            )
            return
        self.run_requested.emit(routine.name, values)

    def clear_secrets(self) -> None:
        """A secret typed for a run is forgotten once the run started."""
        routine = self._routines.get(self.selected_name() or "")
        for param in routine.params if routine else ():
            if param.secret and param.name in self.fields:
                self.fields[param.name].clear()

    def show_note(self, text: str) -> None:
        self.note.setText(one_line(text))


class RoutineGrantsPage(QWidget):
    """Settings' Routines tab: the tools each routine may use without asking; Revoke.

    Signals:
        revoke_requested(str): the routine whose grants the user revoked.

    Attributes:
        list: one row per routine that has grants.
        revoke_button: revokes the selected routine's grants.
    """

    revoke_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        intro = QLabel(
            self.tr(
                "Tools a routine may use without asking in its own runs (given when it was "
                "saved). A stop-all revokes them for the run going on; calls that ask every "
                "time still ask."
            ),
            self,
        )
        intro.setWordWrap(True)
        self.list = QListWidget(self)
        self.list.setObjectName("routineGrants")
        self.list.setAccessibleName(self.tr("Routine grants"))
        self.revoke_button = QPushButton(self.tr("&Revoke the selected routine's grants"), self)
        self.revoke_button.setEnabled(False)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.revoke_button)
        self.list.currentItemChanged.connect(
            lambda current, _: self.revoke_button.setEnabled(current is not None)
        )
        self.revoke_button.clicked.connect(self.on_revoke_clicked)

    def set_routines(self, routines: Sequence[Routine]) -> None:
        self.list.clear()
        for routine in routines:
            if routine.grants:
                item = QListWidgetItem(f"{routine.name}: {', '.join(routine.grants)}")
                item.setData(NAME_ROLE, routine.name)
                self.list.addItem(item)
        if not self.list.count():
            self.list.addItem(QListWidgetItem(self.tr("No routine has grants.")))
            self.list.item(0).setFlags(Qt.ItemFlag.NoItemFlags)

    @Slot()
    def on_revoke_clicked(self) -> None:
        item = self.list.currentItem()
        name = item.data(NAME_ROLE) if item is not None else None
        if isinstance(name, str):
            self.revoke_requested.emit(name)
