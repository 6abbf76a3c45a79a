"""Mutation testing of the safety rules (issue 36): mutmut on one file at a time; mutation.md.

`./scripts/mutation` runs every target; `./scripts/mutation keys budget` only those; `--report`
writes the report from the last results without running anything. mutmut keeps its results in
mutants/ (ignored by git); the report and the reviewed equivalent mutants
(mutation_equivalents.toml) live beside this file. docs/mutation.md says why mutmut.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "benchmarks" / "mutation.md"
#: each file's last results, kept in git: mutants/ is not, so a new checkout starts from these
RESULTS = ROOT / "benchmarks" / "mutation_results"
EQUIVALENTS = ROOT / "benchmarks" / "mutation_equivalents.toml"
#: a file's score below this fails the command (issue 36: "≥ 90 % on each named file")
BAR = 90.0
#: a test of the selection runs in well under a second; one that a mutant made hang fails
#: after this many seconds (pytest-timeout), instead of holding the only worker until mutmut's
#: own wall-clock limit ((the tests' time + 1 s) x 5: over a minute for the loop's mutants)
TEST_TIMEOUT_S = 15

#: what is left of the gate in core/loop.py: `_act`, which strings the gate's steps together in
#: DESIGN §1's order, and its steps — `_not_validated` (the row of a call not validated),
#: `_judged` (judged again, its row begun, the app's own windows), `_cleared_and_executed` (the
#: tool's breaker around both), `_cleared` (the policy, the grants, the question),
#: `_execute` (the tool run within its deadline) and `_recorded` (its row, its effect) (issue
#: 32 item 4). The gate itself (validating the call, judging its risk and the focus, the
#: own-window checks, the policy, the grants and the question, the re-checks after the answer)
#: is core/gate.py, and the validated call and what it shows core/validated_call.py: both are
#: mutated whole
LOOP_GATE = (
    "xǁ_TaskLoopǁ_act",
    "xǁ_TaskLoopǁ_not_validated",
    "xǁ_TaskLoopǁ_judged",
    "xǁ_TaskLoopǁ_cleared_and_executed",
    "xǁ_TaskLoopǁ_cleared",
    "xǁ_TaskLoopǁ_execute",
    "xǁ_TaskLoopǁ_recorded",
)


@dataclass(frozen=True)
class Target:
    """One mutated file and the functions of it that count (all of them unless listed)."""

    path: str
    functions: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        return self.path.removesuffix(".py").replace("/", ".")

    @property
    def name(self) -> str:
        return Path(self.path).stem if self.path.startswith("desktop_agent/core") else "mcp_gate"

    def globs(self) -> list[str]:
        if not self.functions:
            return [f"{self.module}.*"]
        return [f"{self.module}.{function}__mutmut_*" for function in self.functions]

    def counts(self, mutant: str) -> bool:
        function = mutant.removeprefix(self.module + ".").rsplit("__mutmut_", 1)[0]
        return not self.functions or function in self.functions


#: smallest first: the order the command runs them in
TARGETS = (
    Target("desktop_agent/core/keys.py"),
    Target("desktop_agent/core/control.py"),
    Target("desktop_agent/core/breaker.py"),
    Target("desktop_agent/core/budget.py"),
    Target("desktop_agent/mcp/gate.py"),
    Target("desktop_agent/core/own_windows.py"),
    Target("desktop_agent/core/permissions.py"),
    Target("desktop_agent/core/runner.py"),
    Target("desktop_agent/core/targets.py"),
    Target("desktop_agent/core/call_risk.py"),
    Target("desktop_agent/core/validated_call.py"),
    Target("desktop_agent/core/gate.py"),
    Target("desktop_agent/core/loop.py", LOOP_GATE),
)

#: mutmut's exit codes (mutmut/stats.py, status_by_exit_code) folded into what the report counts
KILLED = {1, 3, 36, 24, -24, 152, 255, 37}
SURVIVED = {0}
NO_TESTS = {5, 33}


@dataclass
class FileResult:
    target: Target
    killed: int = 0
    survivors: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    #: not run yet (new, or their function changed since: mutmut resets their results)
    unchecked: list[str] = field(default_factory=list)
    equivalent: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.killed + len(self.survivors) + len(self.untested) + len(self.unchecked)

    @property
    def raw_score(self) -> float:
        return 100.0 * self.killed / self.total if self.total else 0.0

    @property
    def score(self) -> float:
        """Killed among the mutants that change behaviour (reviewed equivalents left out)."""
        counted = self.total - len(self.equivalent)
        return 100.0 * self.killed / counted if counted else 100.0


def run(target: Target, mutants: list[str] | None = None) -> int:
    """mutmut on one file with ONE worker (the machine is shared); its log in mutants/.
    `mutants`: only these (the survivors of the last run), else every mutant of the file."""
    log = ROOT / "mutants" / f"{target.name}.log"
    log.parent.mkdir(exist_ok=True)
    mutmut = Path(sys.executable).with_name("mutmut")
    print(f"mutation: {target.path} ({log.relative_to(ROOT)})", flush=True)
    with log.open("w") as out:
        addopts = f"{os.environ.get('PYTEST_ADDOPTS', '')} --timeout={TEST_TIMEOUT_S}"
        done = subprocess.run(
            [str(mutmut), "run", "--max-children", "1", *(mutants or target.globs())],
            cwd=ROOT,
            env={**os.environ, "PYTEST_ADDOPTS": addopts.strip()},
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    return done.returncode


def refresh(target: Target) -> None:
    """Make mutmut's mutants of `target` from its source as it is now (what `mutmut run` does
    first), so the last results read are of today's functions: mutmut keeps a mutant's result
    only while its function is unchanged, and a changed function's mutants are not run yet."""
    source, mutants = ROOT / target.path, ROOT / "mutants" / target.path
    if not _meta(target).exists():
        return  # never run: nothing to refresh
    if mutants.exists() and source.stat().st_mtime < mutants.stat().st_mtime:
        return  # made since the source last changed
    make = (
        "import sys; from pathlib import Path; "
        "from mutmut.__main__ import create_mutants_for_file; "
        "result = create_mutants_for_file(Path(sys.argv[1]), Path('mutants') / sys.argv[1]); "
        "sys.exit(repr(result.error) if result.error else 0)"
    )
    subprocess.run([sys.executable, "-c", make, target.path], cwd=ROOT, check=True)


