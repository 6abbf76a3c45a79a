"""A first run in the app, without reading the docs: the model line tells the truth (no verdict
for a server that does not answer); Find model servers… lists the servers on this machine
(loopback servers that answer like Ollama, LM Studio and a plain OpenAI-compatible server, on
free ports) with the models that see marked, one click sets and saves the model, and a
first task is offered; with none, the ways to get one (copyable) and Check again; the first
approval explains Allow once."""

from __future__ import annotations

import socket
import tomllib
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QLabel, QTreeWidgetItem

from desktop_agent.core.models import Policy
from desktop_agent.settings import Settings
from desktop_agent.ui.approval import ApprovalDialog
from desktop_agent.ui.model_servers import ModelServersDialog
from desktop_agent.ui.settings_dialog import SettingsDialog
from tests.fakes import ALLOW_ALL, ScriptedPlanner, done, make_agent, tool
from tests.gui.fake_agent import drive, until
from tests.gui.test_app_wiring import build
from tests.gui.test_dialogs_settings import combo, line
from tests.support.model_server import ModelServer, serve_in_thread

pytestmark = [pytest.mark.gui]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Settings are saved here (DESKTOP_AGENT_HOME); a key in the environment must never
    reach a probe."""
    made = tmp_path / "home"
    made.mkdir()
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(made))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-reach-a-probe")
    return made


@pytest.fixture
def servers() -> Iterator[tuple[ModelServer, ModelServer, ModelServer]]:
    made = (
        ModelServer(
            ollama={"llama3.2:3b": ["completion"], "qwen2.5vl:7b": ["completion", "vision"]},
            models=("llama3.2:3b", "qwen2.5vl:7b"),
        ),
        ModelServer(
            lmstudio=[
                {"id": "qwen2.5-vl-7b-instruct", "type": "vlm"},
                {"id": "phi-3-mini", "type": "llm"},
            ],
            models=("qwen2.5-vl-7b-instruct", "phi-3-mini"),
        ),
        ModelServer(models=("mistral-7b-instruct",)),
    )
    with ExitStack() as stack:
        for server in made:
            stack.enter_context(serve_in_thread(server))
        yield made


def _agent(tmp_path: Path, base_url: str, ports: list[int], **options: Any) -> Any:
    """An agent over the fakes whose model checks are on (they ask the real servers)."""
    settings = Settings(base_url=base_url, model="qwen2.5vl", probe_ports=ports)
    agent = make_agent(tmp_path, settings=settings, **options)
    agent.check_model = True
    return agent


def _models(dialog: ModelServersDialog) -> dict[str, list[tuple[str, str, str]]]:
    tree = dialog.tree
    found: dict[str, list[tuple[str, str, str]]] = {}
    for row in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(row)
        assert top is not None
        children = [top.child(i) for i in range(top.childCount())]
        found[top.text(0)] = [(c.text(0), c.text(1), c.text(2)) for c in children if c]
    return found


def _item(dialog: ModelServersDialog, name: str) -> QTreeWidgetItem:
    items = dialog.tree.findItems(name, _exact_recursive())
    assert len(items) == 1, name
    return items[0]


async def showing(dialog: ModelServersDialog, page: Any) -> None:
    """Wait until the finder shows `page` (the look runs on the engine)."""
    await until(lambda: dialog.pages.currentWidget() is page, what=page.objectName() or "page")


async def open_finder(window: Any, open_it: Any) -> ModelServersDialog:
    open_it()
    dialog: ModelServersDialog = await until(
        lambda: window.findChild(ModelServersDialog), what="the finder"
    )
    return dialog


def _exact_recursive() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive


def test_a_server_that_does_not_answer_gets_a_way_forward_never_a_green_check(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    port = _closed_port()
    agent = _agent(tmp_path, f"http://127.0.0.1:{port}/v1", [_closed_port()])
    harness = build(qtbot, qloop, agent)
    panel = harness.window.panel
    asked: list[str] = []
    harness.window.find_servers_requested.connect(lambda: asked.append("find"))
    harness.window.settings_requested.connect(lambda: asked.append("settings"))
    try:
        # 'qwen2.5vl' is a known vision name: before, that gave "✓ can see" for no server
        assert panel.vision_label.property("vision") == "absent"
        text = panel.vision_label.text()
        assert "✓" not in text and "can see" not in text
        assert f"No model server at 127.0.0.1:{port}" in text
        assert "Find one…" in text and "Settings…" in text
        assert "not reachable: connection refused" in panel.vision_label.toolTip()

        async def click_the_links() -> None:
            panel.vision_label.linkActivated.emit("find")
            panel.vision_label.linkActivated.emit("settings")
            await until(lambda: harness.window.findChild(ModelServersDialog), what="the finder")
            await until(lambda: harness.window.findChild(SettingsDialog), what="the settings")

        drive(qloop, click_the_links())
        assert asked == ["find", "settings"]
    finally:
        drive(qloop, harness.close())


def test_a_server_that_answers_gets_its_verdict(qtbot: Any, qloop: Any, tmp_path: Path) -> None:
    ollama = ModelServer(ollama={"qwen2.5vl": ["completion", "vision"]})
    with serve_in_thread(ollama):
        agent = _agent(tmp_path, ollama.base_url, [_closed_port()])
        harness = build(qtbot, qloop, agent)
        try:
            label = harness.window.panel.vision_label
            assert label.property("vision") == "yes"
            assert label.text().startswith("✓ can see screenshots (Ollama lists")
        finally:
            drive(qloop, harness.close())


def test_the_finder_lists_the_servers_marks_those_that_see_and_one_click_sets_the_model(
    qtbot: Any, qloop: Any, tmp_path: Path, home: Path, servers: tuple[ModelServer, ...]
) -> None:
    ollama, lmstudio, plain = servers
    ports = [_closed_port(), *(server.port for server in servers)]
    agent = _agent(tmp_path, f"http://127.0.0.1:{_closed_port()}/v1", ports)
    harness = build(qtbot, qloop, agent)
    window = harness.window

    async def scenario() -> ModelServersDialog:
        dialog = await open_finder(window, window.menu_actions.find_servers.trigger)
        await showing(dialog, dialog.found_page)
        assert _models(dialog) == {
            f"Ollama — {ollama.base_url}": [
                ("qwen2.5vl:7b", "✓ sees", "qwen2.5-vl-ollama"),
                ("llama3.2:3b", "✗ no vision", "generic"),
            ],
            f"LM Studio — {lmstudio.base_url}": [
                ("qwen2.5-vl-7b-instruct", "✓ sees", "qwen2.5-vl"),
                ("phi-3-mini", "✗ no vision", "generic"),
            ],
            f"OpenAI-compatible server — {plain.base_url}": [
                ("mistral-7b-instruct", "? unknown", "generic"),
            ],
        }
        # the look sent no key (the model check after Use goes to the chosen server only)
        for server in servers:
            assert server.heard
            assert all(authorization is None for _, _, authorization in server.heard)
        # the first model that sees is ready to use
        selected = dialog.selected()
        assert selected is not None and selected[1].name == "qwen2.5vl:7b"
        assert dialog.use_button.isEnabled()
        dialog.tree.setCurrentItem(_item(dialog, "qwen2.5-vl-7b-instruct"))
        dialog.use_button.click()
        await showing(dialog, dialog.first_task_page)
        await until(lambda: window.panel.vision_label.property("vision") == "yes", what="yes")
        return dialog

    try:
        dialog = drive(qloop, scenario())
        saved = tomllib.loads((home / "settings.toml").read_text(encoding="utf-8"))
        assert (saved["provider"], saved["base_url"], saved["model"]) == (
            "lmstudio",
            lmstudio.base_url,
            "qwen2.5-vl-7b-instruct",
        )
        assert harness.client.host.settings.model == "qwen2.5-vl-7b-instruct"
        assert "qwen2.5-vl-7b-instruct" in window.panel.model_label.text()
        goal = dialog.first_task_goal.toPlainText()
        assert "Hello from Desktop Agent" in goal and "without saving" in goal
        page_text = " ".join(label.text() for label in dialog.first_task_page.findChildren(QLabel))
        assert "“Allow once” lets that one action run" in page_text
        dialog.try_button.click()
        assert window.panel.goal() == goal
        assert not dialog.isVisible()
    finally:
        drive(qloop, harness.close())
    for server in servers:
        assert not server.requests, "finding servers sends no chat request"


def test_with_no_server_the_ways_to_get_one_are_copyable_and_check_again_finds_one(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    later = _closed_port()
    agent = _agent(tmp_path, f"http://127.0.0.1:{_closed_port()}/v1", [later])
    harness = build(qtbot, qloop, agent)
    window = harness.window

    async def scenario() -> None:
        dialog = await open_finder(window, window.find_servers_requested.emit)
        await showing(dialog, dialog.none_page)
        assert not dialog.use_button.isVisible()
        dialog.copy_buttons["ollama pull qwen2.5vl"].click()
        assert QApplication.clipboard().text() == "ollama pull qwen2.5vl"
        assert "lms server start" in dialog.copy_buttons
        with serve_in_thread(
            ModelServer(ollama={"llava:7b": ["completion", "vision"]}, port=later)
        ):
            dialog.check_again_button.click()
            await showing(dialog, dialog.found_page)
            assert _item(dialog, "llava:7b").text(1) == "✓ sees"

    try:
        drive(qloop, scenario())
    finally:
        drive(qloop, harness.close())


def test_on_the_first_start_the_finder_opens_when_the_model_server_does_not_answer(
    qtbot: Any, qloop: Any, tmp_path: Path, home: Path
) -> None:
    agent = _agent(tmp_path, f"http://127.0.0.1:{_closed_port()}/v1", [_closed_port()])
    harness = build(qtbot, qloop, agent)
    try:
        drive(qloop, harness.app.servers.open_on_first_start())
        dialog = harness.window.findChild(ModelServersDialog)
        assert dialog is not None and dialog.isVisible()
        dialog.close_button.click()
        assert harness.app.servers.dialog is None
        (home / "settings.toml").write_text('model = "qwen2.5vl"\n', encoding="utf-8")
        drive(qloop, harness.app.servers.open_on_first_start())  # not the first start now
        assert harness.app.servers.dialog is None
    finally:
        drive(qloop, harness.close())


def test_the_first_start_asks_the_model_servers_once(
    qtbot: Any, qloop: Any, tmp_path: Path, home: Path
) -> None:
    """The window's check of the model, which looks for servers when the settings' one does
    not answer, is the start's one look: the first-start finder shows what it found (it asked
    again, and the finder a third time)."""
    ollama = ModelServer(
        ollama={"qwen2.5vl:7b": ["completion", "vision"]}, models=("qwen2.5vl:7b",)
    )
    with serve_in_thread(ollama):
        agent = _agent(tmp_path, f"http://127.0.0.1:{_closed_port()}/v1", [ollama.port])
        harness = build(qtbot, qloop, agent)
        try:
            drive(qloop, harness.app.servers.open_on_first_start())
            dialog = harness.window.findChild(ModelServersDialog)
            assert dialog is not None and dialog.isVisible()
            assert dialog.pages.currentWidget() is dialog.found_page
            assert _models(dialog) == {
                f"Ollama — {ollama.base_url}": [("qwen2.5vl:7b", "✓ sees", "qwen2.5-vl-ollama")]
            }
            looks = [path for _, path, _ in ollama.heard if path == "/api/tags"]
            assert looks == ["/api/tags"], ollama.heard
        finally:
            drive(qloop, harness.close())


def test_settings_find_model_servers_fills_the_model_fields(
    qtbot: Any, qloop: Any, tmp_path: Path, servers: tuple[ModelServer, ...]
) -> None:
    ollama = servers[0]
    agent = _agent(tmp_path, f"http://127.0.0.1:{_closed_port()}/v1", [ollama.port])
    harness = build(qtbot, qloop, agent)
    window = harness.window

    async def scenario() -> SettingsDialog:
        window.menu_actions.settings.trigger()
        settings: SettingsDialog = await until(
            lambda: window.findChild(SettingsDialog), what="settings"
        )
        assert settings.find_button.isVisible()
        vision = combo(settings, "vision")
        vision.setCurrentIndex(vision.findData("no"))
        settings.find_button.click()
        finder = await until(lambda: settings.findChild(ModelServersDialog), what="the finder")
        await showing(finder, finder.found_page)
        finder.use_button.click()  # the first that sees is selected: qwen2.5vl:7b
        await until(lambda: line(settings, "model").text() == "qwen2.5vl:7b", what="filled")
        return settings

    try:
        settings = drive(qloop, scenario())
        assert line(settings, "base_url").text() == ollama.base_url
        assert settings.provider_box.currentData() == "ollama"
        assert combo(settings, "vision").currentData() == "auto"
        candidate = settings.validate()
        assert candidate is not None and candidate.model == "qwen2.5vl:7b"
        settings.reject()
    finally:
        drive(qloop, harness.close())


def test_the_first_approval_explains_allow_once_and_the_next_does_not(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, policies={**ALLOW_ALL, "click": Policy.ASK})
    agent.planner_factory = lambda run: ScriptedPlanner(
        [tool("click", x=10, y=20), tool("click", x=30, y=40), done("pressed twice")]
    )
    harness = build(qtbot, qloop, agent)
    window = harness.window
    explained: list[tuple[bool, str]] = []

    async def answer_once() -> None:
        dialog = await until(
            lambda: next(
                (d for d in window.findChildren(ApprovalDialog) if d.decision is None), None
            ),
            what="an approval dialog",
        )
        explained.append((dialog.explanation.isVisible(), dialog.explanation.text()))
        await until(dialog.once_button.isEnabled, what="the dialog's Allow to wake")
        dialog.once_button.click()

    async def scenario() -> None:
        harness.start("press it twice")
        await answer_once()
        await answer_once()
        await harness.finished()

    try:
        drive(qloop, scenario())
    finally:
        drive(qloop, harness.close())
    (first_shown, first_text), (second_shown, _) = explained
    assert first_shown and not second_shown
    assert first_text.startswith(
        "Allow once: this one action runs now; the agent asks again before its next one."
    )
    assert "Allow for this run: click acts without asking until this run ends." in first_text


def test_a_model_the_server_does_not_have_gets_a_way_forward_never_a_green_check(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    # Ollama runs, but qwen2.5vl was never pulled: /api/show says 404, and the name alone
    # used to give "✓ can see screenshots"
    ollama = ModelServer(ollama={"llava:7b": ["completion", "vision"]}, models=("llava:7b",))
    with serve_in_thread(ollama):
        agent = _agent(tmp_path, ollama.base_url, [_closed_port()])
        harness = build(qtbot, qloop, agent)
        try:
            label = harness.window.panel.vision_label
            assert label.property("vision") == "missing"
            assert "✓" not in label.text()
            assert label.text().startswith(f"No model 'qwen2.5vl' at 127.0.0.1:{ollama.port} — ")
            assert "(it lists: llava:7b)" in label.toolTip()
        finally:
            drive(qloop, harness.close())
