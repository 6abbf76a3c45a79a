"""The approval dialog: may this tool run with these arguments? Opened with open() and awaited."""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import shiboken6
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QFont, QImage
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Risk
from desktop_agent.core.text import quote, visible
from desktop_agent.ui.close_up import CloseUp
from desktop_agent.ui.placement import place_on_monitor
from desktop_agent.ui.text import in_words, plain_label, plain_tooltip
from desktop_agent.ui.timeline import ImageLoader

Clock = Callable[[], float]

#: how often the countdown is redrawn (and the deadline checked), in ms
TICK_MS = 200
#: the Allow buttons wake this long after the dialog opened (Deny, Escape and closing work at
#: once): a click or key already on its way when the dialog popped up — another run's click
#: landing where the dialog now is, its alt+o, an Enter typed for the window below — is not
#: the person's answer (the terminal question's MIN_ANSWER_S, cli/gate.py)
ARM_S = 0.5

# translated where shown (QT_TRANSLATE_NOOP marks them for lupdate)
_RISK_TEXT = {
    Risk.SAFE: str(QT_TRANSLATE_NOOP("ApprovalDialog", "safe")),
    Risk.INPUT: str(
        QT_TRANSLATE_NOOP("ApprovalDialog", "input — acts with your mouse and keyboard")
    ),
    Risk.DANGEROUS: str(QT_TRANSLATE_NOOP("ApprovalDialog", "dangerous — asks at every call")),
}


