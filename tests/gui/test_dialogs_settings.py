"""The settings dialog: inline validation, Save, presets, the connection test and the API key."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import keyring
import keyring.backends.fail
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox

from desktop_agent.core.models import Policy
from desktop_agent.settings import (
    KEYRING_SERVICE,
    KEYRING_USER,
    PRESETS,
    Settings,
    to_toml,
)
from desktop_agent.ui.settings_dialog import SettingsDialog
from tests.gui.test_dialogs_settings_profile import saved as saved_after_save_click
from tests.support.keyrings import MemoryKeyring
from tests.support.keyrings import memory_keyring as keyring_in_memory

pytestmark = [pytest.mark.gui]


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    with keyring_in_memory() as backend:
        yield backend


@pytest.fixture
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def make_dialog(qtbot: Any) -> Callable[..., SettingsDialog]:
    def make(settings: Settings | None = None, **kwargs: Any) -> SettingsDialog:
        dialog = SettingsDialog(None, settings or Settings(), **kwargs)
        qtbot.addWidget(dialog)
        return dialog

    return make


def line(dialog: SettingsDialog, name: str) -> QLineEdit:
    widget = dialog.fields[name]
    assert isinstance(widget, QLineEdit)
    return widget


def spin(dialog: SettingsDialog, name: str) -> QSpinBox:
    widget = dialog.fields[name]
    assert isinstance(widget, QSpinBox)
    return widget


def check(dialog: SettingsDialog, name: str) -> QCheckBox:
    widget = dialog.fields[name]
    assert isinstance(widget, QCheckBox)
    return widget


def combo(dialog: SettingsDialog, name: str) -> QComboBox:
    widget = dialog.fields[name]
    assert isinstance(widget, QComboBox)
    return widget


def inline_error(dialog: SettingsDialog, name: str) -> str:
    label = dialog.errors[name]
    return label.text() if not label.isHidden() else ""


def type_into(qtbot: Any, edit: QLineEdit, text: str) -> None:
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    if text:
        qtbot.keyClicks(edit, text)


# ── validation ──────────────────────────────────────────────────────────────


def test_defaults_are_valid_and_savable(make_dialog: Callable[..., SettingsDialog]) -> None:
    dialog = make_dialog()
    assert dialog.is_valid
    assert dialog.save_button.isEnabled()
    assert all(not inline_error(dialog, name) for name in dialog.errors)
    assert dialog.summary.isHidden()


def test_invalid_base_url_is_shown_inline_and_save_is_disabled(
    make_dialog: Callable[..., SettingsDialog], qtbot: Any
) -> None:
    dialog = make_dialog()
    type_into(qtbot, line(dialog, "base_url"), "htp:/nowhere")
    assert inline_error(dialog, "base_url") == "not a valid http(s) URL: 'htp:/nowhere'"
    assert not dialog.save_button.isEnabled()
    assert dialog.summary.text() == "Base URL: not a valid http(s) URL: 'htp:/nowhere'"
    type_into(qtbot, line(dialog, "base_url"), "http://127.0.0.1:8080/v1")
    assert inline_error(dialog, "base_url") == ""
    assert dialog.save_button.isEnabled()


def test_empty_model_is_shown_inline_and_save_is_disabled(
    make_dialog: Callable[..., SettingsDialog], qtbot: Any
) -> None:
    dialog = make_dialog()
    type_into(qtbot, line(dialog, "model"), "   ")
    assert inline_error(dialog, "model") == "must not be empty"
    assert not dialog.save_button.isEnabled()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("max_steps", 0, "greater than or equal to 1"),
        ("max_steps", 501, "less than or equal to 500"),
        ("max_failures", 51, "less than or equal to 50"),
        ("approval_timeout_s", 0, "greater than or equal to 1"),
        ("capture_width", 100, "greater than or equal to 320"),
    ],
)
def test_out_of_range_limits_are_shown_inline(
    make_dialog: Callable[..., SettingsDialog], name: str, value: int, message: str
) -> None:
    dialog = make_dialog()
    spin(dialog, name).setValue(value)
    assert message in inline_error(dialog, name)
    assert not dialog.save_button.isEnabled()
    assert all(not inline_error(dialog, other) for other in dialog.errors if other != name)


def test_several_bad_values_are_each_shown_and_all_listed(
    make_dialog: Callable[..., SettingsDialog], qtbot: Any
) -> None:
    dialog = make_dialog()
    type_into(qtbot, line(dialog, "model"), "")
    spin(dialog, "max_failures").setValue(0)
    type_into(qtbot, line(dialog, "stop_hotkey"), "ctrl+nosuchkey")
    assert inline_error(dialog, "model")
    assert inline_error(dialog, "max_failures")
    assert "nosuchkey" in inline_error(dialog, "stop_hotkey")
    assert len(dialog.summary.text().splitlines()) == 3
    assert not dialog.save_button.isEnabled()


def test_save_button_does_nothing_while_invalid(
    make_dialog: Callable[..., SettingsDialog], qtbot: Any
) -> None:
    dialog = make_dialog()
    spin(dialog, "max_steps").setValue(0)
    with qtbot.assertNotEmitted(dialog.saved, wait=0):
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        dialog.on_save_clicked()
    assert dialog.result_settings is None


# ── saving ──────────────────────────────────────────────────────────────────


def test_valid_changes_are_saved_through_the_saved_signal(
    make_dialog: Callable[..., SettingsDialog], qtbot: Any
) -> None:
    dialog = make_dialog(Settings(policies={"wait": Policy.ASK}))
    dialog.open()
    type_into(qtbot, line(dialog, "model"), "llava:13b")
    spin(dialog, "max_steps").setValue(40)
    spin(dialog, "max_failures").setValue(5)
    spin(dialog, "approval_timeout_s").setValue(90)
    combo(dialog, "vision").setCurrentIndex(combo(dialog, "vision").findData("yes"))
    combo(dialog, "capture_format").setCurrentIndex(1)
    spin(dialog, "capture_width").setValue(1024)
    type_into(qtbot, line(dialog, "stop_hotkey"), "ctrl+shift+escape")
    check(dialog, "minimize_while_acting").setChecked(False)
    dialog.policy_boxes["launch_app"].setCurrentIndex(2)  # deny
    dialog.policy_boxes["click"].setCurrentIndex(0)  # allow
    dialog.policy_boxes["wait"].setCurrentIndex(0)  # back to its default

    with qtbot.waitSignal(dialog.saved, timeout=1000) as saved:
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    new = saved.args[0]
    assert isinstance(new, Settings)
    assert (new.model, new.max_steps, new.max_failures, new.approval_timeout_s) == (
        "llava:13b",
        40,
        5,
        90,
    )
    assert (new.vision, new.capture_format, new.capture_width) == ("yes", "png", 1024)
    assert new.stop_hotkey == "ctrl+shift+esc"
    assert new.minimize_while_acting is False
    assert new.policies == {"launch_app": Policy.DENY, "click": Policy.ALLOW}
    assert new.base_url == Settings().base_url  # untouched fields keep their values
    assert dialog.result() == dialog.DialogCode.Accepted
    assert not dialog.isVisible()


def test_the_form_shows_the_settings_it_was_opened_with(
    make_dialog: Callable[..., SettingsDialog],
) -> None:
    settings = Settings(
        provider="openai",
        base_url="https://api.openai.com/v1",
        model="gpt-4.1-mini",
        max_steps=7,
        policies={"type_text": Policy.DENY},
        capture_format="png",
        minimize_while_acting=False,
    )
    dialog = make_dialog(settings)
    assert dialog.provider_box.currentData() == "openai"
    assert line(dialog, "model").text() == "gpt-4.1-mini"
    assert spin(dialog, "max_steps").value() == 7
    assert dialog.policy_boxes["type_text"].currentData() == "deny"
    assert dialog.policy_boxes["launch_app"].currentData() == "ask"  # a dangerous default
    assert combo(dialog, "capture_format").currentData() == "png"
    assert check(dialog, "minimize_while_acting").isChecked() is False
    assert "screen_snapshot" not in dialog.policy_boxes  # the loop's own tool is not offered


def test_the_tools_tab_says_a_policy_change_applies_to_the_next_run(
    make_dialog: Callable[..., SettingsDialog], qtbot: Any
) -> None:
    dialog = make_dialog()
    dialog.show()
    qtbot.waitExposed(dialog)
    tools = next(i for i in range(dialog.tabs.count()) if dialog.tabs.tabText(i) == "&Tools")
    dialog.tabs.setCurrentIndex(tools)

    note = dialog.next_run_note
    assert note.isVisible()
    assert note.text() == (
        "A change applies to the next run; a run going on keeps the policies it started with."
    )
    # beside the policies it is about
    tab = dialog.tabs.widget(tools)
    assert tab is not None
    assert note.window() is dialog and tab.isAncestorOf(note)
    assert tab.isAncestorOf(dialog.policy_boxes["launch_app"])


# ── presets ─────────────────────────────────────────────────────────────────


def test_choosing_a_preset_fills_the_base_url(
    make_dialog: Callable[..., SettingsDialog], qtbot: Any
) -> None:
    dialog = make_dialog()
    dialog.show()
    box = dialog.provider_box
    box.setFocus()
    while box.currentData() != "lmstudio":
        qtbot.keyClick(box, Qt.Key.Key_Down)  # the keyboard way: activated, like a click
    assert line(dialog, "base_url").text() == PRESETS["lmstudio"].base_url
    assert line(dialog, "model").text() == "qwen2.5vl"  # LM Studio names no model: kept
    assert "LM Studio" in dialog.provider_note.text()
    while box.currentData() != "openrouter":
        qtbot.keyClick(box, Qt.Key.Key_Down)
    assert line(dialog, "base_url").text() == "https://openrouter.ai/api/v1"
    assert line(dialog, "model").text() == PRESETS["openrouter"].model


@pytest.mark.parametrize(
    ("preset", "shown", "base_url", "model", "note"),
    [
        ("openai-computer", "OpenAI computer use", "https://api.openai.com/v1",
         "computer-use-preview", "computer tool"),
        ("anthropic-computer", "Anthropic computer use", "https://api.anthropic.com",
         "claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
    ],
)  # fmt: skip
def test_a_computer_use_preset_fills_its_model_and_asks_for_a_key(
    make_dialog: Callable[..., SettingsDialog],
    qtbot: Any,
    preset: str,
    shown: str,
    base_url: str,
    model: str,
    note: str,
) -> None:
    dialog = make_dialog()
    dialog.show()
    box = dialog.provider_box
    box.setFocus()
    while box.currentData() != preset:
        qtbot.keyClick(box, Qt.Key.Key_Down)
    assert box.currentText() == shown
    assert line(dialog, "base_url").text() == base_url
    assert line(dialog, "model").text() == model
    assert note in dialog.provider_note.text()
    assert dialog.api_key_edit.isVisible()


def test_typing_a_base_url_picks_its_preset_or_custom(
    make_dialog: Callable[..., SettingsDialog], qtbot: Any
) -> None:
    dialog = make_dialog()
    type_into(qtbot, line(dialog, "base_url"), "http://localhost:1234/v1/")
    assert dialog.provider_box.currentData() == "lmstudio"
    type_into(qtbot, line(dialog, "base_url"), "http://gpu-box:9000/v1")
    assert dialog.provider_box.currentData() == "custom"
    with qtbot.waitSignal(dialog.saved, timeout=1000) as saved:
        dialog.on_save_clicked()
    assert (saved.args[0].provider, saved.args[0].base_url) == ("custom", "http://gpu-box:9000/v1")


# ── test connection ─────────────────────────────────────────────────────────


def test_test_connection_runs_on_the_loop_and_shows_its_result(
    make_dialog: Callable[..., SettingsDialog], qloop: Any, qtbot: Any
) -> None:
    seen: list[Settings] = []
    answer: asyncio.Future[str] | None = None

    async def fake_test(settings: Settings) -> str:
        nonlocal answer
        seen.append(settings)
        answer = asyncio.get_running_loop().create_future()
        return await answer

    dialog = make_dialog(test_connection=fake_test)
    type_into(qtbot, line(dialog, "model"), "llava")

    async def scenario() -> None:
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        assert dialog.test_result.text() == "Testing…"
        assert not dialog.test_button.isEnabled()
        await until(lambda: answer is not None)
        assert answer is not None
        answer.set_result("reachable in 12 ms; llava can see (Ollama capabilities)")
        await until(lambda: dialog.test_button.isEnabled())

    qloop.run_until_complete(asyncio.wait_for(scenario(), 10))
    assert [s.model for s in seen] == ["llava"]  # the form's values, not the saved ones
    assert dialog.test_result.text() == "reachable in 12 ms; llava can see (Ollama capabilities)"


def test_a_failing_connection_test_shows_one_line(
    make_dialog: Callable[..., SettingsDialog], qloop: Any, qtbot: Any
) -> None:
    async def fake_test(settings: Settings) -> str:
        raise ConnectionRefusedError("connection refused: http://localhost:11434/v1\ntraceback…")

    dialog = make_dialog(test_connection=fake_test)

    async def scenario() -> None:
        dialog.test_button.click()
        await until(lambda: dialog.test_result.text() != "Testing…")

    qloop.run_until_complete(asyncio.wait_for(scenario(), 10))
    assert dialog.test_result.text() == "failed: connection refused: http://localhost:11434/v1"


def test_closing_the_dialog_cancels_a_running_connection_test(
    make_dialog: Callable[..., SettingsDialog], qloop: Any
) -> None:
    started: list[bool] = []
    cancelled: list[bool] = []

    async def slow_test(settings: Settings) -> str:
        started.append(True)
        try:
            await asyncio.get_running_loop().create_future()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    dialog = make_dialog(test_connection=slow_test)

    async def scenario() -> None:
        dialog.open()
        dialog.test_button.click()
        await until(lambda: started)
        dialog.reject()
        await until(lambda: cancelled)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 10))
    assert cancelled == [True]


def test_without_a_tester_there_is_no_test_button(
    make_dialog: Callable[..., SettingsDialog],
) -> None:
    assert make_dialog().test_button.isHidden()


def test_test_button_is_disabled_while_the_form_is_invalid(
    make_dialog: Callable[..., SettingsDialog], qtbot: Any
) -> None:
    async def fake_test(settings: Settings) -> str:
        return "ok"

    dialog = make_dialog(test_connection=fake_test)
    assert dialog.test_button.isEnabled()
    type_into(qtbot, line(dialog, "base_url"), "nope")
    assert not dialog.test_button.isEnabled()


async def until(predicate: Callable[[], object]) -> None:
    while not predicate():  # noqa: ASYNC110 - Qt state has no asyncio.Event to await
        await asyncio.sleep(0.002)


# ── API key ─────────────────────────────────────────────────────────────────


def test_api_key_is_stored_in_the_keyring_never_in_the_settings(
    make_dialog: Callable[..., SettingsDialog], qloop: Any, memory_keyring: MemoryKeyring
) -> None:
    dialog = make_dialog()
    assert dialog.api_key_edit.echoMode() == QLineEdit.EchoMode.Password
    dialog.api_key_edit.setText("sk-secret-123")
    new = saved_after_save_click(qloop, dialog)
    assert memory_keyring.passwords == {(KEYRING_SERVICE, KEYRING_USER): "sk-secret-123"}
    assert "sk-secret-123" not in new.model_dump_json()
    assert "sk-secret-123" not in to_toml(new)
    assert dialog.api_key_edit.text() == ""


def test_an_empty_key_field_keeps_the_stored_key(
    make_dialog: Callable[..., SettingsDialog], memory_keyring: MemoryKeyring
) -> None:
    memory_keyring.passwords[(KEYRING_SERVICE, KEYRING_USER)] = "sk-old"
    dialog = make_dialog()
    dialog.on_save_clicked()
    assert memory_keyring.passwords == {(KEYRING_SERVICE, KEYRING_USER): "sk-old"}


def test_the_keyring_is_written_off_the_gui_thread_and_save_waits_for_it(
    make_dialog: Callable[..., SettingsDialog], qloop: Any, memory_keyring: MemoryKeyring
) -> None:
    import threading

    writers: list[threading.Thread] = []
    store = memory_keyring.set_password

    def recording(service: str, username: str, password: str) -> None:
        writers.append(threading.current_thread())
        store(service, username, password)

    memory_keyring.set_password = recording  # type: ignore[method-assign]
    dialog = make_dialog()
    dialog.api_key_edit.setText("sk-secret-123")
    got: list[Settings] = []
    dialog.saved.connect(got.append)

    async def scenario() -> None:
        dialog.on_save_clicked()
        assert got == [] and not dialog.save_button.isEnabled()  # storing the key meanwhile
        while not got:  # noqa: ASYNC110 - the signal, delivered on the loop's thread
            await asyncio.sleep(0.005)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 10))
    assert len(writers) == 1 and writers[0] is not threading.main_thread()
    assert dialog.key_note.text() == "The API key is stored in the OS keyring."


def test_without_a_keyring_the_dialog_says_so_and_that_the_env_var_is_used(
    make_dialog: Callable[..., SettingsDialog], qloop: Any, no_keyring: None
) -> None:
    dialog = make_dialog()
    dialog.open()
    dialog.api_key_edit.setText("sk-secret-123")
    saved_after_save_click(qloop, dialog)
    note = dialog.key_note.text()
    assert "no OS keyring is available" in note
    assert note.endswith("The API key comes from $OPENAI_API_KEY.")
    assert dialog.isVisible()  # stays open so the message is read; the settings were saved
    assert dialog.api_key_edit.text() == ""
