"""The Save as routine… dialog: a completed run's name, parameters and grants as a routine.

Apart from the Routines list (ui/routines.py): the window's first frame shows the list, and
the dialog's classes (QDialog, QDialogButtonBox, QCheckBox) are made when it is first opened.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.core.statuses import StepKind, StepStatus
from desktop_agent.ui.text import one_line, plain_button_text, plain_label, shorten

if TYPE_CHECKING:
    from desktop_agent.core.models import StepView


class SaveRoutineDialog(QDialog):
    """Save a completed run as a routine: its name, which typed texts become parameters (the
    run's text is the default; a password field's text is always one, never saved), and the
    tools the routine may use without asking.

    Attributes:
        name_edit: the routine's name.
        param_boxes: per typed turn, (checkbox "make it a parameter", its name).
        grant_boxes: per tool the routine uses, "allow without asking".
        error: why Save is off (one line).
    """

    def __init__(self, parent: QWidget | None, run_id: str, steps: Sequence[StepView]) -> None:
        super().__init__(parent)
        self.setObjectName("SaveRoutineDialog")
        self.setWindowTitle(self.tr("Save as routine"))
        self.run_id = run_id
        actions = [s for s in steps if s.kind is StepKind.ACTION and s.status is StepStatus.OK]
        self.name_edit = QLineEdit(self)
        self.name_edit.setPlaceholderText(self.tr("e.g. export-report"))
        self.name_edit.setAccessibleName(self.tr("routine name"))
        form = QFormLayout()
        form.addRow(self.tr("&Name:"), self.name_edit)
        self.param_boxes: dict[int, tuple[QCheckBox, QLineEdit]] = {}
        # the routines' rules come with the dialog: not on the way to the window's first paint
        from desktop_agent.core.call_risk import TEXT_TOOLS
        from desktop_agent.core.routine import REDACTED

        typed = [s for s in actions if s.tool in TEXT_TOOLS]
        for number, step in enumerate(typed, start=1):
            text = str(step.args.get(TEXT_TOOLS[step.tool or ""], ""))
            secret = text == REDACTED
            password = step.element and step.element.password
            hidden = self.tr("a password field") if password else self.tr("not stored")
            asked = self.tr("{hidden} (asked at each run, never saved)").format(hidden=hidden)
            shown = shorten(one_line(asked if secret else text), 60)
            turn = self.tr("turn {index}: {text}").format(index=step.index, text=shown)
            box = QCheckBox(plain_button_text(turn), self)
            box.setChecked(True)
            box.setEnabled(not secret)
            name = QLineEdit(f"text{number}", self)
            name.setAccessibleName(
                self.tr("parameter name of turn {index}").format(index=step.index)
            )
            self.param_boxes[step.index] = (box, name)
            form.addRow(box, name)
        self.grant_boxes: dict[str, QCheckBox] = {}
        for tool in sorted({s.tool for s in actions if s.tool and s.tool != "wait"}):
            grant = QCheckBox(
                self.tr("allow {tool} without asking in this routine's runs").format(tool=tool),
                self,
            )
            self.grant_boxes[tool] = grant
            form.addRow(grant)
        self.error = plain_label("", self)
        self.error.setStyleSheet("color: #b00020")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        layout = QVBoxLayout(self)
        intro = self.tr(
            "The action steps of run {run} that ran ok ({count}) are replayed, each checked."
        ).format(run=run_id[:8], count=len(actions))
        layout.addWidget(QLabel(intro, self))
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.name_edit.textChanged.connect(self.validate)
        for _, name in self.param_boxes.values():
            name.textChanged.connect(self.validate)
        self.validate()

    def params(self) -> dict[str, list[int]]:
        chosen: dict[str, list[int]] = {}
        for turn, (box, name) in self.param_boxes.items():
            if box.isChecked():
                chosen.setdefault(name.text().strip(), []).append(turn)
        return chosen

    def grants(self) -> list[str]:
        return [tool for tool, box in self.grant_boxes.items() if box.isChecked()]

    def validate(self) -> bool:
        from desktop_agent.core.routine import NAME_PATTERN, PARAM_PATTERN

        name = self.name_edit.text().strip()
        problem = ""
        if not NAME_PATTERN.fullmatch(name):
            problem = self.tr("Name: 1-64 letters, digits, '.', '_' or '-'.")
        for param in self.params():
            if not PARAM_PATTERN.fullmatch(param):
                problem = self.tr("Parameter name {name}: letters, digits, '_' or '-'.").format(
                    name=repr(param)
                )
        self.error.setText(problem)
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        if save is not None:
            save.setEnabled(not problem)
        return not problem
