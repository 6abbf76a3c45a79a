"""The command line in the person's language (issue 35 item 4): its lines, the terminal
question, its errors and argparse's help through the app's .qm catalogue, read without Qt."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import os
import re
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from desktop_agent.cli.gate import MIN_ANSWER_S, TerminalGate
from desktop_agent.cli.output import human, padded
from desktop_agent.cli.words import speaking, tr
from desktop_agent.core.events import RunFinished, StepFinished
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    ElementRef,
    Risk,
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from translations import CLI_SOURCES, argparse_texts, cli_texts  # noqa: E402

TS = ROOT / "resources" / "i18n" / "desktop_agent_zh_CN.ts"
NOTES = ElementRef("focus", "edit", "", "notes.txt — L3afpad", (0, 40, 800, 500))


def ts_messages(context: str) -> dict[str, ET.Element]:
    for found in ET.parse(TS).getroot().iter("context"):
        if found.findtext("name") == context:
            return {m.findtext("source") or "": m for m in found.iter("message")}
    return {}


# ── what is printed ─────────────────────────────────────────────────────────


def test_a_run_line_speaks_chinese() -> None:
    row = StepView(
        "r1", 4, 2, StepKind.ACTION, StepStatus.OK, datetime(2026, 1, 1, tzinfo=UTC),
        tool="hotkey", args={"keys": ["ctrl", "s"]}, summary="pressed ctrl+s",
        duration_ms=12.0, element=NOTES,
    )  # fmt: skip
    with speaking("zh_CN"):
        line = human(StepFinished(row))
    # the columns still line up: a Chinese character takes two
    assert line == (
        "   2 操作    成功     12 毫秒  在“notes.txt — L3afpad”中按 Ctrl+S: pressed ctrl+s"
    ).replace(": ", "：")
    # outside it, and for English, the line is as it was
    assert human(StepFinished(row)) == (
        "   2 action  ok         12 ms  Press Ctrl+S in “notes.txt — L3afpad”: pressed ctrl+s"
    )


def test_the_run_summary_speaks_chinese() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    run = RunView(
        "r1", "save the notes", RunStatus.STOPPED, StopReason.USER_STOP, 2, 10, 3, (), "m",
        "http://127.0.0.1:1/v1", at, at, at,
    )  # fmt: skip
    with speaking("zh_CN"):
        line = human(RunFinished(run))
    assert line.startswith("运行 r1 已停止 / 用户停止，共 2 轮，用时 0.0 秒；0 + 0 个 token，")


def test_text_from_outside_is_never_read_as_a_template() -> None:
    with speaking("zh_CN"):
        assert tr("the goal is empty") == "目标为空"
        assert tr("reason: {reason}", reason="{reason} {0} %s") == "理由：{reason} {0} %s"


def test_the_doctors_servers_and_ways_to_get_one_speak_chinese(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from desktop_agent.cli.commands import _print_servers_found
    from desktop_agent.core.model_servers import Discovery, FoundModel, FoundServer

    model = FoundModel("llama3", False, "ollama", "no vision", "generic")
    server = FoundServer("ollama", "Ollama", "http://127.0.0.1:11434/v1", (model,))
    with speaking("zh_CN"):
        _print_servers_found(Discovery((server,), (11434,)))
    said = capsys.readouterr().out
    assert "  Ollama，位于 http://127.0.0.1:11434/v1：1 个对话模型\n" in said
    assert "不能看图" in said and "配置 generic" in said
    assert "  Ollama —— 在本机运行，免费：" in said
    assert "获取模型服务器的方法：" in said


def test_padding_counts_a_chinese_character_as_two_columns() -> None:
    assert padded("成功", 7) == "成功   "
    assert padded("ok", 7, right=True) == "     ok"


def approval() -> ApprovalRequest:
    return ApprovalRequest(
        "a1", "r1", 1, "type_text", {"text": "Hello"}, "to say hello", Risk.INPUT, True, 30.0,
        element=NOTES,
    )  # fmt: skip


class Screen(io.StringIO):
    """The gate's prompt output; `asked` is set once the whole question is shown."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = asyncio.Event()

    def flush(self) -> None:
        super().flush()
        if self.getvalue().endswith("： "):
            self.asked.set()


