"""The settings dialog: model server, API key, limits, tool policies, hotkey and capture."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal, Slot
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from desktop_agent.core.errors import ConfigError, StopRequested
from desktop_agent.core.models import Policy, Risk
from desktop_agent.core.permissions import DEFAULT_POLICY
from desktop_agent.settings import (
    CUSTOM_PROVIDER,
    PRESETS,
    Settings,
    provider_for_server,
    set_api_key,
    validation_messages,
)
from desktop_agent.ui.i18n import LANGUAGES
from desktop_agent.ui.text import one_line, plain_label, plain_tooltip

log = logging.getLogger(__name__)

TestConnection = Callable[[Settings], Awaitable[str]]
#: runs a calibration for these settings; the coordinate space it suggests saving, or None
Calibrate = Callable[[Settings], Awaitable[str | None]]
#: opens a finder of the model servers on this machine over the dialog; the (server,
#: model) chosen there (core.model_servers.FoundServer / FoundModel), or None
FindServers = Callable[[QWidget], Awaitable[Any]]
#: (name, note) of a model profile (the host's `model_profiles()`)
ProfileChoice = tuple[str, str]
# the tables' texts are marked for lupdate here and translated where shown
_COORDINATES = (
    ("auto", str(QT_TRANSLATE_NOOP("SettingsDialog", "As the profile says"))),
    ("pixels", str(QT_TRANSLATE_NOOP("SettingsDialog", "Screenshot pixels"))),
    ("normalized", str(QT_TRANSLATE_NOOP("SettingsDialog", "0–1000"))),
    ("resized", str(QT_TRANSLATE_NOOP("SettingsDialog", "Pixels of the model's resized image"))),
)

#: spin boxes take any number: the Settings model says what is in range, inline
_SPIN_MAX = 1_000_000
_ERROR_STYLE = "color: #c62828;"
_RISK_NOTE = {
    Risk.SAFE: str(QT_TRANSLATE_NOOP("SettingsDialog", "safe")),
    Risk.INPUT: str(QT_TRANSLATE_NOOP("SettingsDialog", "uses mouse or keyboard")),
    Risk.DANGEROUS: str(QT_TRANSLATE_NOOP("SettingsDialog", "dangerous: asks at every call")),
}


_POLICY_NAMES = {
    Policy.ALLOW: str(QT_TRANSLATE_NOOP("SettingsDialog", "Allow")),
    Policy.ASK: str(QT_TRANSLATE_NOOP("SettingsDialog", "Ask")),
    Policy.DENY: str(QT_TRANSLATE_NOOP("SettingsDialog", "Deny")),
}
_GROUNDING = (
    ("auto", str(QT_TRANSLATE_NOOP("SettingsDialog", "Auto (the model profile's default)"))),
    ("off", str(QT_TRANSLATE_NOOP("SettingsDialog", "Off: click where the model says"))),
    (
        "zoom",
        str(
            QT_TRANSLATE_NOOP(
                "SettingsDialog", "Zoom: ask the model again on a crop around its point"
            )
        ),
    ),
    (
        "grounder",
        str(
            QT_TRANSLATE_NOOP("SettingsDialog", "Grounding model: it finds the target, then zooms")
        ),
    ),
)


class SettingsDialog(QDialog):
    """Edits a copy of the Settings; every change is validated through the Settings model.

    Invalid values are shown under their field (and listed at the bottom) and Save is
    disabled while any is. Save stores a typed API key in the OS keyring (never in the
    settings file) and emits `saved`; the owner writes the file and applies the settings.
    Open it with open(), never exec() (asyncio runs on the Qt loop). The model profiles
    offered are `profiles` (the host's `model_profiles()`); the settings' own choice is
    kept when it is not among them.

    Signals:
        saved(Settings): the new, valid settings, emitted when Save is pressed.

    Attributes:
        settings: the settings the dialog was opened with (unchanged by the dialog).
        result_settings: the settings last saved, else None.
        fields: the editor widget of each setting, by setting name.
        errors: the inline error label of each setting, by setting name.
        policy_boxes: the allow / ask / deny box of each offered built-in tool.
        next_run_note: says that a policy change applies to the next run, not one going on.
        save_button, test_button: Save, and Test connection (hidden without a tester).
        test_result: the one-line result of the last connection test.
        calibrate_button, calibrate_result: Calibrate… (hidden without a calibrator), and
            what the last calibration found.
        key_note: what happened to the API key (stored, or no keyring and the env var used).
        summary: every invalid value, one per line.
    """

    saved = Signal(Settings)

    def __init__(
        self,
        parent: QWidget | None,
        settings: Settings,
        *,
        test_connection: TestConnection | None = None,
        calibrate: Calibrate | None = None,
        find_servers: FindServers | None = None,
        profiles: Sequence[ProfileChoice] = (),
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self._profiles = tuple(profiles)
        self._find_servers = find_servers
        self._find_task: asyncio.Task[None] | None = None
        self.result_settings: Settings | None = None
        self._test_connection = test_connection
        self._calibrate = calibrate
        self._calibrate_task: asyncio.Task[str | None] | None = None
        self._test_task: asyncio.Task[str] | None = None
        self._save_task: asyncio.Task[None] | None = None
        self._candidate: Settings | None = settings
        self.fields: dict[str, QWidget] = {}
        self.errors: dict[str, QLabel] = {}
        self._titles: dict[str, str] = {"policies": self.tr("Tool policies")}
        self.setWindowTitle(self.tr("Desktop Agent — settings"))
        self.setObjectName("SettingsDialog")

        tabs = QTabWidget(self)
        tabs.addTab(self._model_tab(), self.tr("&Model"))
        tabs.addTab(self._grounding_tab(), self.tr("&Grounding"))
        tabs.addTab(self._limits_tab(), self.tr("&Limits"))
        tabs.addTab(self._tools_tab(), self.tr("&Tools"))
        tabs.addTab(self._desktop_tab(), self.tr("&Desktop"))
        from desktop_agent.ui.routines import RoutineGrantsPage

        self.routine_grants = RoutineGrantsPage()  # filled by the owner (it reads the store)
        tabs.addTab(self.routine_grants, self.tr("&Routines"))
        self.tabs = tabs

        self.summary = plain_label("", self)
        self.summary.setStyleSheet(_ERROR_STYLE)
        self.summary.setWordWrap(True)
        self.summary.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        assert save is not None
        self.save_button = save
        layout = QVBoxLayout(self)
        layout.addWidget(tabs)
        layout.addWidget(self.summary)
        layout.addWidget(self.buttons)
        self.resize(560, 520)
        self._load(settings)
        self._connect_signals()
        self.validate()

    # ── building ─────────────────────────────────────────────────────────────

    def _row(self, form: QFormLayout, name: str, label: str, widget: QWidget) -> None:
        self.fields[name] = widget
        self._titles[name] = label.replace("&", "").rstrip(":")
        title = QLabel(label)
        title.setBuddy(widget)
        error = plain_label()
        error.setObjectName(f"error_{name}")
        error.setStyleSheet(_ERROR_STYLE)
        error.setWordWrap(True)
        error.hide()
        self.errors[name] = error
        column = QVBoxLayout()
        column.setSpacing(2)
        column.addWidget(widget)
        column.addWidget(error)
        form.addRow(title, column)

    def _model_tab(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.provider_box = QComboBox()
        for key, preset in PRESETS.items():
            self.provider_box.addItem(preset.label, key)
        self.provider_box.addItem(self.tr("Custom"), CUSTOM_PROVIDER)
        self._row(form, "provider", self.tr("&Provider:"), self.provider_box)
        self.provider_note = plain_label()
        self.provider_note.setWordWrap(True)
        form.addRow("", self.provider_note)
        self._row(form, "base_url", self.tr("&Base URL:"), QLineEdit())
        self._row(form, "model", self.tr("M&odel:"), QLineEdit())
        self.api_key_edit = QLineEdit()
        self.api_key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key_edit.setPlaceholderText(self.tr("leave empty to keep the stored key"))
        self.api_key_edit.setAccessibleName(self.tr("API key"))
        title = QLabel(self.tr("API &key:"))
        title.setBuddy(self.api_key_edit)
        self.key_note = plain_label(self.tr("Kept in the OS keyring, never in the settings file."))
        self.key_note.setWordWrap(True)
        key_column = QVBoxLayout()
        key_column.setSpacing(2)
        key_column.addWidget(self.api_key_edit)
        key_column.addWidget(self.key_note)
        form.addRow(title, key_column)
        self._row(form, "api_key_env", self.tr("Key &variable:"), QLineEdit())
        vision = QComboBox()
        for value, text in (("auto", "Auto-detect"), ("yes", "Yes"), ("no", "No")):
            vision.addItem(text, value)
        self._row(form, "vision", self.tr("Model can &see:"), vision)
        self.test_button = QPushButton(self.tr("Test co&nnection"))
        self.test_result = plain_label()
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        form.addRow("", test_row)
        self.test_button.setVisible(self._test_connection is not None)
        self.find_button = QPushButton(self.tr("&Find model servers…"))
        self.find_button.setToolTip(
            self.tr(
                "Look for model servers on this computer (Ollama, LM Studio, llama.cpp, vLLM, "
                "Jan, LocalAI) and pick a model"
            )
        )
        self.find_button.setVisible(self._find_servers is not None)
        find_row = QHBoxLayout()
        find_row.addWidget(self.find_button)
        find_row.addStretch(1)
        form.addRow("", find_row)
        self._model_profile_rows(form)
        return page

    def _model_profile_rows(self, form: QFormLayout) -> None:
        """The model family's profile, its coordinate space, and Calibrate…"""
        self._row(
            form, "model_profile", self.tr("Model pro&file:"), self._profile_box("model_profile")
        )
        coordinates = QComboBox()
        for value, text in _COORDINATES:
            coordinates.addItem(self.tr(text), value)
        self._row(form, "model_coordinates", self.tr("Model coor&dinates:"), coordinates)
        self.calibrate_button = QPushButton(self.tr("Cal&ibrate…"))
        self.calibrate_button.setToolTip(
            self.tr(
                "Shows targets on the screen and asks the model to click each: finds the "
                "coordinates the model answers in"
            )
        )
        self.calibrate_result = plain_label()
        self.calibrate_result.setWordWrap(True)
        calibrate_row = QHBoxLayout()
        calibrate_row.addWidget(self.calibrate_button)
        calibrate_row.addWidget(self.calibrate_result, 1)
        form.addRow("", calibrate_row)
        self.calibrate_button.setVisible(self._calibrate is not None)

    def _profile_box(self, setting: str) -> QComboBox:
        """Auto and every profile offered; the settings' own choice too, if not offered."""
        box = QComboBox()
        box.addItem(self.tr("Auto (by the model name)"), "auto")
        for name, note in self._profiles:
            box.addItem(f"{name} — {note}", name)
        current = getattr(self.settings, setting)
        if box.findData(current) < 0:
            box.addItem(current, current)
        return box

    def _grounding_tab(self) -> QWidget:
        """How a click by coordinates finds its point (docs/planner.md "Grounding")."""
        page = QWidget()
        form = QFormLayout(page)
        mode = QComboBox()
        for value, text in _GROUNDING:
            mode.addItem(self.tr(text), value)
        self._row(form, "grounding", self.tr("&Refine clicks:"), mode)
        url = QLineEdit()
        url.setPlaceholderText(self.tr("empty: the model's server"))
        self._row(form, "grounder_base_url", self.tr("Grounding model's &URL:"), url)
        name = QLineEdit()
        name.setPlaceholderText(
            self.tr("e.g. Salesforce/GTA1-7B, Hcompany/Holo2-8B, ui-tars-1.5-7b")
        )
        self._row(form, "grounder_model", self.tr("Grounding &model:"), name)
        profile = self._profile_box("grounder_profile")
        self._row(form, "grounder_profile", self.tr("Grounding model's pro&file:"), profile)
        zoom = QCheckBox(self.tr("Then look again on a crop around its point"))
        self._row(form, "grounder_zoom", self.tr("&Zoom:"), zoom)
        marks = QCheckBox(self.tr("Draw the element list's boxes and ids on the screenshot"))
        self._row(form, "set_of_mark", self.tr("&Set-of-mark:"), marks)
        return page

    def _spin(self, suffix: str = "") -> QSpinBox:
        box = QSpinBox()
        box.setRange(0, _SPIN_MAX)
        box.setSuffix(suffix)
        return box

    def _limits_tab(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self._row(form, "max_steps", self.tr("Max &steps per run:"), self._spin())
        self._row(form, "max_failures", self.tr("Max consecutive &failures:"), self._spin())
        self._row(form, "approval_timeout_s", self.tr("&Approval timeout:"), self._spin(" s"))
        self._row(form, "read_timeout_s", self.tr("Model &reply timeout:"), self._spin(" s"))
        return page

    def _tools_tab(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        intro = QLabel(self.tr("Allow runs a tool without asking; Ask opens the approval dialog."))
        intro.setWordWrap(True)
        form.addRow(intro)
        # a run's permissions are frozen at its start (the agent must not widen its own)
        self.next_run_note = QLabel(
            self.tr(
                "A change applies to the next run; a run going on keeps the policies it "
                "started with."
            )
        )
        self.next_run_note.setWordWrap(True)
        form.addRow(self.next_run_note)
        self.policy_boxes: dict[str, QComboBox] = {}
        for spec in BUILTIN_TOOLS:
            if not spec.offered:
                continue
            box = QComboBox()
            for policy in Policy:
                box.addItem(self.tr(_POLICY_NAMES[policy]), policy.value)
            risk = self.tr(_RISK_NOTE[spec.risk])
            box.setToolTip(plain_tooltip(f"{spec.description} ({risk})") or "")
            box.setAccessibleName(self.tr("policy of {tool}").format(tool=spec.name))
            self.policy_boxes[spec.name] = box
            label = QLabel(f"{spec.name}:")
            label.setBuddy(box)
            form.addRow(label, box)
        error = plain_label()
        error.setStyleSheet(_ERROR_STYLE)
        error.setWordWrap(True)
        error.hide()
        self.errors["policies"] = error
        form.addRow(error)
        return page

    def _desktop_tab(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        hotkey = QLineEdit()
        hotkey.setPlaceholderText(self.tr("e.g. ctrl+alt+esc"))
        self._row(form, "stop_hotkey", self.tr("Stop &hotkey:"), hotkey)
        self._row(form, "capture_width", self.tr("Screenshot &width:"), self._spin(" px"))
        fmt = QComboBox()
        fmt.addItem(self.tr("JPEG (small, fast)"), "jpeg")
        fmt.addItem(self.tr("PNG (exact, larger)"), "png")
        self._row(form, "capture_format", self.tr("Screenshot &format:"), fmt)
        monitor = QComboBox()
        monitor.addItem(self.tr("The active window's (auto)"), "auto")
        monitor.addItem(self.tr("All monitors as one image"), "all")
        monitor.addItem(self.tr("The primary monitor"), 1)
        for number in range(2, 5):
            monitor.addItem(self.tr("Monitor {number}").format(number=number), number)
        self._row(form, "monitor", self.tr("&Monitor shown:"), monitor)
        minimize = QCheckBox(self.tr("Minimise the window while a run acts"))
        self._row(form, "minimize_while_acting", self.tr("While &acting:"), minimize)
        language = QComboBox()
        language.addItem(self.tr("System language"), "system")
        for code, name in LANGUAGES.items():
            language.addItem(name, code)  # each language in its own words
        language.setToolTip(self.tr("Takes effect when the app starts again"))
        self._row(form, "language", self.tr("&Language:"), language)
        return page

    def _connect_signals(self) -> None:
        self.provider_box.activated.connect(self.on_provider_chosen)
        base_url = self.fields["base_url"]
        assert isinstance(base_url, QLineEdit)
        base_url.textEdited.connect(self.on_base_url_edited)
        for widget in [*self.fields.values(), *self.policy_boxes.values()]:
            if isinstance(widget, QLineEdit):
                widget.textChanged.connect(self.validate)
            elif isinstance(widget, QSpinBox):
                widget.valueChanged.connect(self.validate)
            elif isinstance(widget, QComboBox):
                widget.currentIndexChanged.connect(self.validate)
            elif isinstance(widget, QCheckBox):
                widget.toggled.connect(self.validate)
        self.test_button.clicked.connect(self.on_test_clicked)
        self.find_button.clicked.connect(self.on_find_clicked)
        self.calibrate_button.clicked.connect(self.on_calibrate_clicked)
        self.buttons.accepted.connect(self.on_save_clicked)
        self.buttons.rejected.connect(self.reject)

    # ── form ↔ settings ──────────────────────────────────────────────────────

    def _load(self, settings: Settings) -> None:
        data = settings.model_dump(mode="json")
        for name, widget in self.fields.items():
            value = data[name]
            if isinstance(widget, QLineEdit):
                widget.setText(str(value))
            elif isinstance(widget, QSpinBox):
                widget.setValue(round(value))
            elif isinstance(widget, QComboBox):
                widget.setCurrentIndex(max(0, widget.findData(value)))
            elif isinstance(widget, QCheckBox):
                widget.setChecked(bool(value))
        for tool, box in self.policy_boxes.items():
            box.setCurrentIndex(box.findData(self._policy_of(settings, tool).value))
        self._show_preset_note()

    @staticmethod
    def _policy_of(settings: Settings, tool: str) -> Policy:
        spec = next(spec for spec in BUILTIN_TOOLS if spec.name == tool)
        return settings.policies.get(tool, DEFAULT_POLICY[spec.risk])

    def form_data(self) -> dict[str, Any]:
        """The settings as the form has them (not validated); fields not shown are kept."""
        data: dict[str, Any] = self.settings.model_dump(mode="json")
        for name, widget in self.fields.items():
            if isinstance(widget, QLineEdit):
                data[name] = widget.text()
            elif isinstance(widget, QSpinBox):
                data[name] = widget.value()
            elif isinstance(widget, QComboBox):
                data[name] = widget.currentData()
            elif isinstance(widget, QCheckBox):
                data[name] = widget.isChecked()
        policies = dict(data.get("policies", {}))
        for spec in BUILTIN_TOOLS:
            box = self.policy_boxes.get(spec.name)
            if box is None:
                continue
            chosen = box.currentData()
            if chosen == DEFAULT_POLICY[spec.risk].value:
                policies.pop(spec.name, None)  # the default: keep the file short
            else:
                policies[spec.name] = chosen
        data["policies"] = policies
        return data

    def validate(self) -> Settings | None:
        """Validate the form; show each bad value inline; the settings when all are good."""
        try:
            candidate: Settings | None = Settings.model_validate(self.form_data())
            problems: dict[str, str] = {}
            lines: list[str] = []
        except ValidationError as error:
            candidate = None
            lines = []
            problems = {}
            for item, line in zip(
                error.errors(include_url=False), validation_messages(error), strict=True
            ):
                name = str(item["loc"][0]) if item["loc"] else ""
                message = line.split(": ", 1)[1] if ": " in line else line
                problems.setdefault(name, message)
                lines.append(f"{self._titles.get(name, name)}: {message}")
        for name, label in self.errors.items():
            label.setText(problems.get(name, ""))
            label.setVisible(name in problems)
        self.summary.setText("\n".join(lines))
        self.summary.setVisible(bool(lines))
        self._candidate = candidate
        self.save_button.setEnabled(candidate is not None and not self._saving)
        testing = self._test_task is not None and not self._test_task.done()
        self.test_button.setEnabled(candidate is not None and not testing)
        calibrating = self._calibrate_task is not None and not self._calibrate_task.done()
        self.calibrate_button.setEnabled(candidate is not None and not calibrating)
        return candidate

    @property
    def is_valid(self) -> bool:
        return self._candidate is not None

    # ── slots ────────────────────────────────────────────────────────────────

    @Slot(int)
    def on_provider_chosen(self, index: int) -> None:
        preset = PRESETS.get(self.provider_box.itemData(index))
        if preset is not None:
            base_url = self.fields["base_url"]
            model = self.fields["model"]
            assert isinstance(base_url, QLineEdit) and isinstance(model, QLineEdit)
            base_url.setText(preset.base_url)
            if preset.model:
                model.setText(preset.model)
        self._show_preset_note()
        self.validate()

    @Slot(str)
    def on_base_url_edited(self, text: str) -> None:
        """A URL typed by hand selects the preset it belongs to, else Custom."""
        wanted = text.strip().rstrip("/")
        key = next((k for k, p in PRESETS.items() if p.base_url == wanted), CUSTOM_PROVIDER)
        self.provider_box.setCurrentIndex(self.provider_box.findData(key))
        self._show_preset_note()

    @Slot()
    def on_test_clicked(self) -> None:
        candidate = self.validate()
        if candidate is None or self._test_connection is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.test_result.setText(
                self.tr("cannot test here: asyncio is not running on the Qt loop")
            )
            return
        self.test_result.setText(self.tr("Testing…"))
        self.test_button.setEnabled(False)
        # asked here, at the click: a stop from now on stops it (SettingsController)
        testing = self._test_connection(candidate)
        self._test_task = loop.create_task(self._run_test(testing))

    async def _run_test(self, testing: Awaitable[str]) -> str:
        try:
            result = await testing
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure is the test's one-line answer
            log.info("connection test failed: %s", error, exc_info=True)
            result = f"failed: {str(error).splitlines()[0] if str(error) else type(error).__name__}"
        self.test_result.setText(one_line(result))
        self._test_task = None
        self.validate()
        return result

    @Slot()
    def on_find_clicked(self) -> None:
        if self._find_servers is None or (self._find_task and not self._find_task.done()):
            return
        # asked here, at the click: a stop from now on gives the look up
        finding = self._find_servers(self)
        self._find_task = asyncio.get_running_loop().create_task(self._find(finding))

    async def _find(self, finding: Awaitable[Any]) -> None:
        choice = await finding
        if choice is not None:
            server, model = choice
            self.use_model_server(server.kind, server.base_url, model.name)

    def use_model_server(self, kind: str, base_url: str, model: str) -> None:
        """Fill the form with a model found on this machine (saved with Save); vision,
        profile and coordinates back to auto: they were for the previous model."""
        self.provider_box.setCurrentIndex(self.provider_box.findData(provider_for_server(kind)))
        self._show_preset_note()
        for name, value in (("base_url", base_url), ("model", model)):
            field = self.fields[name]
            assert isinstance(field, QLineEdit)
            field.setText(value)
        for name in ("vision", "model_profile", "model_coordinates"):
            box = self.fields[name]
            assert isinstance(box, QComboBox)
            box.setCurrentIndex(max(0, box.findData("auto")))
        self.validate()

    @Slot()
    def on_calibrate_clicked(self) -> None:
        candidate = self.validate()
        if candidate is None or self._calibrate is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.calibrate_result.setText(self.tr("cannot calibrate here: asyncio is not running"))
            return
        self.calibrate_result.setText(self.tr("Calibrating…"))
        self.calibrate_button.setEnabled(False)
        self._calibrate_task = loop.create_task(self._run_calibration(self._calibrate, candidate))

    async def _run_calibration(self, calibrate: Calibrate, settings: Settings) -> str | None:
        try:
            space = await calibrate(settings)
        except asyncio.CancelledError:
            raise
        except StopRequested:
            self.calibrate_result.setText(self.tr("calibration stopped"))
            space = None
        except Exception as error:  # noqa: BLE001 - any failure is the one-line answer
            log.info("calibration failed: %s", error, exc_info=True)
            self.calibrate_result.setText(self.tr("failed: {error}").format(error=one_line(error)))
            space = None
        else:
            box = self.fields["model_coordinates"]
            assert isinstance(box, QComboBox)
            if space is not None:
                # the finding goes into the form; Save writes it
                box.setCurrentIndex(max(0, box.findData(space)))
                self.calibrate_result.setText(
                    self.tr("the model answers in {space} coordinates").format(space=space)
                )
            else:
                self.calibrate_result.setText(self.tr("calibration done; nothing to change"))
        self._calibrate_task = None
        self.validate()
        return space

    @Slot()
    def on_save_clicked(self) -> None:
        candidate = self.validate()
        if candidate is None or self._saving:
            return
        key = self.api_key_edit.text().strip()
        if not key:
            self._finish_save(candidate, key_ok=True)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.key_note.setText(
                self.tr("cannot store the key: asyncio is not running on the Qt loop")
            )
            return
        # the keyring is a D-Bus round trip that may wait for an unlock prompt: off the GUI thread
        self.key_note.setText(self.tr("Storing the API key in the OS keyring…"))
        self.key_note.setStyleSheet("")
        self._save_task = loop.create_task(self._store_key_then_save(candidate, key))
        self.validate()

    # ── internals ─────────────────────────────────────────────────────────────

    @property
    def _saving(self) -> bool:
        return self._save_task is not None and not self._save_task.done()

    async def _store_key_then_save(self, settings: Settings, key: str) -> None:
        try:
            await asyncio.to_thread(set_api_key, key)
        except Exception as error:  # noqa: BLE001 - ConfigError, or a keyring backend's own
            if not isinstance(error, ConfigError):
                log.exception("storing the API key failed")
            where = f"The API key comes from ${settings.api_key_env}."
            self.key_note.setText(f"{one_line(error)}. {where}")
            self.key_note.setStyleSheet(_ERROR_STYLE)
            key_ok = False
        else:
            self.key_note.setText(self.tr("The API key is stored in the OS keyring."))
            key_ok = True
        self.api_key_edit.clear()
        self._save_task = None
        self._finish_save(settings, key_ok=key_ok)

    def _finish_save(self, settings: Settings, *, key_ok: bool) -> None:
        self.result_settings = settings
        self.saved.emit(settings)
        self.validate()
        if key_ok:
            self.accept()
        else:
            # settings are saved; stay open so the keyring message is read
            cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
            if cancel is not None:
                cancel.setText(self.tr("Close"))

    def _show_preset_note(self) -> None:
        preset = PRESETS.get(self.provider_box.currentData())
        self.provider_note.setText(
            preset.note if preset else self.tr("Any OpenAI-compatible server.")
        )

    def _cancel_test(self) -> None:
        # a save under way is left to finish: the key may be stored already
        if self._test_task is not None and not self._test_task.done():
            self._test_task.cancel()
        self._test_task = None
        if self._calibrate_task is not None and not self._calibrate_task.done():
            self._calibrate_task.cancel()
        self._calibrate_task = None
        if self._find_task is not None and not self._find_task.done():
            self._find_task.cancel()
        self._find_task = None

    def done(self, result: int) -> None:
        self._cancel_test()
        super().done(result)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self._cancel_test()
        super().closeEvent(event)
