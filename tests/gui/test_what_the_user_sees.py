"""What the user sees is what runs: the approval dialog's arguments show blank-looking
characters escaped and say how much is below the fold; the status label and the tray's
notification show the model's message as text, never markup."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop_agent.core.models import ApprovalRequest, Risk
from desktop_agent.ui.approval import ApprovalDialog
from desktop_agent.ui.tray import TrayController, plain_message

pytestmark = [pytest.mark.gui]

BLANKS = ("\u2800", "\u3164", "\u115f", "\u1160", "\uffa0", "\u00a0", "\u2003", "\u3000")


def approval(args: dict[str, Any]) -> ApprovalRequest:
    return ApprovalRequest(
        id="a1",
        run_id="r1",
        index=1,
        tool="type_text",
        args=args,
        reason="type it",
        risk=Risk.INPUT,
        offer_run_grant=True,
        timeout_s=30,
    )


@pytest.mark.parametrize("blank", BLANKS, ids=[f"U+{ord(c):04X}" for c in BLANKS])
def test_blank_looking_characters_in_the_arguments_are_shown_escaped(
    qtbot: Any, tmp_path: Path, blank: str
) -> None:
    dialog = ApprovalDialog(None, approval({"text": f"echo hi{blank * 40}; rm -rf ~"}), tmp_path)
    qtbot.addWidget(dialog)

    shown = dialog.args_view.toPlainText()

    assert blank not in shown
    assert f"\\u{ord(blank):04x}" in shown or f"\\x{ord(blank):02x}" in shown
    assert "rm -rf ~" in shown


def test_the_caution_shows_a_targets_bidi_marks_escaped(qtbot: Any, tmp_path: Path) -> None:
    # the caution names the target, and the screen names the target: a right-to-left
    # override would turn the rest of the line around
    caution = 'the target button "Pay \u202enoitcasnart" is sensitive ("pay")'
    request = replace(approval({"element": 2}), caution=caution)
    dialog = ApprovalDialog(None, request, tmp_path)
    qtbot.addWidget(dialog)

    assert "\u202e" not in dialog.caution_label.text()
    assert "\\u202e" in dialog.caution_label.text()


def test_arguments_longer_than_the_box_say_how_many_characters_are_below(
    qtbot: Any, tmp_path: Path
) -> None:
    text = "ok " * 400 + "rm -rf ~"
    dialog = ApprovalDialog(None, approval({"text": text}), tmp_path)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.details_button.click()  # the arguments are behind "Details"

    hint = dialog.args_more_label
    qtbot.waitUntil(hint.isVisible)
    found = re.match(r"([\d,]+) more characters below: scroll", hint.text())
    assert found, hint.text()
    assert int(found.group(1).replace(",", "")) == dialog.hidden_argument_characters() > 0

    scrollbar = dialog.args_view.verticalScrollBar()
    scrollbar.setValue(scrollbar.maximum())
    qtbot.waitUntil(lambda: not hint.isVisible())


def test_arguments_that_fit_have_no_hint(qtbot: Any, tmp_path: Path) -> None:
    dialog = ApprovalDialog(None, approval({"text": "hello"}), tmp_path)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.details_button.click()
    assert dialog.hidden_argument_characters() == 0
    assert not dialog.args_more_label.isVisible()


def test_the_status_label_shows_the_models_message_as_text(window: Any) -> None:
    message = 'Done <a href="https://evil.example"><img src="x">click</a>'
    window.set_status(message)

    assert window.bar.status_label.textFormat() == Qt.TextFormat.PlainText
    assert window.bar.status_label.text() == message
    assert "&lt;a href" in window.bar.status_label.toolTip()  # shown literally, not as a link


class RecordingIcon:
    """Stands in for QSystemTrayIcon.showMessage (offscreen Qt has no notifications)."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []

    def supportsMessages(self) -> bool:  # noqa: N802 - Qt's name
        return True

    def showMessage(self, title: str, text: str, *_: Any) -> None:  # noqa: N802 - Qt's name
        self.messages.append((title, text))


def test_the_tray_notification_shows_the_models_message_as_text(qtbot: Any) -> None:
    tray = TrayController(available=False)
    icon = RecordingIcon()
    tray._tray = icon  # type: ignore[assignment]

    tray.notify("Run completed", 'Saved <b>it</b> &amp; <a href="https://x">more</a>\u202e')

    ((title, text),) = icon.messages
    assert title == "Run completed"
    assert "<" not in text and "&" not in text and "\u202e" not in text
    assert text == plain_message('Saved <b>it</b> &amp; <a href="https://x">more</a>\u202e')
    assert "\uff1cb\uff1eit" not in text and "\uff1cb>it" in text
