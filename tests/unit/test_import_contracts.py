"""The floors of docs/architecture.md ("Layers") hold: import-linter's contracts in pyproject.toml
pass on the package, and an import that breaks one fails them.

The contracts, their debts and why each debt is there live in pyproject.toml
([tool.importlinter]); a debt paid fails `lint-imports` until its line goes. `core` has its
own, stricter test (test_core_purity.py: no third-party library but pydantic).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` over the package under `root` with `root`'s pyproject.toml."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", str(root / "pyproject.toml")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_package_keeps_its_import_contracts() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.fixture(scope="module")
def copy_of_the_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("house")
    shutil.copy(ROOT / "pyproject.toml", root)
    shutil.copytree(
        ROOT / "desktop_agent", root / "desktop_agent", ignore=shutil.ignore_patterns("__pycache__")
    )
    return root


@pytest.mark.parametrize(
    ("module", "source", "contract", "arrow"),
    [
        (
            "core/errors.py",
            "from desktop_agent.host import Host",
            "each floor imports only from the floors below it BROKEN",
            "desktop_agent.core.errors -> desktop_agent.host",
        ),
        (
            "store/db.py",
            "def settings():\n    from desktop_agent.settings import Settings",
            "each floor imports only from the floors below it BROKEN",
            "desktop_agent.store.db -> desktop_agent.settings",
        ),
        (
            "host/host.py",
            "def f():\n    from desktop_agent.api.server import ApiServer",
            "each floor imports only from the floors below it BROKEN",
            "desktop_agent.host.host -> desktop_agent.api.server",
        ),
        (
            "cli/commands.py",
            "def f():\n    from desktop_agent.launch import local_api",
            "each floor imports only from the floors below it BROKEN",
            "desktop_agent.cli.commands -> desktop_agent.launch",
        ),
        (
            "cli/commands.py",
            "def f():\n    from desktop_agent.mcp.serve import serve_mcp",
            "the faces go through the Host, never through each other BROKEN",
            "desktop_agent.cli.commands -> desktop_agent.mcp.serve",
        ),
        (
            "cli/parser.py",
            "def f():\n    from desktop_agent.eval.cli import add_parser",
            "the faces go through the Host, never through each other BROKEN",
            "desktop_agent.cli.parser -> desktop_agent.eval.cli",
        ),
        (
            "cli/__init__.py",
            "def f():\n    from desktop_agent.app import run_app",
            "the faces go through the Host, never through each other BROKEN",
            "desktop_agent.cli -> desktop_agent.app",
        ),
        (
            "app.py",
            "def f():\n    from desktop_agent.api.server import ApiServer",
            "it imports no other face BROKEN",
            "desktop_agent.app -> desktop_agent.api.server",
        ),
        (
            "mcp/progress.py",
            "from desktop_agent.api import schemas",
            "the faces go through the Host, never through each other BROKEN",
            "desktop_agent.mcp.progress -> desktop_agent.api.schemas",
        ),
        (
            "host/requests.py",
            "if TYPE_CHECKING:\n    from desktop_agent.host.starts import admit",
            "no circle between the files of a package, nor between packages BROKEN",
            ".requests -> .starts",
        ),
        (
            "core/sentences.py",
            "def of_step_view():\n    from desktop_agent.core.models import StepView",
            "no circle between the files of a package, nor between packages BROKEN",
            ".sentences -> .models",
        ),
        (
            "ui/history.py",
            "def f():\n    from desktop_agent.store import SqliteRunRepository",
            "the window is a view: it imports no planner, desktop adapter, store or Agent BROKEN",
            "desktop_agent.ui.history -> desktop_agent.store",
        ),
        (
            "host/records.py",
            "from PySide6.QtCore import QObject",
            "import no Qt BROKEN",
            "desktop_agent.host.records -> PySide6",
        ),
        (
            "mcp/server.py",
            "if TYPE_CHECKING:\n    from desktop_agent.agent import Agent",
            "the faces get the Host, never the Agent behind it BROKEN",
            "desktop_agent.mcp.server -> desktop_agent.agent",
        ),
        (
            "eval/report.py",
            "from desktop_agent.store import SqliteRunRepository",
            "it never reads the agent's store, Host or",
            "desktop_agent.eval.report -> desktop_agent.store",
        ),
    ],
)
def test_a_forbidden_import_fails_the_contracts(
    copy_of_the_package: Path, module: str, source: str, contract: str, arrow: str
) -> None:
    path = copy_of_the_package / "desktop_agent" / module
    before = path.read_text(encoding="utf-8")
    path.write_text(f"{before}\n\n{source}\n", encoding="utf-8")
    try:
        done = lint_imports(copy_of_the_package)
    finally:
        path.write_text(before, encoding="utf-8")
    assert done.returncode == 1, done.stdout + done.stderr
    assert contract in " ".join(done.stdout.split())
    assert arrow in done.stdout