def _meta(target: Target) -> Path:
    return ROOT / "mutants" / f"{target.path}.meta"


def _kept(target: Target) -> Path:
    return RESULTS / f"{target.name}.json"


def restore(target: Target) -> None:
    """Put the kept results of `target` where mutmut reads them, unless it has its own: mutmut
    keeps each result while its function's hash is unchanged (`refresh`), so results of
    another checkout count only for the functions as they are here."""
    if _meta(target).exists() or not _kept(target).exists():
        return
    kept = json.loads(_kept(target).read_text())
    codes = {
        f"{target.module}.{function}__mutmut_{number}": code
        for function, by_number in kept["results"].items()
        for number, code in by_number.items()
    }
    meta = {
        "exit_code_by_key": codes,
        "hash_by_function_name": kept["hashes"],
        "type_check_error_by_key": {},
        "durations_by_key": {},
        "estimated_durations_by_key": {},
    }
    _meta(target).parent.mkdir(parents=True, exist_ok=True)
    _meta(target).write_text(json.dumps(meta))


def fill(target: Target) -> None:
    """Give a mutant not run here the kept result of its function as it is today: after a
    pull, mutmut's own results (older) may lack what another checkout ran since; a kept
    result counts only where its function's hash is the one `refresh` just read."""
    if not _meta(target).exists() or not _kept(target).exists():
        return
    meta = json.loads(_meta(target).read_text())
    kept = json.loads(_kept(target).read_text())
    today = meta["hash_by_function_name"]
    codes = meta["exit_code_by_key"]
    filled = 0
    for mutant, code in codes.items():
        function, number = _order(mutant.removeprefix(target.module + "."))
        known = kept["results"].get(function, {}).get(str(number))
        if (
            code is None
            and known is not None
            and kept["hashes"].get(function) == today.get(function)
        ):
            codes[mutant] = known
            filled += 1
    if filled:
        _meta(target).write_text(json.dumps(meta))


def keep(target: Target) -> None:
    """Write the results of `target` (by function: its hash, each mutant's exit code) to
    benchmarks/mutation_results/, to be committed with the report they make."""
    if not _meta(target).exists():
        return
    meta = json.loads(_meta(target).read_text())
    results: dict[str, dict[str, int]] = {}
    for mutant, code in meta["exit_code_by_key"].items():
        if code is None:
            continue  # not run: nothing to keep
        function, number = _order(mutant.removeprefix(target.module + "."))
        results.setdefault(function, {})[str(number)] = code
    kept = {
        "hashes": dict(sorted(meta["hash_by_function_name"].items())),
        "results": {
            function: dict(sorted(by_number.items(), key=lambda item: int(item[0])))
            for function, by_number in sorted(results.items())
        },
    }
    RESULTS.mkdir(exist_ok=True)
    _kept(target).write_text(json.dumps(kept, indent=0, ensure_ascii=False) + "\n")


