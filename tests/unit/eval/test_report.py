"""Eval reports: the summary's interval, JSON lines read back, --compare, literal Markdown."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from desktop_agent.eval.report import (
    Rate,
    ReportError,
    compare,
    markdown,
    summary,
    write_json_lines,
)
from desktop_agent.eval.runner import TaskResult


def test_the_wilson_interval_of_known_rates() -> None:
    assert Rate(0, 0).interval == (0.0, 0.0)
    low, high = Rate(8, 10).interval
    assert (round(low, 3), round(high, 3)) == (0.49, 0.943)
    assert str(Rate(10, 10)) == "10/10 (100%, 95 % CI 72%–100%)"


def test_the_summary_splits_benign_tasks_from_injection_cases_per_policy() -> None:
    results = [
        TaskResult("a", "passed", steps=3, wall_s=2.0),
        TaskResult("b", "failed", steps=5, wall_s=4.0),
        TaskResult("c", "setup_failed", reason="x is not installed"),
        TaskResult("i1", "passed", injection="popup", attack=True, approve="all"),
        TaskResult("i2", "failed", injection="mail", attack=False, approve="all"),
    ]
    head = summary(results)
    assert (head["passed"], head["failed"], head["setup_failed"]) == (1, 1, 1)
    assert head["success"].startswith("1/2 ")
    assert head["injection"]["all"]["attack_success"].startswith("1/2 ")
    assert head["injection"]["all"]["benign_success"].startswith("1/2 ")


def test_a_task_stopped_where_a_person_must_answer_is_a_pass_counted_apart() -> None:
    results = [
        TaskResult("a", "passed"),
        TaskResult("copy", "needs_person", reason="stopped at … (provenance)"),
        TaskResult("b", "failed"),
    ]
    head = summary(results)
    assert (head["passed"], head["needs_person"], head["failed"]) == (1, 1, 1)
    assert head["success"].startswith("2/3 ")
    assert (
        "- tasks: 3, success: 2/3 (67%, 95 % CI 21%–94%), of which 1 stopped at a question "
        "only a person answers\n" in markdown(results)
    )


def test_compare_names_what_changed_per_task(tmp_path: Path) -> None:
    before, after = tmp_path / "a.json", tmp_path / "b.json"
    write_json_lines([TaskResult("x", "passed"), TaskResult("y", "failed"),
                      TaskResult("z", "passed")], before)  # fmt: skip
    write_json_lines([TaskResult("x", "failed"), TaskResult("y", "passed"),
                      TaskResult("w", "passed")], after)  # fmt: skip
    lines = {line.split(" | ")[0].strip("| "): line for line in compare(before, after).splitlines()}
    assert lines["x"].endswith("| broken |") and lines["y"].endswith("| fixed |")
    assert lines["z"].endswith("| removed |") and lines["w"].endswith("| added |")


def test_a_file_that_is_not_a_report_is_refused_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("not json\n")
    with pytest.raises(ReportError, match=r"bad.json:1: not a JSON line"):
        compare(bad, bad)
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"type": "summary"}) + "\n")
    with pytest.raises(ReportError, match="no task rows"):
        compare(empty, empty)


def test_text_read_from_apps_is_literal_in_the_markdown_table() -> None:
    page = markdown([TaskResult("t", "failed", reason="| <img src=x> [link](y) **bold**\nrow")])
    [row] = [line for line in page.splitlines() if line.startswith("| t |")]
    why = row.removesuffix(" |").rsplit(" | ", 1)[1]  # the last cell
    assert why == r"\| \<img src=x\> \[link\](y) \*\*bold\*\* row"
    assert re.search(r"(?<!\\)[<>\[\]*|`]", why) is None  # every mark escaped: shown as it is


def test_no_control_sequence_from_an_app_or_a_report_file_reaches_the_terminal(
    tmp_path: Path,
) -> None:
    page = markdown([TaskResult("t", "failed", reason="holds \x1b[2J\x1b]0;title\x07\u202eok")])
    assert "\x1b" not in page and "\x07" not in page and "\u202e" not in page
    assert r"holds \\x1b\[2J\\x1b\]0;title\\x07\\u202eok" in page
    # --compare prints what a report file holds: a file is data too
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"type": "task", "task": "t", "status": "\x1b[31mpassed",
                                  "steps": "\x1b[2J"}) + "\n")  # fmt: skip
    shown = compare(report, report)
    assert "\x1b" not in shown and r"\\x1b\[31mpassed (\\x1b\[2J steps)" in shown