class ApprovalDialog(QDialog):
    """Asks the user whether one tool call may run: Allow once · Allow for this run · Deny.

    Window-modal. Shows the call in one plain sentence (the tool and its arguments as JSON
    behind "Details"), the model's reason, the risk and the screenshot the model saw with
    the target marked. Deny is the safe choice: it has
    the initial focus, Escape and the window's close button deny, and so does the
    countdown when it reaches 0. Alt+O, Alt+R and Alt+D press the buttons; Enter presses
    the focused one.

    Signals:
        decided(ApprovalDecision): the user's answer, or DENY when the countdown ran out;
            emitted exactly once, and never when the dialog is dismissed (see `dismiss`).

    Attributes:
        request: the approval request shown.
        decision: the answer once given, else None.
        timed_out: True when the countdown denied.
        once_button, run_button, deny_button: the three answers (run_button is hidden
            when the request offers no run grant).
        sentence_label: the call in one plain sentence, the headline.
        details_button, details: the tool and its arguments, shown when the button is on.
        args_view: the arguments as they will run (the text as it will be typed).
        show_secret_box: shows a known password field's text in args_view; only there
            for such a call.
        countdown_label, countdown_bar: the time left.
        close_up: the screenshot close up around the target (marked, the element acted on
            outlined), with its "Whole screen" button.
        screenshot_view: its picture (close_up.view).
    """

    decided = Signal(ApprovalDecision)

    def __init__(
        self,
        parent: QWidget | None,
        request: ApprovalRequest,
        data_dir: Path,
        *,
        clock: Clock = time.monotonic,
        tick_ms: int = TICK_MS,
        loader: ImageLoader | None = None,
        explain: bool = False,
    ) -> None:
        super().__init__(parent)
        self.request = request
        self.decision: ApprovalDecision | None = None
        self.timed_out = False
        self._clock = clock
        self._deadline: float | None = None
        #: when the Allow buttons wake (ARM_S after `open`)
        self._armed_at: float | None = None
        self._dismissed = False
        self.setWindowTitle(
            self.tr("Desktop Agent — allow {tool}?").format(tool=quote(request.tool))
        )
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setObjectName("ApprovalDialog")

        # the call in one plain sentence, made from the validated call and what it acts on
        # (core/sentences.py): its outside parts quoted there; shown as text, never markup
        self.sentence_label = plain_label(in_words(request.sentence), self)
        self.sentence_label.setObjectName("approvalSentence")
        self.sentence_label.setWordWrap(True)
        self.sentence_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        headline = self.sentence_label.font()
        headline.setBold(True)
        headline.setPointSizeF(headline.pointSizeF() * 1.15)
        self.sentence_label.setFont(headline)
        # Arguments and reason come from the model (and through it from the screen): shown
        # as plain text, control and bidi characters escaped, so they cannot pass for
        # markup, links or reversed text.
        # what will run, as it will be typed: the stored row hides a text whose field is not
        # known to be plain, the person asked must not approve it blind (issue #15)
        self.args_view = QPlainTextEdit(_pretty(request.to_show), self)
        self.args_view.setReadOnly(True)
        self.args_view.setFont(QFont("monospace"))
        self.args_view.setMaximumHeight(110)
        self.args_view.setAccessibleName(self.tr("Arguments"))
        self.args_view.setTabChangesFocus(True)
        # what the box cannot show is said, so a long text is not approved half read
        self.args_more_label = QLabel(self)
        self.args_more_label.setTextFormat(Qt.TextFormat.PlainText)
        self.args_more_label.hide()
        # a known password field's text: hidden until the person asks to see it
        self.show_secret_box = QCheckBox(self.tr("Show the password"), self)
        self.show_secret_box.setVisible(bool(request.secret))
        # the call as the program sees it (tool and JSON), one click away
        self.details_button = QToolButton(self)
        self.details_button.setText(self.tr("Details"))
        self.details_button.setCheckable(True)
        self.details_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_button.setArrowType(Qt.ArrowType.RightArrow)
        self.details_button.setToolTip(
            self.tr("Show the tool and its arguments as the program sees them")
        )
        self.details = QWidget(self)
        self.details.setObjectName("approvalDetails")
        call = QFormLayout(self.details)
        call.setContentsMargins(0, 0, 0, 0)
        self.tool_label = plain_label(quote(request.tool), self.details)
        call.addRow(self.tr("Tool:"), self.tool_label)
        call.addRow(self.tr("Arguments:"), self.args_view)
        call.addRow("", self.args_more_label)
        self.details.hide()
        # quoted, newlines too: a line of the model's cannot read as a line of ours
        reason = quote(request.reason) or self.tr("(the model gave no reason)")
        self.reason_label = QLabel(reason, self)
        self.reason_label.setTextFormat(Qt.TextFormat.PlainText)
        self.reason_label.setWordWrap(True)
        self.reason_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        risk = _RISK_TEXT.get(request.risk)
        self.risk_label = QLabel(self.tr(risk) if risk else request.risk.value, self)
        self.risk_label.setTextFormat(Qt.TextFormat.PlainText)
        if request.risk is Risk.DANGEROUS:
            self.risk_label.setStyleSheet("color: #c62828; font-weight: bold;")
        details = QFormLayout()
        details.addRow(self.tr("Reason:"), self.reason_label)
        details.addRow(self.tr("Risk:"), self.risk_label)
        # why this call asks every time (a launcher key, a paste, a line into a terminal, a
        # password field, a sensitive target): our own words, not the model's
        # it names the target, whose name is the screen's: shown as text, bidi marks escaped
        self.caution_label = QLabel(quote(request.caution), self)
        self.caution_label.setTextFormat(Qt.TextFormat.PlainText)
        self.caution_label.setWordWrap(True)
        self.caution_label.setStyleSheet("color: #c62828;")
        if request.caution:
            details.addRow(self.tr("Asks every time:"), self.caution_label)
        else:
            self.caution_label.hide()
        # the model's provider's own question (OpenAI's safety checks): its words, as text
        check = request.safety_check
        self.safety_check_label = QLabel(
            f"{quote(check.code)}: {quote(check.message)}" if check else "", self
        )
        self.safety_check_label.setTextFormat(Qt.TextFormat.PlainText)
        self.safety_check_label.setWordWrap(True)
        self.safety_check_label.setStyleSheet("color: #c62828; font-weight: bold;")
        if check is not None:
            details.addRow(self.tr("Safety check:"), self.safety_check_label)
        else:
            self.safety_check_label.hide()
        # where the action is, on a desktop of several monitors (the app's own numbers)
        where = request.monitor
        self.monitor_label = QLabel(
            self.tr("monitor {number}, {width}x{height} at {left},{top}").format(
                number=where.number, width=where.width, height=where.height,
                left=where.left, top=where.top,
            )
            if where is not None
            else "",
            self,
        )  # fmt: skip
        self.monitor_label.setObjectName("approvalMonitor")
        self.monitor_label.setTextFormat(Qt.TextFormat.PlainText)
        if where is not None:
            details.addRow(self.tr("On:"), self.monitor_label)
        else:
            self.monitor_label.hide()

        # a close-up of the target (the field a text goes to outlined), the whole screen a
        # click away
        self.close_up = CloseUp(self)
        self.screenshot_view = self.close_up.view
        # read off the GUI thread: the window's loader (it may have the image already), or our own
        self._loader = loader if loader is not None else ImageLoader(data_dir, parent=self)
        self._screenshot_key: str | None = None

        self.countdown_label = QLabel(self)
        self.countdown_bar = QProgressBar(self)
        self.countdown_bar.setTextVisible(False)
        self.countdown_bar.setMaximumHeight(6)
        self.countdown_bar.setRange(0, max(1, round(request.timeout_s * 1000)))

        self.once_button = QPushButton(self.tr("Allow &once"), self)
        self.once_button.setToolTip(self.tr("Run this call; ask again next time (Alt+O)"))
        self.run_button = QPushButton(self.tr("Allow for this &run"), self)
        grant_tip = self.tr("Run {tool} without asking for the rest of this run").format(
            tool=quote(request.tool)
        )
        self.run_button.setToolTip(plain_tooltip(grant_tip) or "")
        self.deny_button = QPushButton(self.tr("&Deny"), self)
        self.deny_button.setToolTip(self.tr("Do not run it (Esc)"))
        self.deny_button.setDefault(True)
        self.run_button.setVisible(request.offer_run_grant)
        self._set_allow_enabled(False)  # until ARM_S after the dialog opened
        buttons = QHBoxLayout()
        buttons.addWidget(self.countdown_label, 1)
        buttons.addWidget(self.once_button)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.deny_button)

        # the first question a person sees says what the answers mean
        self.explanation = QLabel(_explanation(request), self)
        self.explanation.setObjectName("approvalExplanation")
        self.explanation.setWordWrap(True)
        self.explanation.setTextFormat(Qt.TextFormat.PlainText)
        self.explanation.setStyleSheet("color: #555; padding: 4px;")
        self.explanation.setVisible(explain)

        layout = QVBoxLayout(self)
        layout.addWidget(self.sentence_label)
        if request.secret:
            # outside Details: the one thing a password's question may want looked at
            layout.addWidget(self.show_secret_box)
        layout.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.details)
        layout.addLayout(details)
        layout.addWidget(self.close_up, 1)
        layout.addWidget(self.countdown_bar)
        layout.addLayout(buttons)
        layout.addWidget(self.explanation)
        self.resize(720, 620)

        self._timer = QTimer(self)
        self._timer.setInterval(tick_ms)
        self._connect_signals()
        self._show_remaining(request.timeout_s)
        self._show_screenshot()

    def _connect_signals(self) -> None:
        scrollbar = self.args_view.verticalScrollBar()
        scrollbar.valueChanged.connect(self.on_args_scrolled)
        scrollbar.rangeChanged.connect(self.on_args_scrolled)
        self.show_secret_box.toggled.connect(self.on_show_secret_toggled)
        self.details_button.toggled.connect(self.on_details_toggled)
        self.once_button.clicked.connect(self.on_once_clicked)
        self.run_button.clicked.connect(self.on_run_clicked)
        self.deny_button.clicked.connect(self.on_deny_clicked)
        self._timer.timeout.connect(self.on_tick)
        self._loader.loaded.connect(self.on_image_loaded)

    # ── public API ────────────────────────────────────────────────────────────

    def open(self) -> None:
        """Show window-modal and start the countdown."""
        now = self._clock()
        self._deadline = now + self.request.timeout_s
        self._armed_at = now + ARM_S
        self._timer.start()
        QTimer.singleShot(round(ARM_S * 1000), self, self.on_tick)
        super().open()
        # the person looks where the action is: the dialog opens on that monitor
        place_on_monitor(self, self.request.monitor)
        self.deny_button.setFocus(Qt.FocusReason.OtherFocusReason)

    def remaining_s(self) -> float:
        """Seconds left before the dialog denies by itself."""
        if self._deadline is None:
            return self.request.timeout_s
        return max(0.0, self._deadline - self._clock())

    def dismiss(self) -> None:
        """Close without an answer (the question was answered elsewhere, or the run ended)."""
        self._dismissed = True
        self._timer.stop()
        if self.isVisible():
            super().done(QDialog.DialogCode.Rejected)

    def reject(self) -> None:
        """Escape and the close button deny."""
        self._finish(ApprovalDecision.DENY)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if self.decision is None and not self._dismissed:
            self._finish(ApprovalDecision.DENY)
        super().closeEvent(event)

    # ── slots ────────────────────────────────────────────────────────────────

    def armed(self) -> bool:
        """Whether an Allow counts: ARM_S have passed since the dialog opened."""
        return self._armed_at is not None and self._clock() >= self._armed_at

    @Slot()
    def on_once_clicked(self) -> None:
        if self.armed():
            self._finish(ApprovalDecision.ONCE)

    @Slot()
    def on_run_clicked(self) -> None:
        if self.request.offer_run_grant and self.armed():
            self._finish(ApprovalDecision.RUN)

    @Slot()
    def on_deny_clicked(self) -> None:
        self._finish(ApprovalDecision.DENY)

    @Slot(bool)
    def on_show_secret_toggled(self, shown: bool) -> None:
        request = self.request
        self.args_view.setPlainText(_pretty(request.revealed_args if shown else request.to_show))
        if shown:
            self.details_button.setChecked(True)  # the text shows in the arguments

    @Slot(bool)
    def on_details_toggled(self, shown: bool) -> None:
        self.details.setVisible(shown)
        arrow = Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        self.details_button.setArrowType(arrow)
        self.on_args_scrolled()

    @Slot()
    def on_args_scrolled(self, *_: object) -> None:
        hidden = self.hidden_argument_characters()
        more = (
            self.tr("1 more character below: scroll the arguments to read them all")
            if hidden == 1
            else self.tr("{count} more characters below: scroll the arguments to read them all")
        )
        self.args_more_label.setText(more.format(count=f"{hidden:,}"))
        self.args_more_label.setVisible(hidden > 0 and self.details.isVisible())

    def hidden_argument_characters(self) -> int:
        """How many characters of the arguments lie below what the box shows now."""
        view = self.args_view
        viewport = view.viewport()
        corner = QPoint(viewport.width() - 1, viewport.height() - 1)
        last_shown = view.cursorForPosition(corner).position()
        return max(0, view.document().characterCount() - 1 - last_shown)

    @Slot(str)
    def on_image_loaded(self, key: str) -> None:
        if key == self._screenshot_key:
            self._show_screenshot()

    @Slot()
    def on_tick(self) -> None:
        if self.decision is None and self.armed() and not self.once_button.isEnabled():
            self._set_allow_enabled(True)
        left = self.remaining_s()
        self._show_remaining(left)
        if left <= 0:
            self.timed_out = True
            self._finish(ApprovalDecision.DENY)

    # ── internals ─────────────────────────────────────────────────────────────

    def _set_allow_enabled(self, enabled: bool) -> None:
        # a disabled button takes no click and its Alt shortcut does nothing
        self.once_button.setEnabled(enabled)
        self.run_button.setEnabled(enabled and self.request.offer_run_grant)

    def _show_screenshot(self) -> None:
        relative, view = self.request.screenshot, self.screenshot_view
        if not relative:
            return
        image = self._loader.cached(relative)
        if isinstance(image, QImage):
            self._screenshot_key = None
            element = self.request.element
            # what the call acts on, outlined: an element's box, not a whole window's
            box = element.box if element is not None and element.how != "window" else None
            self.close_up.set_image(image, self.request.target, box)
            return
        self._screenshot_key = self._loader.request(relative)
        if self._loader.missing(self._screenshot_key):
            view.placeholder = self.tr("The screenshot file is missing")
        else:
            view.placeholder = self.tr("Loading the screenshot…")
        self.close_up.set_image(None)

    def _show_remaining(self, left: float) -> None:
        seconds = math.ceil(left)
        self.countdown_label.setText(
            self.tr("Denies by itself in {seconds} s").format(seconds=seconds)
        )
        self.countdown_bar.setValue(round(left * 1000))

    def _finish(self, decision: ApprovalDecision) -> None:
        if self.decision is not None or self._dismissed:
            return
        self.decision = decision
        self._timer.stop()
        self.decided.emit(decision)
        code = QDialog.DialogCode.Rejected
        if decision is not ApprovalDecision.DENY:
            code = QDialog.DialogCode.Accepted
        super().done(code)


