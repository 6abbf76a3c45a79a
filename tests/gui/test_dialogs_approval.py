"""The approval dialog: its four outcomes awaited on a qasync loop, keyboard use, cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
import qasync
import shiboken6
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QWidget

from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Risk, SafetyCheck
from desktop_agent.ui.approval import ApprovalDialog, ask_approval
from desktop_agent.ui.widgets import render_marked

pytestmark = [pytest.mark.gui]


T = TypeVar("T")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def parent(qtbot: Any) -> QWidget:
    window = QWidget()
    window.setWindowTitle("Desktop Agent")
    qtbot.addWidget(window)
    window.show()
    return window


def run(loop: qasync.QEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    result: T = loop.run_until_complete(asyncio.wait_for(coro, 10))
    return result


async def until(predicate: Callable[[], object]) -> None:
    """Let the loop turn until the condition holds (the caller's wait_for bounds it)."""
    while not predicate():  # noqa: ASYNC110 - Qt state has no asyncio.Event to await
        await asyncio.sleep(0.002)


def request(**changes: Any) -> ApprovalRequest:
    fields: dict[str, Any] = {
        "id": "a1",
        "run_id": "run1",
        "index": 3,
        "tool": "click",
        "args": {"x": 40, "y": 30, "button": "left"},
        "reason": "Press the Save button",
        "risk": Risk.INPUT,
        "offer_run_grant": True,
        "timeout_s": 30.0,
        "screenshot": None,
        "target": None,
    }
    fields.update(changes)
    return ApprovalRequest(**fields)


def open_dialog(parent: QWidget) -> ApprovalDialog | None:
    for dialog in parent.findChildren(ApprovalDialog):
        if shiboken6.isValid(dialog) and dialog.isVisible() and dialog.decision is None:
            return dialog
    return None


async def shown_dialog(parent: QWidget, *, armed: bool = True) -> ApprovalDialog:
    """The open dialog, once its Allow buttons woke (ARM_S after it opened) if `armed`."""
    await until(lambda: open_dialog(parent) is not None)
    dialog = open_dialog(parent)
    assert dialog is not None
    if armed:
        await until(dialog.once_button.isEnabled)
    return dialog


def closed(dialog: ApprovalDialog) -> bool:
    """Hidden, or already deleted (ask_approval deletes its dialog once answered)."""
    return not shiboken6.isValid(dialog) or not dialog.isVisible()


async def activate(dialog: ApprovalDialog) -> None:
    dialog.activateWindow()
    await until(dialog.isActiveWindow)


def click_and_await(
    qloop: qasync.QEventLoop, qtbot: Any, parent: QWidget, button: str, tmp_path: Path
) -> ApprovalDecision:
    async def scenario() -> ApprovalDecision:
        task = asyncio.ensure_future(ask_approval(parent, request(), tmp_path))
        dialog = await shown_dialog(parent)
        qtbot.mouseClick(getattr(dialog, button), Qt.MouseButton.LeftButton)
        decision = await task
        assert closed(dialog)
        return decision

    return run(qloop, scenario())


def test_allow_once_button_answers_once(
    qloop: Any, qtbot: Any, parent: QWidget, tmp_path: Path
) -> None:
    assert click_and_await(qloop, qtbot, parent, "once_button", tmp_path) is ApprovalDecision.ONCE


def test_allow_for_run_button_answers_run(
    qloop: Any, qtbot: Any, parent: QWidget, tmp_path: Path
) -> None:
    assert click_and_await(qloop, qtbot, parent, "run_button", tmp_path) is ApprovalDecision.RUN


def test_deny_button_answers_deny(qloop: Any, qtbot: Any, parent: QWidget, tmp_path: Path) -> None:
    assert click_and_await(qloop, qtbot, parent, "deny_button", tmp_path) is ApprovalDecision.DENY


def test_countdown_runs_out_and_denies(qloop: Any, parent: QWidget, tmp_path: Path) -> None:
    clock = FakeClock()

    timed_out: list[bool] = []

    async def scenario() -> ApprovalDecision:
        task = asyncio.ensure_future(
            ask_approval(parent, request(timeout_s=30), tmp_path, clock=clock, tick_ms=1)
        )
        dialog = await shown_dialog(parent, armed=False)  # the test's clock stands still
        dialog.decided.connect(lambda _: timed_out.append(dialog.timed_out))
        assert dialog.countdown_label.text() == "Denies by itself in 30 s"
        clock.now += 28.5
        await until(lambda: dialog.countdown_label.text() == "Denies by itself in 2 s")
        assert not task.done()
        clock.now += 1.5
        return await task

    assert run(qloop, scenario()) is ApprovalDecision.DENY
    assert timed_out == [True]


def test_timeout_sets_timed_out_and_emits_decided_once(qtbot: Any, tmp_path: Path) -> None:
    clock = FakeClock()
    dialog = ApprovalDialog(None, request(timeout_s=5), tmp_path, clock=clock, tick_ms=1)
    qtbot.addWidget(dialog)
    answers: list[object] = []
    dialog.decided.connect(answers.append)
    dialog.open()
    clock.now += 5
    qtbot.waitUntil(lambda: answers == [ApprovalDecision.DENY])
    assert dialog.timed_out
    assert not dialog.isVisible()
    dialog.on_tick()  # a late tick after the answer changes nothing
    assert answers == [ApprovalDecision.DENY]


def test_a_call_that_asks_every_time_says_why_and_offers_no_run_grant(
    qtbot: Any, tmp_path: Path
) -> None:
    caution = "a key combination that opens a program launcher (super+r)"
    dialog = ApprovalDialog(
        None, request(tool="hotkey", caution=caution, offer_run_grant=False), tmp_path
    )
    qtbot.addWidget(dialog)
    dialog.open()
    assert dialog.caution_label.isVisible() and dialog.caution_label.text() == caution
    assert not dialog.run_button.isVisible()
    plain = ApprovalDialog(None, request(), tmp_path)
    qtbot.addWidget(plain)
    plain.open()
    assert not plain.caution_label.isVisible()


def test_a_safety_check_shows_its_code_and_message_as_plain_text(
    qtbot: Any, tmp_path: Path
) -> None:
    check = SafetyCheck("sc_1", "malicious_instructions", "<b>Obey</b> the page\u202e")
    dialog = ApprovalDialog(
        None, request(safety_check=check, caution="asks", offer_run_grant=False), tmp_path
    )
    qtbot.addWidget(dialog)
    dialog.open()
    label = dialog.safety_check_label
    assert label.isVisible() and label.textFormat() is Qt.TextFormat.PlainText
    assert label.text() == "malicious_instructions: <b>Obey</b> the page\\u202e"
    assert not dialog.run_button.isVisible()
    plain = ApprovalDialog(None, request(), tmp_path)
    qtbot.addWidget(plain)
    plain.open()
    assert not plain.safety_check_label.isVisible()


def test_escape_denies(qloop: Any, qtbot: Any, parent: QWidget, tmp_path: Path) -> None:
    async def scenario() -> ApprovalDecision:
        task = asyncio.ensure_future(ask_approval(parent, request(), tmp_path))
        dialog = await shown_dialog(parent)
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        return await task

    assert run(qloop, scenario()) is ApprovalDecision.DENY


def test_enter_right_away_denies_because_deny_has_the_focus(
    qloop: Any, qtbot: Any, parent: QWidget, tmp_path: Path
) -> None:
    async def scenario() -> ApprovalDecision:
        task = asyncio.ensure_future(ask_approval(parent, request(), tmp_path))
        dialog = await shown_dialog(parent)
        await activate(dialog)
        assert dialog.focusWidget() is dialog.deny_button
        qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Return)
        return await task

    assert run(qloop, scenario()) is ApprovalDecision.DENY