def mutated_lines(mutant: str, path: str) -> str:
    """The lines the mutant changes, as mutmut's diff shows them ('-' old, '+' new)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    diff = get_diff_for_mutant(mutant, path=path)
    changed = [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return "\n".join(changed)


def collect(target: Target, equivalents: dict[str, dict[str, str]]) -> FileResult:
    result = FileResult(target)
    if not _meta(target).exists():
        return result
    codes = json.loads(_meta(target).read_text())["exit_code_by_key"]
    for mutant, code in sorted(codes.items(), key=lambda item: _order(item[0])):
        if not target.counts(mutant):
            continue
        if code in KILLED:
            result.killed += 1
        elif code in SURVIVED:
            result.survivors.append(mutant)
        elif code in NO_TESTS:
            result.untested.append(mutant)
        else:
            result.unchecked.append(mutant)
    for mutant in result.survivors + result.untested:
        entry = equivalents.get(mutant)
        if entry and entry.get("change", "").strip() == mutated_lines(mutant, target.path).strip():
            result.equivalent[mutant] = entry["why"]
    return result


def entry(mutant: str) -> str:
    """A mutation_equivalents.toml entry for `mutant`, its reason left to write."""
    target = next(t for t in TARGETS if mutant.startswith(t.module + "."))
    change = mutated_lines(mutant, target.path)
    return f"[\"{mutant}\"]\nchange = '''\n{change}'''\nwhy = \"\"\n"


def _order(mutant: str) -> tuple[str, int]:
    function, _, number = mutant.rpartition("__mutmut_")
    return function, int(number) if number.isdigit() else 0


def report(results: list[FileResult]) -> str:
    lines = [
        "# Mutation score of the safety rules",
        "",
        "Written by `./scripts/mutation` (benchmarks/mutation.py, mutmut; docs/mutation.md).",
        "Score: killed among the mutants that change behaviour; raw: killed among all; a "
        "mutant not run yet counts as not killed. A "
        "survivor counts as equivalent only while it is listed in "
        "benchmarks/mutation_equivalents.toml with the same changed line and a reason.",
        "",
        "| file | mutants | killed | survived | no test | not run | equivalent | raw % | score % |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        name = r.target.path + (" (gate part)" if r.target.functions else "")
        lines.append(
            f"| {name} | {r.total} | {r.killed} | {len(r.survivors)} | {len(r.untested)} "
            f"| {len(r.unchecked)} | {len(r.equivalent)} | {r.raw_score:.1f} | {r.score:.1f} |"
        )
    for r in results:
        left = [m for m in r.survivors + r.untested if m not in r.equivalent]
        if not left and not r.equivalent:
            continue
        lines += ["", f"## {r.target.path}", ""]
        for mutant in left:
            kind = "survived" if mutant in r.survivors else "no test runs it"
            lines += [f"- `{mutant}` — {kind}", "  ```diff"]
            lines += [f"  {line}" for line in mutated_lines(mutant, r.target.path).splitlines()]
            lines += ["  ```"]
        for mutant, why in r.equivalent.items():
            lines.append(f"- `{mutant}` — equivalent: {why}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/mutation", description=__doc__)
    parser.add_argument("files", nargs="*", help="targets by short name (keys, mcp_gate, loop…)")
    parser.add_argument("--report", action="store_true", help="only write the report")
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="run only the mutants that survived, had no test or were not run yet (new, or "
        "their function changed: mutmut keeps a result only while its function is unchanged)",
    )
    parser.add_argument(
        "--equivalent", metavar="MUTANT", help="print an equivalents entry to fill in for MUTANT"
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="forget the chosen files' kept results (benchmarks/mutation_results) and mutmut's "
        "own, and run every mutant again",
    )
    options = parser.parse_args(argv)
    by_name = {target.name: target for target in TARGETS}
    unknown = [name for name in options.files if name not in by_name]
    if unknown:
        parser.error(f"unknown target {', '.join(unknown)}; one of {', '.join(by_name)}")
    chosen = [by_name[name] for name in options.files] or list(TARGETS)
    os.chdir(ROOT)  # mutmut reads pyproject.toml and mutants/ from the working directory
    if options.equivalent:
        print(entry(options.equivalent))
        return 0
    if options.fresh:
        for target in chosen:
            _meta(target).unlink(missing_ok=True)
            _kept(target).unlink(missing_ok=True)
    for target in TARGETS:
        restore(target)
    if not options.report:
        # mutmut maps tests to the functions they reach once, and afterwards only for new
        # tests: code moved to another file (core/loop.py to core/gate.py) or a test that now
        # reaches a function it did not would be read with the old map ("no test runs it", or
        # a survivor the tests would kill). One test run maps them afresh; results kept.
        (ROOT / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
        for target in chosen:
            refresh(target)
            fill(target)
            again = None
            if options.survivors and (ROOT / "mutants" / target.path).exists():
                last = collect(target, {})
                again = last.survivors + last.untested + last.unchecked
                if not again:
                    continue
            if code := run(target, again):
                print(f"mutation: mutmut failed on {target.path} (exit {code})", file=sys.stderr)
                return code
    for target in TARGETS:
        refresh(target)
        fill(target)
        keep(target)
    equivalents = tomllib.loads(EQUIVALENTS.read_text()) if EQUIVALENTS.exists() else {}
    results = [collect(target, equivalents) for target in TARGETS]
    REPORT.write_text(report(results))
    below = [r for r in results if r.total and r.score < BAR]
    for r in results:
        if r.total:
            print(f"mutation: {r.target.path}: {r.score:.1f} % ({r.killed}/{r.total} killed)")
    print(f"mutation: report in {REPORT.relative_to(ROOT)}")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