async def ask_approval(
    parent: QWidget | None,
    request: ApprovalRequest,
    data_dir: Path,
    *,
    clock: Clock = time.monotonic,
    tick_ms: int = TICK_MS,
    loader: ImageLoader | None = None,
    explain: bool = False,
) -> ApprovalDecision:
    """Open an ApprovalDialog and await its answer (needs asyncio running on Qt: qasync).
    `explain`: say under the buttons what each answer does (the first question).

    Cancelling the awaiting task (the run stopped, or the question was answered
    elsewhere) closes the dialog without an answer. A dialog destroyed unanswered
    (its parent window was deleted) counts as DENY.
    """
    future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
    dialog = ApprovalDialog(
        parent, request, data_dir, clock=clock, tick_ms=tick_ms, loader=loader, explain=explain
    )

    def on_decided(decision: object) -> None:
        if not future.done() and isinstance(decision, ApprovalDecision):
            future.set_result(decision)

    def on_destroyed() -> None:
        if not future.done():
            future.set_result(ApprovalDecision.DENY)

    dialog.decided.connect(on_decided)
    dialog.destroyed.connect(on_destroyed)
    dialog.open()
    try:
        return await future
    finally:
        if shiboken6.isValid(dialog):
            dialog.dismiss()
            dialog.deleteLater()


def _pretty(args: dict[str, object]) -> str:
    # JSON escapes C0 controls; visible catches what it leaves (C1, bidi, separators) and
    # the characters that look blank (U+2800, U+3164, no-break spaces)
    text = json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    return visible(text, keep_newlines=True)


def _explanation(request: ApprovalRequest) -> str:
    """What each answer does, in words (shown with the first question of the session)."""

    once = QCoreApplication.translate(
        "ApprovalDialog",
        "Allow once: this one action runs now; the agent asks again before its next one.",
    )
    run = (
        " "
        + QCoreApplication.translate(
            "ApprovalDialog", "Allow for this run: {tool} acts without asking until this run ends."
        ).format(tool=quote(request.tool))
        if request.offer_run_grant
        else ""
    )
    deny = " " + QCoreApplication.translate(
        "ApprovalDialog",
        "Deny: nothing happens on your screen; the agent is told and may try another way.",
    )
    return (
        once
        + run
        + deny
        + " "
        + QCoreApplication.translate("ApprovalDialog", "No answer in time counts as Deny.")
    )
