"""The detail of the selected step: its full screenshot with the target marked, reason, result."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QItemSelection, Qt, Slot
from PySide6.QtGui import QEnterEvent, QImage
from PySide6.QtWidgets import (
    QFormLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.core.statuses import StepStatus
from desktop_agent.core.text import printable
from desktop_agent.ui.frames import OncePerFrame
from desktop_agent.ui.text import in_words, plain_label
from desktop_agent.ui.timeline import ImageLoader, TimelineModel, TimelineView, format_duration
from desktop_agent.ui.widgets import Grounded, ScreenshotView

if TYPE_CHECKING:
    from types import ModuleType

    from desktop_agent.core.models import StepView


@cache
def _json() -> ModuleType:
    """The json module, imported when the first step's arguments are shown (by then the app
    has loaded it on its engine's side), not by the window's first paint; the cache spares
    each step the import statement's lookup through PySide6's import hook."""
    import json

    return json


class StepDetail(QWidget):
    """Shows one step: the screenshot it was decided or done on, with the clicked point or
    element marked, the model's reason, the arguments, and the result or the error.

    The screenshot is read by the ImageLoader off the GUI thread; until it arrives the
    view says so.

    Attributes:
        step: the step on show, or None.
        screenshot: the step's screenshot view (image + target).
        labels: the text fields by name: title, action, status, args, reason, result, timing.
    """

    def __init__(self, loader: ImageLoader, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stepDetail")
        self.step: StepView | None = None
        self._loader = loader
        self._screenshot_key: str | None = None
        self._target: tuple[int, int] | None = None
        self._grounded: Grounded | None = None

        self.screenshot = ScreenshotView(self)
        self.screenshot.placeholder = self.tr("Select a step to see its screenshot")
        self.labels: dict[str, QLabel] = {}
        form_host = _Fields(self)
        form = QFormLayout(form_host)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for name, title in (
            ("title", self.tr("Step")),
            ("action", self.tr("Action")),
            ("status", self.tr("Status")),
            ("args", self.tr("Arguments")),
            ("reason", self.tr("Model's reason")),
            ("result", self.tr("Result")),
            ("timing", self.tr("Timing")),
        ):
            # the model's reason and arguments, and results quoting the screen: never markup
            label = plain_label("", form_host)
            label.setObjectName(f"detail_{name}")
            label.setWordWrap(True)
            label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            self.labels[name] = label
            form.addRow(self.tr("{title}:").format(title=title), label)
        form_host.labels = list(self.labels.values())
        form_host.set_selectable(False)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(form_host)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.screenshot)
        splitter.addWidget(scroll)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([560, 380])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._loader.loaded.connect(self.on_image_loaded)

    def follow(self, timeline: TimelineView, model: TimelineModel) -> None:
        """Show the step selected in `timeline`, and it again when its row changes. Laid out
        and painted at most once per frame: a live run with its newest row selected changes
        it with every event."""
        self._timeline, self._timeline_model = timeline, model
        self._selected_due = OncePerFrame(self.show_selected, parent=self)
        timeline.selectionModel().selectionChanged.connect(self.on_selection_changed)
        model.dataChanged.connect(self.on_timeline_data_changed)

    @Slot(QItemSelection, QItemSelection)
    def on_selection_changed(self, selected: QItemSelection, _: QItemSelection) -> None:
        self._selected_due.request()

    def on_timeline_data_changed(self, top_left: Any, bottom_right: Any, *_: Any) -> None:
        rows = self._timeline.selectionModel().selectedRows()
        if (
            rows
            and top_left.row() <= rows[0].row() <= bottom_right.row()
            and top_left.column() != TimelineModel.SCREEN
        ):
            self._selected_due.request()

    def show_selected(self) -> None:
        rows = self._timeline.selectionModel().selectedRows()
        model = self._timeline_model
        step = model.step_at(rows[0].row()) if rows else None
        if step is None:
            self.show_step(None)
            return
        first, crop = model.grounding_of(step)
        self.show_step(
            step,
            screenshot=model.screenshot_of(step),
            target=model.target_of(step),
            reason=model.reason_of(step),
            grounded=Grounded(first, crop) if first or crop else None,
        )

    def show_step(
        self,
        step: StepView | None,
        *,
        screenshot: str | None = None,
        target: tuple[int, int] | None = None,
        reason: str | None = None,
        grounded: Grounded | None = None,
    ) -> None:
        """Show `step` (None clears); the screenshot/target/reason of its turn come from the
        timeline, since only the observe row holds the screenshot and the decide row the reason;
        `grounded`: the turn's grounding (its first point and crop), drawn with the target.
        """
        self.step = step
        if step is None:
            self._screenshot_key = None
            self.screenshot.placeholder = self.tr("Select a step to see its screenshot")
            self.screenshot.set_image(None)
            for label in self.labels.values():
                label.clear()
            return
        labels = self.labels
        what = step.kind.value + (f" · {step.tool}" if step.tool else "")
        labels["title"].setText(
            self.tr("Turn {index} · {what}").format(index=step.index, what=what)
        )
        from desktop_agent.core.sentences import of_step  # pydantic: not at the app's start

        said = of_step(step)
        # the action in plain words above its JSON
        labels["action"].setText(in_words(said) if said is not None else "—")
        labels["status"].setText(step.status.value)
        arguments = _json().dumps(step.args, ensure_ascii=False, indent=1) if step.args else "—"
        labels["args"].setText(printable(arguments, keep_newlines=True))
        labels["reason"].setText(printable(reason or "—", keep_newlines=True))
        if step.error:
            labels["result"].setText(
                printable(self.tr("Error: {error}").format(error=step.error), keep_newlines=True)
            )
        elif step.status is StepStatus.RUNNING:
            labels["result"].setText(self.tr("running…"))
        else:
            labels["result"].setText(printable(step.summary or "—", keep_newlines=True))
        labels["timing"].setText(_timing(step))
        self._grounded = grounded
        self._show_screenshot(screenshot, target)

    def _show_screenshot(self, relative: str | None, target: tuple[int, int] | None) -> None:
        self._target = target
        if not relative:
            self._screenshot_key = None
            self.screenshot.placeholder = self.tr("No screenshot for this step")
            self.screenshot.set_image(None)
            return
        image = self._loader.cached(relative)
        if isinstance(image, QImage):
            self._screenshot_key = relative
            self.screenshot.set_image(image, target, self._grounded)
            return
        self._screenshot_key = self._loader.request(relative)
        self.screenshot.placeholder = (
            self.tr("The screenshot file is missing")
            if self._loader.missing(self._screenshot_key)
            else self.tr("Loading the screenshot…")
        )
        self.screenshot.set_image(None)

    @Slot(str)
    def on_image_loaded(self, key: str) -> None:
        if key != self._screenshot_key:
            return
        image = self._loader.cached(key)
        if isinstance(image, QImage):
            self.screenshot.set_image(image, self._target, self._grounded)
        elif self._loader.missing(key):
            self.screenshot.placeholder = self.tr("The screenshot file is missing")
            self.screenshot.set_image(None)


class _Fields(QWidget):
    """The detail's text fields: their text can be selected with the mouse while the pointer
    is over them (and while some of it is selected). A selectable label keeps its text in a
    text document that is laid out again at every change: twice the layout's cost (~0.4 ms
    more of the GUI thread per step shown), and a live run changes them with every step.

    Attributes:
        labels: the fields.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.labels: list[QLabel] = []

    def enterEvent(self, event: QEnterEvent) -> None:  # noqa: N802 - Qt override
        self.set_selectable(True)
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if not any(label.hasSelectedText() for label in self.labels):
            self.set_selectable(False)
        super().leaveEvent(event)

    def set_selectable(self, selectable: bool) -> None:
        flags = (
            Qt.TextInteractionFlag.TextSelectableByMouse
            if selectable
            else Qt.TextInteractionFlag.NoTextInteraction
        )
        for label in self.labels:
            label.setTextInteractionFlags(flags)


def _timing(step: StepView) -> str:
    parts = [f"started {step.started_at.astimezone():%H:%M:%S}"]
    if step.duration_ms is not None:
        parts.append(f"took {format_duration(step.duration_ms)}")
    if step.latency_ms is not None:
        parts.append(f"model {format_duration(step.latency_ms)}")
    if step.prompt_tokens is not None or step.completion_tokens is not None:
        parts.append(f"tokens {step.prompt_tokens or 0} in / {step.completion_tokens or 0} out")
    return " · ".join(parts)