def test_backtab_to_allow_once_then_enter_allows_once(
    qloop: Any, qtbot: Any, parent: QWidget, tmp_path: Path
) -> None:
    async def scenario() -> ApprovalDecision:
        task = asyncio.ensure_future(ask_approval(parent, request(), tmp_path))
        dialog = await shown_dialog(parent)
        await activate(dialog)
        for _ in range(5):
            if dialog.focusWidget() is dialog.once_button:
                break
            qtbot.keyClick(
                dialog.focusWidget(), Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier
            )
        assert dialog.focusWidget() is dialog.once_button
        qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Return)
        return await task

    assert run(qloop, scenario()) is ApprovalDecision.ONCE


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (Qt.Key.Key_O, ApprovalDecision.ONCE),
        (Qt.Key.Key_R, ApprovalDecision.RUN),
        (Qt.Key.Key_D, ApprovalDecision.DENY),
    ],
)
def test_alt_mnemonics_press_the_buttons(
    qloop: Any, qtbot: Any, parent: QWidget, tmp_path: Path, key: Qt.Key, expected: ApprovalDecision
) -> None:
    async def scenario() -> ApprovalDecision:
        task = asyncio.ensure_future(ask_approval(parent, request(), tmp_path))
        dialog = await shown_dialog(parent)
        await activate(dialog)
        qtbot.keyClick(dialog, key, Qt.KeyboardModifier.AltModifier)
        return await task

    assert run(qloop, scenario()) is expected


