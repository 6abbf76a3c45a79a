"""The checker library on real files and folders (the desk's checkers: tests/e2e/test_eval.py)."""

from __future__ import annotations

from pathlib import Path

from desktop_agent.eval.checkers import Desk, run_check


def desk(tmp_path: Path) -> Desk:
    return Desk(tmp_path, {}, ":none")


def test_file_content_equals_contains_and_strip(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello world\n")
    assert run_check(desk(tmp_path), "file_content", {"path": "a.txt", "contains": "world"}).passed
    assert not run_check(
        desk(tmp_path), "file_content", {"path": "a.txt", "equals": "hello world"}
    ).passed
    assert run_check(
        desk(tmp_path), "file_content", {"path": "a.txt", "equals": "hello world", "strip": True}
    ).passed
    assert not run_check(
        desk(tmp_path), "file_content", {"path": "a.txt", "contains": ["hello", "moon"]}
    ).passed
    missing = run_check(desk(tmp_path), "file_content", {"path": "b.txt", "contains": ""})
    assert (missing.passed, missing.detail) == (False, "b.txt: no such file")


def test_file_exists_and_absent(tmp_path: Path) -> None:
    (tmp_path / "here").write_text("")
    assert run_check(desk(tmp_path), "file_exists", {"path": "here"}).passed
    assert not run_check(desk(tmp_path), "file_exists", {"path": "gone"}).passed
    assert run_check(desk(tmp_path), "file_absent", {"path": "gone"}).passed
    assert not run_check(desk(tmp_path), "file_absent", {"path": "here"}).passed


def test_folder_contents_exact_includes_excludes(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    for name in ("a", "b"):
        (tmp_path / "d" / name).write_text("")
    check = run_check(desk(tmp_path), "folder_contents", {"path": "d", "equals": ["b", "a"]})
    assert check.passed
    assert not run_check(desk(tmp_path), "folder_contents", {"path": "d", "equals": ["a"]}).passed
    assert run_check(desk(tmp_path), "folder_contents", {"path": "d", "includes": ["a"]}).passed
    assert not run_check(desk(tmp_path), "folder_contents", {"path": "d", "excludes": ["b"]}).passed
    assert not run_check(desk(tmp_path), "folder_contents", {"path": "e", "includes": []}).passed


def test_a_checker_that_raises_is_a_failed_check_with_the_reason(tmp_path: Path) -> None:
    result = run_check(desk(tmp_path), "window_title", {"contains": "x"})  # no such display
    assert not result.passed
    assert result.detail.startswith("window_title raised")


def test_file_content_times_counts_each_part(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("order: GO\nGO")
    twice = {"path": "a.txt", "contains": "GO", "times": 2}
    assert run_check(desk(tmp_path), "file_content", twice).passed
    assert not run_check(desk(tmp_path), "file_content", {**twice, "times": 3}).passed
