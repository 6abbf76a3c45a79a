"""The mutation command's results are kept in git by function (benchmarks/mutation.py: keep,
restore), so a new checkout's report and `--survivors` start from the last run's results."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def mutation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation", ROOT / "benchmarks/mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "mutation", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "ROOT", tmp_path)
    monkeypatch.setattr(module, "RESULTS", tmp_path / "kept")
    return module


def _meta(root: Path) -> Path:
    return root / "mutants" / "desktop_agent/core/keys.py.meta"


def test_results_kept_by_function_come_back_where_mutmut_reads_them(
    mutation: ModuleType, tmp_path: Path
) -> None:
    keys = mutation.Target("desktop_agent/core/keys.py")
    module = "desktop_agent.core.keys"
    _meta(tmp_path).parent.mkdir(parents=True)
    _meta(tmp_path).write_text(
        json.dumps(
            {
                "exit_code_by_key": {
                    f"{module}.x_key_family__mutmut_2": 0,
                    f"{module}.x_key_family__mutmut_10": 1,
                    f"{module}.x_folded__mutmut_1": None,  # not run: not kept
                },
                "hash_by_function_name": {"x_key_family": "ab12", "x_folded": "cd34"},
                "type_check_error_by_key": {},
                "durations_by_key": {f"{module}.x_key_family__mutmut_2": 0.5},
                "estimated_durations_by_key": {},
            }
        )
    )
    mutation.keep(keys)
    kept = json.loads((tmp_path / "kept" / "keys.json").read_text())
    assert kept == {
        "hashes": {"x_folded": "cd34", "x_key_family": "ab12"},
        "results": {"x_key_family": {"2": 0, "10": 1}},
    }

    _meta(tmp_path).unlink()  # a new checkout: mutants/ is not in git
    mutation.restore(keys)
    meta = json.loads(_meta(tmp_path).read_text())
    assert meta["exit_code_by_key"] == {
        f"{module}.x_key_family__mutmut_2": 0,
        f"{module}.x_key_family__mutmut_10": 1,
    }
    assert meta["hash_by_function_name"] == {"x_key_family": "ab12", "x_folded": "cd34"}
    result = mutation.collect(keys, {})
    assert (result.killed, result.survivors) == (1, [f"{module}.x_key_family__mutmut_2"])


def test_mutmuts_own_results_are_not_replaced_by_kept_ones(
    mutation: ModuleType, tmp_path: Path
) -> None:
    keys = mutation.Target("desktop_agent/core/keys.py")
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "keys.json").write_text(json.dumps({"hashes": {}, "results": {}}))
    _meta(tmp_path).parent.mkdir(parents=True)
    _meta(tmp_path).write_text('{"own": true}')
    mutation.restore(keys)
    assert _meta(tmp_path).read_text() == '{"own": true}'


def test_results_run_elsewhere_fill_only_what_was_not_run_here_of_todays_functions(
    mutation: ModuleType, tmp_path: Path
) -> None:
    # mutmut's own results here are older than the kept ones another checkout committed
    keys = mutation.Target("desktop_agent/core/keys.py")
    module = "desktop_agent.core.keys"
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "keys.json").write_text(
        json.dumps(
            {
                "hashes": {"x_key_family": "new", "x_folded": "old"},
                "results": {"x_key_family": {"1": 1, "2": 0}, "x_folded": {"1": 1}},
            }
        )
    )
    _meta(tmp_path).parent.mkdir(parents=True)
    _meta(tmp_path).write_text(
        json.dumps(
            {
                "exit_code_by_key": {
                    f"{module}.x_key_family__mutmut_1": None,  # not run here: filled
                    f"{module}.x_key_family__mutmut_2": 1,  # run here: kept as it is
                    f"{module}.x_folded__mutmut_1": None,  # its function changed: not filled
                },
                "hash_by_function_name": {"x_key_family": "new", "x_folded": "newer"},
            }
        )
    )
    mutation.fill(keys)
    assert json.loads(_meta(tmp_path).read_text())["exit_code_by_key"] == {
        f"{module}.x_key_family__mutmut_1": 1,
        f"{module}.x_key_family__mutmut_2": 1,
        f"{module}.x_folded__mutmut_1": None,
    }