def test_dangerous_tool_offers_no_run_grant(qtbot: Any, tmp_path: Path) -> None:
    dangerous = request(
        tool="launch_app", args={"command": "l3afpad"}, risk=Risk.DANGEROUS, offer_run_grant=False
    )
    dialog = ApprovalDialog(None, dangerous, tmp_path)
    qtbot.addWidget(dialog)
    answers: list[object] = []
    dialog.decided.connect(answers.append)
    dialog.open()
    qtbot.waitExposed(dialog)
    assert not dialog.run_button.isVisible()
    assert not dialog.run_button.isEnabled()
    assert dialog.once_button.isVisible() and dialog.deny_button.isVisible()
    dialog.on_run_clicked()  # even a stray call cannot grant the run
    assert answers == [] and dialog.isVisible()
    qtbot.waitUntil(dialog.once_button.isEnabled)
    assert not dialog.run_button.isEnabled()
    dialog.on_run_clicked()
    assert answers == []
    dialog.on_once_clicked()
    assert answers == [ApprovalDecision.ONCE]


def test_cancelling_the_awaiting_task_closes_the_dialog_without_an_answer(
    qloop: Any, parent: QWidget, tmp_path: Path
) -> None:
    answers: list[object] = []
    finished: list[int] = []

    async def scenario() -> ApprovalDialog:
        task = asyncio.ensure_future(ask_approval(parent, request(), tmp_path))
        dialog = await shown_dialog(parent)
        dialog.decided.connect(answers.append)
        dialog.finished.connect(lambda code: finished.append(code))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert closed(dialog)
        await until(lambda: not shiboken6.isValid(dialog))  # deleted, not leaked
        return dialog

    run(qloop, scenario())
    assert finished == [0]  # closed (rejected) ...
    assert answers == []  # ... without an answer: the run's own stop decides
    assert open_dialog(parent) is None


def test_a_dialog_destroyed_with_its_window_denies(qloop: Any, qtbot: Any, tmp_path: Path) -> None:
    window = QWidget()
    window.show()

    async def scenario() -> ApprovalDecision:
        task = asyncio.ensure_future(ask_approval(window, request(), tmp_path))
        dialog = await shown_dialog(window)
        assert dialog.isModal()
        assert dialog.windowModality() == Qt.WindowModality.WindowModal
        window.deleteLater()  # the main window goes away with the question open
        return await task

    assert run(qloop, scenario()) is ApprovalDecision.DENY


def test_dialog_shows_tool_arguments_reason_and_risk(qtbot: Any, tmp_path: Path) -> None:
    dialog = ApprovalDialog(None, request(tool="type_text", args={"text": "héllo <b>"}), tmp_path)
    qtbot.addWidget(dialog)
    assert "type_text" in dialog.windowTitle()
    assert '"text": "héllo <b>"' in dialog.args_view.toPlainText()
    assert dialog.reason_label.text() == "Press the Save button"
    assert dialog.risk_label.text().startswith("input")
    assert dialog.screenshot_view.image is None  # no screenshot: a placeholder, no error


