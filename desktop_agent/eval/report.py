"""Eval reports: JSON lines for machines, a Markdown page for people, and two runs compared."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_agent.core.text import printable
from desktop_agent.eval.runner import TaskResult


class ReportError(ValueError):
    """A report file that cannot be read; str() is one line."""


@dataclass(frozen=True)
class Rate:
    hits: int
    total: int

    @property
    def interval(self) -> tuple[float, float]:
        """The Wilson score interval at 95 %."""
        if not self.total:
            return 0.0, 0.0
        z, n, p = 1.96, self.total, self.hits / self.total
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return max(0.0, centre - half), min(1.0, centre + half)

    def __str__(self) -> str:
        if not self.total:
            return "–"
        low, high = self.interval
        return (
            f"{self.hits}/{self.total} ({self.hits / self.total:.0%}, 95 % CI {low:.0%}–{high:.0%})"
        )


def passed(result: TaskResult) -> bool:
    """A pass of the suite: the checks passed, or the run stopped where a person must answer."""
    return result.status in ("passed", "needs_person")


def summary(results: Sequence[TaskResult]) -> dict[str, Any]:
    """Success rate, medians, and per approval policy the injection figures."""
    ran = [r for r in results if r.status != "setup_failed"]
    benign = [r for r in ran if not r.injection]
    injected = [r for r in ran if r.injection]
    body: dict[str, Any] = {
        "type": "summary",
        "tasks": len(results),
        "passed": sum(r.status == "passed" for r in benign),
        # stopped at the question only a person answers, as the task must be under a
        # blanket approval: a pass, counted apart
        "needs_person": sum(r.status == "needs_person" for r in benign),
        "failed": sum(r.status == "failed" for r in benign),
        "setup_failed": sum(r.status == "setup_failed" for r in results),
        "success": str(Rate(sum(passed(r) for r in benign), len(benign))),
        "median_steps": statistics.median([r.steps for r in ran]) if ran else None,
        "median_wall_s": statistics.median([r.wall_s for r in ran]) if ran else None,
        "questions": sum(r.questions for r in ran),
        "denied": sum(r.denied for r in ran),
        "injection": {},
    }
    for policy in sorted({r.approve for r in injected}):
        cases = [r for r in injected if r.approve == policy]
        body["injection"][policy] = {
            "cases": len(cases),
            "attack_success": str(Rate(sum(bool(r.attack) for r in cases), len(cases))),
            "benign_success": str(Rate(sum(r.status == "passed" for r in cases), len(cases))),
        }
    return body


def write_json_lines(results: Sequence[TaskResult], path: Path) -> None:
    lines = [json.dumps({"type": "task", **r.as_json()}) for r in results]
    lines.append(json.dumps(summary(results)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _cell(text: Any) -> str:
    # task results carry text read from apps and files: shown literally, never as markup, and
    # no control sequence reaches the terminal the page is printed on
    value = printable(str(text)).replace("\\", "\\\\").replace("|", "\\|")
    for mark in "`*_[]<>#":
        value = value.replace(mark, "\\" + mark)
    return value


def markdown(results: Sequence[TaskResult]) -> str:
    """A page for people: the summary, one row per task, the injection figures."""
    head = summary(results)
    lines = [
        "# desktop-agent eval",
        "",
        f"- tasks: {head['tasks']}, success: {head['success']}"
        + (
            f", of which {head['needs_person']} stopped at a question only a person answers"
            if head["needs_person"]
            else ""
        ),
        f"- setup failed: {head['setup_failed']}; median steps {head['median_steps']}, "
        f"median wall time {head['median_wall_s']} s; questions {head['questions']} "
        f"(denied {head['denied']})",
        "",
        "| task | status | steps | wall s | model s | tokens | questions | stop | why |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        tokens = r.prompt_tokens + r.completion_tokens
        why = r.reason if r.status != "passed" else ""  # needs_person: which question
        if r.failed_step:
            why += f" (step {r.failed_step.get('index')}: {r.failed_step.get('error') or ''})"
        lines.append(
            f"| {_cell(r.task)} | {r.status} | {r.steps} | {r.wall_s} | {r.model_s:.1f} | "
            f"{tokens} | {r.questions} | {_cell(r.stop_reason)} | {_cell(why)} |"
        )
    if head["injection"]:
        lines += [
            "",
            "## Injection cases",
            "",
            "| policy | cases | attack success | benign success |",
            "|---|---|---|---|",
        ]
        for policy, figures in head["injection"].items():
            lines.append(
                f"| {policy} | {figures['cases']} | {figures['attack_success']} | "
                f"{figures['benign_success']} |"
            )
        lines += ["", "| case | style | attack | benign |", "|---|---|---|---|"]
        for r in results:
            if r.injection:
                attack = "succeeded" if r.attack else "failed"
                lines.append(f"| {_cell(r.task)} | {_cell(r.injection)} | {attack} | {r.status} |")
    return "\n".join(lines) + "\n"


def read_results(path: Path) -> dict[str, dict[str, Any]]:
    """The task rows of a JSON lines report, by task id (the last row of a repeated task)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ReportError(f"{path}: cannot read it: {error.strerror or error}") from None
    rows: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise ReportError(f"{path}:{number}: not a JSON line of an eval report") from None
        if isinstance(row, dict) and row.get("type") == "task" and isinstance(row.get("task"), str):
            rows[row["task"]] = row
    if not rows:
        raise ReportError(f"{path}: no task rows (is it an eval --report file?)")
    return rows


def compare(before: Path, after: Path) -> str:
    """Per task: the status (and steps) in each run, and what changed."""
    old, new = read_results(before), read_results(after)
    lines = [f"| task | {_cell(before.name)} | {_cell(after.name)} | change |", "|---|---|---|---|"]
    for task in sorted(set(old) | set(new)):
        a, b = old.get(task), new.get(task)
        # a report file is data: its values are shown as cells, whatever they hold
        was = _cell(f"{a.get('status')} ({a.get('steps')} steps)") if a else "–"
        now = _cell(f"{b.get('status')} ({b.get('steps')} steps)") if b else "–"
        change = _change(a, b)
        lines.append(f"| {_cell(task)} | {was} | {now} | {change} |")
    return "\n".join(lines) + "\n"


def _change(a: dict[str, Any] | None, b: dict[str, Any] | None) -> str:
    if a is None or b is None:
        return "added" if a is None else "removed"
    if a["status"] != b["status"]:
        return (
            "fixed"
            if b["status"] == "passed"
            else "broken"
            if a["status"] == "passed"
            else "changed"
        )
    if a.get("attack") != b.get("attack"):
        return "attack blocked" if not b.get("attack") else "attack now succeeds"
    return "same"


def rows(results: Iterable[TaskResult]) -> list[dict[str, Any]]:
    return [r.as_json() for r in results]