@pytest.fixture
def terminal() -> Iterator[tuple[io.TextIOWrapper, int]]:
    """A pseudo-terminal: (the gate's stdin, the fd the 'user' types into)."""
    user, gate_side = os.openpty()
    stdin = open(gate_side, encoding="utf-8", closefd=True)  # noqa: SIM115
    yield stdin, user
    with contextlib.suppress(OSError):
        os.close(user)
    for thread in threading.enumerate():
        if thread.name == "terminal-lines":
            thread.join(10)
    stdin.close()


@pytest.mark.posix
async def test_the_terminal_question_speaks_chinese_and_takes_the_same_letters(
    terminal: tuple[io.TextIOWrapper, int],
) -> None:
    stdin, user = terminal
    screen = Screen()
    now = [1000.0]
    gate = TerminalGate(stdin=stdin, prompt_out=screen, clock=lambda: now[0])
    with speaking("zh_CN"):
        asking = asyncio.ensure_future(gate.request(approval()))
        await screen.asked.wait()
        now[0] += MIN_ANSWER_S
        os.write(user, b"o\n")
        assert await asking is ApprovalDecision.ONCE
    assert screen.getvalue() == (
        "\n在“notes.txt — L3afpad”的文本框中输入“Hello”\n"
        '  允许 type_text {"text": "Hello"} 吗？\n'
        "  理由：to say hello\n"
        "  [o] 允许一次 / [r] 本次运行内允许 / [d] 拒绝 （30 秒后自动拒绝）： "
    )


# ── the process: its language, argparse's words, stop-all ───────────────────


def cli(*args: str, env: dict[str, str], home: Path) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))}
    clean.pop("DESKTOP_AGENT_LANGUAGE", None)
    return subprocess.run(
        [sys.executable, "-m", "desktop_agent", *args],
        env={**clean, "DESKTOP_AGENT_HOME": str(home), **env},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def test_help_and_a_usage_error_follow_the_system_locale(tmp_path: Path) -> None:
    helped = cli("--help", env={"LANG": "zh_CN.UTF-8"}, home=tmp_path)
    assert helped.returncode == 0
    assert helped.stdout.startswith("用法：desktop-agent ")
    assert "显示此帮助信息并退出" in helped.stdout  # argparse's own
    assert "停止使用此数据目录的所有实例的所有运行" in helped.stdout  # ours

    wrong = cli("run", "x", "--max-steps", "0", env={"LANG": "zh_CN.UTF-8"}, home=tmp_path)
    assert (wrong.returncode, wrong.stderr) == (
        3, "desktop-agent: 参数 --max-steps：0 超出范围 1..500\n",
    )  # fmt: skip


def test_the_language_setting_wins_over_the_locale(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "settings.toml").write_text('language = "en"\n', encoding="utf-8")
    said = cli("run", "   ", env={"LANG": "zh_CN.UTF-8"}, home=tmp_path)
    assert (said.returncode, said.stderr) == (3, "desktop-agent: the goal is empty\n")
    said = cli("run", "   ", env={"DESKTOP_AGENT_LANGUAGE": "zh_CN"}, home=tmp_path)
    assert said.stderr == "desktop-agent: 目标为空\n"


@pytest.mark.posix
def test_stop_all_says_its_line_in_chinese_on_its_lean_path(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    said = cli("stop-all", env={"LC_ALL": "zh_CN.UTF-8"}, home=tmp_path)
    assert (said.returncode, said.stdout) == (0, "已停止 0 个运行\n")


# ── every text translated ───────────────────────────────────────────────────

#: a string that is no words for a person: option names, commands, requests
_NOT_WORDS = re.compile(r"--[\w-]+|desktop-agent[\w -]*|curl .*|GET /\S*|https?://\S*")
#: calls whose strings are not shown: the log, and Python's own errors (a bug, not a person's)
_NOT_SHOWN_RECEIVERS = {"log", "logger", "logging", "warnings"}
_PROGRAMMER_ERRORS = {"AttributeError", "ValueError", "TypeError", "RuntimeError", "KeyError"}
#: the doctor's checks are named by a key, as desktop/doctor.py names its own
_NAMES = {"api key"}


def untranslated(source: str) -> list[tuple[int, str]]:
    """The strings with words of `source` a person may read that skip tr(): any literal with
    two words (an f-string's literal parts), and any word printed or written; not docstrings,
    the log, a programmer's error or assertion, nor the text given to tr() / N_()."""
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skip.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.Assert) and node.msg is not None:
            skip.update(id(inner) for inner in ast.walk(node.msg))  # a programmer's message
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        receiver = getattr(getattr(node.func, "value", None), "id", None)
        quiet = receiver in _NOT_SHOWN_RECEIVERS or name in _PROGRAMMER_ERRORS
        texts = node.args[:1] if name in ("tr", "N_") else node.args[2:3] if name == "say" else []
        for part in [node] if quiet else texts:
            skip.update(id(inner) for inner in ast.walk(part))
    printed: set[int] = set()
    for node in ast.walk(tree):
        name = getattr(getattr(node, "func", None), "id", None) or getattr(
            getattr(node, "func", None), "attr", None
        )
        if isinstance(node, ast.Call) and name in ("print", "write", "_say", "getpass"):
            printed.update(id(inner) for argument in node.args for inner in ast.walk(argument))
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.JoinedStr):
            parts = [p for p in node.values if isinstance(p, ast.Constant)]
            skip.update(id(p) for p in parts)
            text = "".join(str(p.value) for p in parts)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        words = _NOT_WORDS.sub("", text)
        sentence = " " in words.strip() and re.search(r"[A-Za-z]{2}", words)
        shown = id(node) in printed and re.search(r"[A-Za-z]{2}", words)
        if (sentence or shown) and text not in _NAMES:
            found.append((node.lineno, text))
    return sorted(found)