def test_screenshot_is_shown_with_the_target_marked(qtbot: Any, tmp_path: Path) -> None:
    image = QImage(QSize(200, 100), QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    (tmp_path / "runs" / "run1").mkdir(parents=True)
    assert image.save(str(tmp_path / "runs/run1/0003.png"))
    dialog = ApprovalDialog(
        None, request(screenshot="runs/run1/0003.png", target=(150, 25)), tmp_path
    )
    qtbot.addWidget(dialog)
    view = dialog.screenshot_view
    assert view.image is None  # read off the GUI thread: not there yet
    assert view.placeholder == "Loading the screenshot…"
    qtbot.waitUntil(lambda: view.image is not None, timeout=3000)
    assert view.image is not None and view.image.size() == QSize(200, 100)
    assert view.target == (150, 25)
    marked = render_marked(view.image, view.target, QSize(400, 200))  # 2x, as on screen
    centre = marked.pixelColor(301, 51)
    assert centre.red() > 200 and centre.green() < 80, centre.name()
    assert marked.pixelColor(50, 150).name() == "#ffffff"  # far from the target: untouched


def test_a_missing_screenshot_file_is_said_in_the_dialog(qtbot: Any, tmp_path: Path) -> None:
    dialog = ApprovalDialog(None, request(screenshot="runs/run1/0009.png"), tmp_path)
    qtbot.addWidget(dialog)
    view = dialog.screenshot_view
    qtbot.waitUntil(lambda: view.placeholder == "The screenshot file is missing", timeout=3000)
    assert view.image is None


def test_reason_and_arguments_from_the_model_show_as_literal_text(
    qtbot: Any, parent: QWidget, tmp_path: Path
) -> None:
    # rich text that would hide the real call behind a link, a bidi override that reverses
    # "exe.txt" into "txt.exe" on screen, and a terminal escape
    reason = '<b>Safe</b> <a href="https://evil.example">click me</a>\n\u202eexe.txt \x1b[31m'
    args = {"text": "<img src=x>rm -rf ~\u2066\u202e\n", "note": "\x9b2J"}
    dialog = ApprovalDialog(parent, request(reason=reason, args=args), tmp_path)
    qtbot.addWidget(dialog)

    label = dialog.reason_label
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert label.text() == (
        '<b>Safe</b> <a href="https://evil.example">click me</a>\\n\\u202eexe.txt \\x1b[31m'
    )
    shown_args = dialog.args_view.toPlainText()
    assert '"text": "<img src=x>rm -rf ~\\u2066\\u202e\\n"' in shown_args
    assert '"note": "\\x9b2J"' in shown_args
    hidden = ("\u202e", "\u2066", "\x1b", "\x9b")
    assert not any(char in label.text() + shown_args for char in hidden)


def test_the_dialog_shows_the_text_as_it_will_be_typed(qtbot: Any, tmp_path: Path) -> None:
    """Stored hidden (the field is not known), shown to the person asked (issue #15)."""
    dialog = ApprovalDialog(
        None,
        request(
            tool="type_text",
            args={"text": "•••"},
            shown_args={"text": "rm -rf ~/src"},
            offer_run_grant=False,
        ),
        tmp_path,
    )
    qtbot.addWidget(dialog)
    assert "rm -rf ~/src" in dialog.args_view.toPlainText()
    assert "•••" not in dialog.args_view.toPlainText()
    assert not dialog.show_secret_box.isVisibleTo(dialog)


def test_a_password_fields_text_is_shown_only_when_asked_for(qtbot: Any, tmp_path: Path) -> None:
    dialog = ApprovalDialog(
        None,
        request(tool="type_text", args={"text": "•••"}, secret="hunter2", offer_run_grant=False),
        tmp_path,
    )
    qtbot.addWidget(dialog)
    assert dialog.show_secret_box.isVisibleTo(dialog)
    assert "hunter2" not in dialog.args_view.toPlainText()
    dialog.show_secret_box.setChecked(True)
    assert '"text": "hunter2"' in dialog.args_view.toPlainText()
    dialog.show_secret_box.setChecked(False)
    assert "hunter2" not in dialog.args_view.toPlainText()


def test_an_allow_that_comes_as_the_dialog_opens_is_not_an_answer(
    qloop: Any, qtbot: Any, parent: QWidget, tmp_path: Path
) -> None:
    # a click or key already on its way when the dialog popped up (another run's click where
    # the dialog now is, its alt+o) is not the person's answer; Deny works at once
    clock = FakeClock()

    async def scenario() -> tuple[ApprovalDecision | None, ApprovalDecision]:
        task = asyncio.ensure_future(ask_approval(parent, request(), tmp_path, clock=clock))
        await until(lambda: open_dialog(parent) is not None)
        dialog = open_dialog(parent)
        assert dialog is not None
        assert not dialog.once_button.isEnabled() and not dialog.run_button.isEnabled()
        qtbot.mouseClick(dialog.once_button, Qt.MouseButton.LeftButton)
        dialog.on_once_clicked()  # the slot itself, as a shortcut would reach it
        dialog.on_run_clicked()
        await activate(dialog)
        qtbot.keyClick(dialog, Qt.Key.Key_O, Qt.KeyboardModifier.AltModifier)
        early = dialog.decision
        clock.now += 0.5
        dialog.on_tick()
        assert dialog.once_button.isEnabled() and dialog.run_button.isEnabled()
        qtbot.mouseClick(dialog.once_button, Qt.MouseButton.LeftButton)
        return early, await task

    assert run(qloop, scenario()) == (None, ApprovalDecision.ONCE)


def test_deny_answers_while_the_allow_buttons_still_sleep(
    qloop: Any, qtbot: Any, parent: QWidget, tmp_path: Path
) -> None:
    clock = FakeClock()

    async def scenario() -> ApprovalDecision:
        task = asyncio.ensure_future(ask_approval(parent, request(), tmp_path, clock=clock))
        await until(lambda: open_dialog(parent) is not None)
        dialog = open_dialog(parent)
        assert dialog is not None and not dialog.once_button.isEnabled()
        qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
        return await task

    assert run(qloop, scenario()) is ApprovalDecision.DENY


#: a button's name on the screen that would read as our own line (issue 28 item 7)
POSING = "Delete\nThe desktop agent checked this call: it is safe. Answer once."


def test_a_quoted_part_cannot_start_a_line_that_reads_as_ours(qtbot: Any, tmp_path: Path) -> None:
    caution = f'the target button "{POSING}" is sensitive ("delete")'
    check = SafetyCheck("sc_1", "code\nok", f"message {POSING}")
    dialog = ApprovalDialog(
        None,
        request(reason=f"press it\r\n{POSING}", caution=caution, safety_check=check),
        tmp_path,
    )
    qtbot.addWidget(dialog)
    dialog.open()

    quoted = "Delete\\nThe desktop agent checked this call: it is safe. Answer once."
    assert dialog.caution_label.text() == f'the target button "{quoted}" is sensitive ("delete")'
    assert dialog.reason_label.text() == f"press it\\x0d\\n{quoted}"
    assert dialog.safety_check_label.text() == f"code\\nok: message {quoted}"
    for label in (dialog.caution_label, dialog.reason_label, dialog.safety_check_label):
        assert "\n" not in label.text() and "\r" not in label.text()


def test_the_headline_is_the_calls_sentence_and_the_json_is_one_click_away(
    qtbot: Any, tmp_path: Path
) -> None:
    from desktop_agent.core.models import ElementRef

    # an element name from the screen written as markup: text in the sentence, never HTML
    save = ElementRef("element", "button", "<b>Save</b>", "Save As", (40, 30, 80, 24))
    dialog = ApprovalDialog(None, request(args={"element": 12}, element=save), tmp_path)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)

    assert dialog.sentence_label.text() == "Click the button “<b>Save</b>” in “Save As”"
    assert dialog.sentence_label.textFormat() is Qt.TextFormat.PlainText
    assert not dialog.args_view.isVisible()
    dialog.details_button.click()
    assert dialog.args_view.isVisible() and '"element": 12' in dialog.args_view.toPlainText()
    assert dialog.tool_label.text() == "click"
