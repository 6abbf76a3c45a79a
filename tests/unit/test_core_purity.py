"""desktop_agent.core imports only the standard library, pydantic and itself (DESIGN §2)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

CORE_DIR = Path(__file__).resolve().parents[2] / "desktop_agent" / "core"
CORE_PACKAGE = "desktop_agent.core"
#: the one third-party library the core may use
THIRD_PARTY_ALLOWED = frozenset({"pydantic"})
#: standard-library modules that are OS or network access, which the core does not do itself
STDLIB_FORBIDDEN = frozenset(
    {
        "ctypes",
        "fcntl",
        "ftplib",
        "http",
        "msvcrt",
        "multiprocessing",
        "smtplib",
        "socket",
        "sqlite3",
        "ssl",
        "subprocess",
        "termios",
        "tkinter",
        "urllib",
        "winreg",
    }
)
#: what the rest of the app uses and the core must never pull in, even indirectly
HEAVY = (
    "PySide6",
    "qasync",
    "peewee",
    "mss",
    "pyautogui",
    "Xlib",
    "openai",
    "aiohttp",
    "keyring",
    "uiautomation",
    "keyboard",
    "PIL",
    "platformdirs",
)


def _resolve(module: str, node: ast.ImportFrom) -> list[str]:
    """The absolute names an ImportFrom brings in, for code in `module`."""
    if node.level == 0:
        assert node.module is not None
        return [node.module]
    is_package = module.endswith(".__init__")
    parts = module.removesuffix(".__init__").split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    if node.module:
        return [".".join([*base, node.module])]
    return [".".join([*base, alias.name]) for alias in node.names]


def imports_of(source: str, module: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in `source`, at any depth: top level,
    inside functions, under `if TYPE_CHECKING:`, and `importlib.import_module("x")` /
    `__import__("x")` with a literal name."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.extend((node.lineno, name) for name in _resolve(module, node))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
            if name in {"import_module", "__import__"} and literal:
                found.append((node.lineno, first.value))  # type: ignore[attr-defined]
    return found


def is_allowed(name: str) -> bool:
    top = name.split(".")[0]
    if name == CORE_PACKAGE or name.startswith(CORE_PACKAGE + "."):
        return True
    if top == "desktop_agent":
        return False  # store, planner, desktop, api, ui, cli, app, settings, agent, ...
    if top in THIRD_PARTY_ALLOWED:
        return True
    return top in sys.stdlib_module_names and top not in STDLIB_FORBIDDEN


def violations(source: str, module: str) -> list[str]:
    return [
        f"{module} line {line} imports {name}"
        for line, name in imports_of(source, module)
        if not is_allowed(name)
    ]


def core_modules(core_dir: Path = CORE_DIR) -> list[tuple[str, Path]]:
    modules = []
    for path in sorted(core_dir.rglob("*.py")):
        relative = path.relative_to(core_dir).with_suffix("")
        modules.append((".".join([CORE_PACKAGE, *relative.parts]), path))
    return modules


def scan(core_dir: Path = CORE_DIR) -> list[str]:
    """Every import of a module under `core_dir` that the core may not make."""
    return [
        problem
        for module, path in core_modules(core_dir)
        for problem in violations(path.read_text(encoding="utf-8"), module)
    ]


# ── the core itself ──────────────────────────────────────────────────────────


def test_the_checker_sees_every_core_module_and_its_imports() -> None:
    names = {name for name, _ in core_modules()}
    for expected in ("loop", "runner", "control", "breaker", "permissions", "tools", "__init__"):
        assert f"{CORE_PACKAGE}.{expected}" in names
    loop = (CORE_DIR / "loop.py").read_text(encoding="utf-8")
    imported = {name for _, name in imports_of(loop, f"{CORE_PACKAGE}.loop")}
    assert {"asyncio", "desktop_agent.core.control"} <= imported
    tools = (CORE_DIR / "tools.py").read_text(encoding="utf-8")
    assert "pydantic" in {name for _, name in imports_of(tools, f"{CORE_PACKAGE}.tools")}


def test_core_imports_only_stdlib_pydantic_and_itself() -> None:
    assert scan() == []


def test_importing_the_core_loads_no_qt_store_os_or_network_library() -> None:
    modules = " ".join(name for name, _ in core_modules()).replace(".__init__", "")
    script = (
        "import importlib, sys\n"
        f"for name in {modules.split()!r}: importlib.import_module(name)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=CORE_DIR.parents[1],
        timeout=60,
    )
    loaded = set(result.stdout.split())
    assert "desktop_agent.core.loop" in loaded
    tops = {name.split(".")[0] for name in loaded}
    # (asyncio itself loads socket, ssl and subprocess: the stdlib is checked in the source)
    assert tops.isdisjoint(HEAVY), sorted(tops & set(HEAVY))
    app_modules = {name for name in loaded if name.startswith("desktop_agent.")}
    assert {name for name in app_modules if not name.startswith(CORE_PACKAGE)} == set()


# ── the checker can fail ─────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("source", "module", "bad"),
    [
        ("import PySide6.QtCore", "desktop_agent.core.loop", "PySide6.QtCore"),
        ("from PySide6.QtWidgets import QWidget", "desktop_agent.core.loop", "PySide6.QtWidgets"),
        ("import qasync", "desktop_agent.core.loop", "qasync"),
        ("from peewee import Model", "desktop_agent.core.runner", "peewee"),
        ("import mss", "desktop_agent.core.loop", "mss"),
        ("import pyautogui", "desktop_agent.core.loop", "pyautogui"),
        ("from Xlib import display", "desktop_agent.core.loop", "Xlib"),
        ("import openai", "desktop_agent.core.loop", "openai"),
        ("import aiohttp", "desktop_agent.core.loop", "aiohttp"),
        ("import keyring", "desktop_agent.core.loop", "keyring"),
        ("import uiautomation", "desktop_agent.core.loop", "uiautomation"),
        ("import keyboard", "desktop_agent.core.loop", "keyboard"),
        ("import socket", "desktop_agent.core.loop", "socket"),
        ("import subprocess", "desktop_agent.core.loop", "subprocess"),
        ("from urllib.request import urlopen", "desktop_agent.core.loop", "urllib.request"),
        (
            "from desktop_agent.store import SqliteRunRepository",
            "desktop_agent.core.loop",
            "desktop_agent.store",
        ),
        ("from desktop_agent import planner", "desktop_agent.core.loop", "desktop_agent"),
        (
            "import desktop_agent.desktop.capture",
            "desktop_agent.core.loop",
            "desktop_agent.desktop.capture",
        ),
        ("from desktop_agent.api import server", "desktop_agent.core.loop", "desktop_agent.api"),
        (
            "from desktop_agent.ui.worker import RunWorker",
            "desktop_agent.core.loop",
            "desktop_agent.ui.worker",
        ),
        ("import desktop_agent.cli", "desktop_agent.core.loop", "desktop_agent.cli"),
        ("from desktop_agent.app import main", "desktop_agent.core.loop", "desktop_agent.app"),
        (
            "from desktop_agent.settings import Settings",
            "desktop_agent.core.loop",
            "desktop_agent.settings",
        ),
        ("from .. import store", "desktop_agent.core.loop", "desktop_agent.store"),
        ("from ..ui import worker", "desktop_agent.core.loop", "desktop_agent.ui"),
        ("from .. import cli", "desktop_agent.core.__init__", "desktop_agent.cli"),
        ("def grab():\n    import mss\n    return mss", "desktop_agent.core.loop", "mss"),
        (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n"
            "    from desktop_agent.store import X",
            "desktop_agent.core.loop",
            "desktop_agent.store",
        ),
        (
            "import importlib\nimportlib.import_module('peewee')",
            "desktop_agent.core.loop",
            "peewee",
        ),
        ("__import__('PySide6')", "desktop_agent.core.loop", "PySide6"),
    ],
)
def test_the_checker_flags_a_bad_import(source: str, module: str, bad: str) -> None:
    found = violations(source, module)
    assert len(found) == 1, found
    assert found[0].endswith(f"imports {bad}")


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("from __future__ import annotations", "desktop_agent.core.loop"),
        ("import asyncio, threading, json", "desktop_agent.core.loop"),
        ("from collections.abc import AsyncGenerator", "desktop_agent.core.loop"),
        ("from pydantic import BaseModel, ValidationError", "desktop_agent.core.tools"),
        ("from desktop_agent.core.models import RunView", "desktop_agent.core.loop"),
        ("import desktop_agent.core", "desktop_agent.core.loop"),
        ("from . import models", "desktop_agent.core.loop"),
        ("from .models import RunView", "desktop_agent.core.loop"),
        ("from .models import RunView", "desktop_agent.core.__init__"),
    ],
)
def test_the_checker_accepts_stdlib_pydantic_and_the_core(source: str, module: str) -> None:
    assert violations(source, module) == []


def test_the_scan_fails_on_a_core_directory_holding_a_bad_module(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text('"""A core."""\n', encoding="utf-8")
    (tmp_path / "good.py").write_text("import asyncio\nfrom .bad import x\n", encoding="utf-8")
    (tmp_path / "bad.py").write_text(
        "from __future__ import annotations\n\nimport asyncio\n\nfrom ..store import db\n"
        "def capture():\n    import mss\n",
        encoding="utf-8",
    )
    assert scan(tmp_path) == [
        "desktop_agent.core.bad line 5 imports desktop_agent.store",
        "desktop_agent.core.bad line 7 imports mss",
    ]