def test_the_scan_finds_an_untranslated_text() -> None:
    source = (
        'print("no runs yet")\n'
        'print(f"run {run.id} done")\n'
        'out.write("paused")\n'
        'raise ConfigError(f"data dir {d} cannot be written")\n'
        'parser.add_argument("--x", help="what it does")\n'
        'print(tr("no runs yet"))\n'
        'log.warning("for the log file")\n'
        'raise AttributeError(f"module {name} has no attribute")\n'
        'assert run is not None, "the start admits the run"\n'
        'print(f"use it: desktop-agent run --model {m}")\n'
        'print(tr("wrote {file}", file=f"{path} here"))\n'
        'x = N_("queued items")\n'
    )
    assert [text for _, text in untranslated(source)] == [
        "no runs yet", "run  done", "paused", "data dir  cannot be written", "what it does",
        "use it: desktop-agent run --model ", " here",
    ]  # fmt: skip


@pytest.mark.parametrize("path", CLI_SOURCES, ids=lambda path: path.name)
def test_every_text_of_the_command_line_goes_through_its_translation(path: Path) -> None:
    assert untranslated(path.read_text(encoding="utf-8")) == []


def test_every_text_of_the_command_line_has_its_finished_zh_cn_entry() -> None:
    for context, texts in (("CLI", cli_texts()), ("argparse", argparse_texts())):
        entries = ts_messages(context)
        for text in texts:
            assert text in entries, (context, text)
            translation = entries[text].find("translation")
            assert translation is not None and translation.get("type") is None, text


def test_argparse_translations_keep_their_placeholders() -> None:
    placeholder = re.compile(r"%(?:\([^)]*\))?[a-z%]")
    for source, message in ts_messages("argparse").items():
        translated = message.findtext("translation") or ""
        assert placeholder.findall(translated) == placeholder.findall(source), source
