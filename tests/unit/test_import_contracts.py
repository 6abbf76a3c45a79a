"""The layers' import contracts (docs/architecture.md, "Layers"): the window's code is a view
over the engine, the faces use the host and not each other's insides.

- `ui` imports neither `planner`, `desktop` nor `store` (nor the Agent): everything the engine
  tells it comes as events through the host;
- `host`, `agent`, `api`, `cli`, `mcp` and `routines` import no Qt, nor do the window's models
  (`ui/runs_state.py`, `ui/run_on_show.py`);
- `eval` reads no store, host or Agent: its checkers judge the apps' real end state;
- `cli` (and every face but the app) imports no name of the app's that starts with `_`.

`core` has its own, stricter test (test_core_purity.py). Imports are found at any depth (inside
functions, under TYPE_CHECKING). A few known debts are listed in DEBTS with why; a debt that
is paid (the import is gone) fails the test until it is struck from the list.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "desktop_agent"


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    line: int
    target: str  # the module imported from
    names: tuple[str, ...]  # the names taken from it ("" for `import target`)


@dataclass(frozen=True)
class Contract:
    name: str
    importers: tuple[str, ...]  # module prefixes the contract binds
    forbidden: tuple[str, ...]  # module prefixes they may not import
    private_names_of: tuple[str, ...] = ()  # modules whose `_names` they may not import

    def breaches(self, found: Import) -> bool:
        if not _under(found.module, self.importers):
            return False
        if _under(found.target, self.forbidden):
            return True
        return _under(found.target, self.private_names_of) and any(
            name.startswith("_") for name in found.names
        )


CONTRACTS = (
    Contract(
        "ui is a view: no planner, desktop adapters, store or Agent",
        ("desktop_agent.ui",),
        (
            "desktop_agent.planner",
            "desktop_agent.desktop",
            "desktop_agent.store",
            "desktop_agent.agent",
        ),
    ),
    Contract(
        "the engine side and the headless faces import no Qt",
        (
            "desktop_agent.host",
            "desktop_agent.agent",
            "desktop_agent.api",
            "desktop_agent.cli.parser",
            "desktop_agent.cli.gate",
            "desktop_agent.cli.output",
            "desktop_agent.mcp",
            "desktop_agent.routines",
            "desktop_agent.eval",
        ),
        ("PySide6", "qasync", "shiboken6", "desktop_agent.ui", "desktop_agent.app"),
    ),
    Contract(
        "the eval judges the apps' real state: it never reads the agent's store or host",
        ("desktop_agent.eval",),
        ("desktop_agent.store", "desktop_agent.host", "desktop_agent.agent"),
    ),
    Contract(
        "the window's models are Qt-free (the view renders them)",
        ("desktop_agent.ui.runs_state", "desktop_agent.ui.run_on_show"),
        ("PySide6", "qasync", "shiboken6"),
    ),
    Contract(
        "no face uses the app's internals",
        ("desktop_agent.cli", "desktop_agent.mcp", "desktop_agent.routines", "desktop_agent.host"),
        (),
        private_names_of=("desktop_agent.app",),
    ),
)

#: (importer, imported): imports the contracts forbid that are still there, each with why
DEBTS: dict[tuple[str, str], str] = {}


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_in(source: str, module: str, *, is_package: bool = False) -> list[Import]:
    """Every import in `source` at any depth, with relative ones made absolute."""
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(Import(module, node.lineno, alias.name, ("",)) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = module.split(".") if is_package else module.split(".")[:-1]
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names = tuple(alias.name for alias in node.names)
            found.append(Import(module, node.lineno, target, names))
            # `from desktop_agent import store` imports the module desktop_agent.store
            found.extend(Import(module, node.lineno, f"{target}.{n}", ("",)) for n in names)
    return found


def all_imports(root: Path = PACKAGE_DIR) -> list[Import]:
    found: list[Import] = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        found.extend(
            imports_in(path.read_text(encoding="utf-8"), module, is_package=path.stem == "__init__")
        )
    return found


def breaches(found: list[Import]) -> list[str]:
    return [
        f"{item.module}:{item.line} imports {item.target} {list(item.names)} ({contract.name})"
        for item in found
        for contract in CONTRACTS
        if contract.breaches(item) and not _owed(item)
    ]


def _owed(item: Import) -> bool:
    return any(
        item.module == importer and _under(item.target, (target,)) for importer, target in DEBTS
    )


def test_the_package_keeps_its_import_contracts() -> None:
    assert breaches(all_imports()) == []


def test_every_listed_debt_is_still_owed() -> None:
    """A debt paid is struck from DEBTS, so the list never hides a new breach."""
    found = all_imports()
    paid = [
        (importer, target)
        for importer, target in DEBTS
        if not any(i.module == importer and _under(i.target, (target,)) for i in found)
    ]
    assert paid == []


@pytest.mark.parametrize(
    "module",
    [
        # it paints the rings and shows the report; the engine takes the screenshot and asks
        # the model (host/calibration.py)
        "desktop_agent.ui.calibration",
        # the model profiles it offers come from the host (Host.model_profiles)
        "desktop_agent.ui.settings_dialog",
    ],
)
def test_the_window_imports_no_planner_or_desktop_adapter(module: str) -> None:
    found = [i for i in all_imports() if i.module == module]
    assert found
    banned = ("desktop_agent.planner", "desktop_agent.desktop", "desktop_agent.store")
    assert [f"{i.line}: {i.target}" for i in found if _under(i.target, banned)] == []
    assert not any(importer == module for importer, _ in DEBTS)


@pytest.mark.parametrize(
    ("source", "module", "why"),
    [
        ("from desktop_agent.store import SqliteRunRepository", "desktop_agent.ui.history", "ui"),
        ("import desktop_agent.planner.client", "desktop_agent.ui.main_window", "ui"),
        ("from ..desktop import hotkey", "desktop_agent.ui.tray", "ui"),
        ("from desktop_agent import store", "desktop_agent.ui.tray", "ui"),
        (
            "def f():\n    from desktop_agent.agent import Agent",
            "desktop_agent.ui.history",
            "ui",
        ),
        ("from PySide6.QtCore import QObject", "desktop_agent.host.host", "Qt"),
        ("from PySide6.QtCore import Signal", "desktop_agent.ui.run_on_show", "Qt"),
        ("import desktop_agent.ui.main_window", "desktop_agent.api.routes", "Qt"),
        ("from desktop_agent.app import _display_problem", "desktop_agent.cli.commands", "app"),
    ],
)
def test_a_forbidden_import_fails_the_contracts(source: str, module: str, why: str) -> None:
    found = breaches(imports_in(source, module))
    assert len(found) >= 1, (source, module)


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("from desktop_agent.core.events import RunStarted", "desktop_agent.ui.main_window"),
        ("from desktop_agent.host.engine import Engine", "desktop_agent.ui.engine_client"),
        ("from desktop_agent.app import run_app", "desktop_agent.cli"),
        ("from desktop_agent.store import SqliteRunRepository", "desktop_agent.host.host"),
    ],
)
def test_an_allowed_import_passes(source: str, module: str) -> None:
    assert breaches(imports_in(source, module)) == []
